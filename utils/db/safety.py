"""Statement safety: exactly one read-only SELECT/WITH statement, checked by DuckDB's own parser, that
reads only the database's data.

``check_sql`` also walks the statement's serialized AST (``sql.ast``) and refuses what describes the
server rather than the data: DuckDB's system and metadata functions and views (``duckdb_*``,
``pragma_*``, ``current_setting``, ``information_schema``, ``pg_catalog``: they print the database's
absolute path, ``allowed_directories`` and every setting), table functions other than the row
generators (``query()`` runs SQL text, ``read_csv`` & co. read files) and file paths used as tables.
duckask's own introspection never goes through here.

This is one of two layers. The other is the connection itself (see ``duckask.utils.db.database``):
read-only, ``enable_external_access=false`` (no file or network reads such as read_csv or
read_text), ``lock_configuration=true`` (no SET), a memory limit, a wall-clock timeout and a row cap.
"""
from __future__ import annotations

from collections.abc import Collection

import duckdb

from duckask.utils.sql.reads import TableRef, resolve


class UnsafeSQLError(ValueError):
    """The statement was refused; the message says why."""


_ALLOWED = {duckdb.StatementType.SELECT}

#: The table functions a query may read from: row generators and unnesting. Every other one reads files,
#: runs SQL text (``query``), or describes the server.
TABLE_FUNCTIONS = {"range", "generate_series", "unnest", "json_each", "json_tree"}
#: Scalar functions that read the server's settings, variables, secrets or the running statement.
SERVER_FUNCTIONS = {"current_setting", "getvariable", "current_query", "which_secret", "json_execute_serialized_sql"}
SERVER_PREFIXES = ("duckdb_", "pragma_")                      # functions and views of the server
SYSTEM_PREFIXES = (*SERVER_PREFIXES, "sqlite_", "pg_")          # views of the catalog
SYSTEM_SCHEMAS = {"information_schema", "pg_catalog"}
SYSTEM_CATALOGS = {"system", "temp"}                           # DuckDB's built-in catalogs
_FILE_SUFFIXES = (".csv", ".tsv", ".txt", ".parquet", ".json", ".jsonl", ".ndjson", ".gz", ".zst", ".xlsx",
                  ".db", ".duckdb", ".sqlite", ".arrow")
_WHY = "which describes the DuckDB server (its files, settings or catalog), not the data; query the database's tables"


def server_function(name: str) -> bool:
    """Whether ``name`` (lower-case) is one of DuckDB's functions that describe the server."""
    return name in SERVER_FUNCTIONS or name.startswith(SERVER_PREFIXES)


def reads_server(sql: str, user_tables: Collection[str] = ()) -> str | None:
    """Why the statement reaches past the data (a refusal message), or None. ``user_tables`` (lower-case)
    are the database's own tables and views, which stay readable whatever their names. What the statement
    reads comes from ``sql.reads`` (CTEs resolved by scope): a CTE hides a name only where it is in scope,
    so ``WITH duckdb_databases AS (...)`` beside a real ``duckdb_databases`` does not hide it."""
    reads = resolve(sql)
    if reads is None:
        return None      # not a SELECT DuckDB can serialize: check_sql's statement check and the executor decide
    for fn in reads.table_functions:
        if server_function(fn):
            return f"refused: {fn}() is a system function, {_WHY}"
        if fn not in TABLE_FUNCTIONS:
            what = "reads files" if fn.startswith(("read_", "parquet_", "sniff_", "glob")) else (
                "runs SQL text" if fn in ("query", "query_table") else "is not a row generator")
            return (f"refused: the table function {fn}() {what}; a query reads the database's tables and "
                    f"at most the generators {', '.join(f + '()' for f in sorted(TABLE_FUNCTIONS))}")
    for fn in reads.functions:
        if server_function(fn):
            return f"refused: {fn}() reads the server's settings or state, {_WHY}"
    for ref in reads.tables:
        why = system_table(ref, user_tables)
        if why:
            return why
    return None


def system_table(ref: TableRef, user_tables: Collection[str] = ()) -> str | None:
    """Why reading ``ref`` reaches past the data (a system view, a system catalog, a file), or None."""
    if ref.schema in SYSTEM_SCHEMAS or ref.catalog in SYSTEM_SCHEMAS:
        return f"refused: {ref} is a system view, {_WHY}"
    if ref.catalog in SYSTEM_CATALOGS or (not ref.catalog and ref.schema in SYSTEM_CATALOGS):
        return f"refused: {ref} is in DuckDB's {ref.catalog or ref.schema} catalog, {_WHY}"
    if ref.name in user_tables:
        return None
    if "/" in ref.name or "\\" in ref.name or ref.name.endswith(_FILE_SUFFIXES):
        return f"refused: '{ref.name}' is a file, and only the database's own tables may be read"
    if ref.name.startswith(SYSTEM_PREFIXES):
        return f"refused: {ref} is a system view, {_WHY}"
    return None


def check_sql(sql: str, user_tables: Collection[str] = ()) -> str:
    """Return the single statement's text (trailing ';' removed) or raise UnsafeSQLError.
    ``user_tables``: the database's own table names (lower-case), readable whatever their names."""
    if sql is None or not sql.strip():
        raise UnsafeSQLError("refused: the query is empty")
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as e:
        raise UnsafeSQLError(f"refused: the query does not parse: {str(e).splitlines()[0]}") from e
    if len(statements) == 0:
        raise UnsafeSQLError("refused: the query holds no statement")
    if len(statements) > 1:
        kinds = ", ".join(s.type.name for s in statements)
        raise UnsafeSQLError(f"refused: exactly one statement is allowed, got {len(statements)} ({kinds})")
    st = statements[0]
    if st.type not in _ALLOWED:
        raise UnsafeSQLError(
            f"refused: only read-only SELECT/WITH queries are allowed, this is a {st.type.name} statement"
        )
    text = st.query.strip()
    while text.endswith(";"):
        text = text[:-1].rstrip()
    why = reads_server(text, user_tables)
    if why:
        raise UnsafeSQLError(why)
    return text
