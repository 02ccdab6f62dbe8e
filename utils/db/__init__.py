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
- the write path's parts: ``tiers`` (T0-T3 classification), ``write_plan`` (estimates and plain explanations),
  ``write_card`` (``WriteCard``: the card every surface shows, its status, summary and JSON) and ``audit`` (the
  log of every attempt: who proposed, who decided); proposing and deciding (``state.writes``) sit above, beside
  the audit's shared storage;
- ``remote``: postgres://, mysql:// and md: databases read through DuckDB's extensions into a cached
  copy (``kind_of``, ``redact``: never a password in a message);
- ``airtable_api`` (pyairtable: an Airtable base's schema and records, errors said clearly), ``airtable_schema``
  (field types → DuckDB, join tables, what an import was), ``airtable_load`` (the records into those tables: the
  full build, a refresh's changes); ``duckask import airtable`` itself, which also drafts the semantic file, is
  ``semantic.airtable`` (above this package);
- ``access``: users with hashed API keys and roles (reader, proposer, approver, admin), four eyes,
  per-role read allowlists (``ScopedDatabase``), for a shared server.
"""
