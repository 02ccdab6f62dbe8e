"""Database access: opening a database locked down for untrusted SQL, and building one from data.

- ``database``: ``open_database`` and ``Database.run`` (timeout, row cap, ``QueryOutcome``), with
  ``sources`` (``resolve_db_file``: the DuckDB file behind a file, folder, SQLite file or connection string);
- ``safety``: ``check_sql``, the one-read-only-statement allowlist (DuckDB's own parser), and
  ``reads_server`` (system views and functions, files); ``ast`` (DuckDB's own parse of a statement, walked)
  and ``reads`` (what a statement reads, CTEs resolved by scope), which the checks above use;
- ``importer``: ``import_source`` (CSV/TSV/Parquet folders or files, SQLite) → a DuckDB file, with
  ``sqlite_source`` (reading SQLite through sqlite3) and ``table_builder`` (keys, comments);
- ``quoting``: identifiers and literals in SQL that duckask writes itself;
- ``models``: a semantic directory's dbt-style model files (``ref``/``source``), built as views in duckask's
  own session, never in the user's file;
- ``remote``: postgres://, mysql:// and md: databases read through DuckDB's extensions into a cached
  copy (``kind_of``, ``redact``: never a password in a message);
- ``adbc_source``: a database read through an ADBC driver into that cached copy; ``live``, ``live_catalog`` and
  ``live_sql``: a source asked live (its engine, the facts read in it, the SQL written in its dialect).

Who may read what (``access``), the write path (``writes``) and Airtable's client (``airtable``) are packages of
their own above this one.
"""

