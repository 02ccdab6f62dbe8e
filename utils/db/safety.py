"""Statement safety: exactly one read-only SELECT/WITH statement, checked by DuckDB's own parser, that
reads only the database's data.

``check_sql`` also walks the statement's serialized AST (``db.ast``) and refuses what describes the
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

from typing import Protocol

import duckdb

from duckask.utils.db.binder import Bound
from duckask.utils.db.errors import UnsafeSQLError
from duckask.utils.db.quoting import quote_ident
from duckask.utils.db.reads import TableRef, resolve

_ALLOWED = {duckdb.StatementType.SELECT}

#: The table functions a query may read from: row generators and unnesting. Every other one reads files,
#: runs SQL text (``query``), or describes the server.
TABLE_FUNCTIONS = {"range", "generate_series", "unnest", "json_each", "json_tree"}
#: Scalar functions that read the server's settings, variables, secrets or the running statement.
SERVER_FUNCTIONS = {"current_setting", "getvariable", "current_query", "which_secret", "json_execute_serialized_sql"}
SERVER_PREFIXES = ("duckdb_", "pragma_")                      # functions and views of the server
SYSTEM_PREFIXES = (*SERVER_PREFIXES, "sqlite_", "pg_")          # views of the catalog
SYSTEM_SCHEMAS = {"information_schema", "pg_catalog"}
#: The most characters (or list elements) one call of a maker (``reads.MAKERS``: repeat, lpad, range, ...) may make.
MOST_MADE = 100_000
SYSTEM_CATALOGS = {"system", "temp"}                           # DuckDB's built-in catalogs
_FILE_SUFFIXES = (".csv", ".tsv", ".txt", ".parquet", ".json", ".jsonl", ".ndjson", ".gz", ".zst", ".xlsx",
                  ".db", ".duckdb", ".sqlite", ".arrow")
_WHY = "which describes the DuckDB server (its files, settings or catalog), not the data; query the database's tables"


def server_function(name: str) -> bool:
    """Whether ``name`` (lower-case) is one of DuckDB's functions that describe the server."""
    return name in SERVER_FUNCTIONS or name.startswith(SERVER_PREFIXES)


class Scope(Protocol):
    """What the guard binds a statement on: the database's connection (``Database``), or a model build's."""
    catalog: str                                   # the database's own catalog, folded

    def bind(self, sql: str) -> Bound | None: ...


def reads_server(sql: str, scope: Scope | None = None) -> str | None:
    """Why the statement reaches past the data (a refusal message), or None.

    Twice, from structure only. DuckDB's parse (``db.reads``: CTEs resolved by scope, so ``WITH
    duckdb_databases AS (...)`` beside a real ``duckdb_databases`` does not hide it) refuses the system and
    metadata functions, other table functions, system schemas and catalogs, and file paths. Then, with a
    ``scope``, DuckDB's binder (``binder.bind``) says what each name resolves to: every scan must be of the
    database's own catalog and every table function a row generator, so ``duckdb_databases`` is refused even
    where some schema holds a user table of that name, and ``airtable.duckdb_databases`` (that user table) is
    read. A bare name that looks like a system view (``pg_settings``) is read only when the binder resolves it
    to a table or view of the database's own; without a scope it is refused."""
    reads = resolve(sql)
    if reads is None:
        return None      # not a SELECT DuckDB can serialize: check_sql's statement check and the executor decide
    if reads.writes:
        return modifies(reads.writes[0][0], str(reads.writes[0][1]))
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
    for fn, count in reads.made:
        if count is None or count > MOST_MADE:
            said = "a count that is not a constant" if count is None else f"a count of {count:,}"
            return (f"refused: {fn}() with {said}: one call may make at most {MOST_MADE:,} characters or elements "
                    "(DuckDB makes a value for every row of a batch at once, before a row is fetched); write the count "
                    "as a number up to that")
    for ref in reads.tables:        # a name as written first: its refusal names what the statement said
        why = system_table(ref, scope)
        if why:
            return why
    bound = scope.bind(sql) if scope is not None else None
    if bound is None or scope is None:
        return None
    return outside_data(bound, scope.catalog, shows_data=all(_is_data(scope, ref) for ref in reads.shown))


def _is_data(scope: Scope, ref: TableRef) -> bool:
    """Whether ``ref``, as written, resolves to a table or view of the database's own (the binder's answer for
    ``SELECT * FROM ref`` on the same search path; a CTE in scope never reaches here, ``db.reads`` leaves it
    out)."""
    name = ".".join(quote_ident(p) for p in (ref.catalog, ref.schema, ref.name) if p)
    bound = scope.bind(f"SELECT * FROM {name}")
    return bound is not None and outside_data(bound, scope.catalog) is None


def modifies(verb: str, table: str) -> str:
    """The refusal of a read that holds a write (a data-modifying ``WITH``: DuckDB runs it even where nothing reads
    its result)."""
    verb = verb.replace("_", " ")
    article = "an" if verb[:1] in "AEIOU" else "a"
    return (f"refused: this runs {article} {verb} on {table} inside the query (a data-modifying WITH); a "
            "question only reads: send a change as a write of its own, which shows it on a card for approval")


def outside_data(bound: Bound, catalog: str, shows_data: bool = False) -> str | None:
    """Why a bound statement reads past the database's own tables (a system view or function, another
    catalog, a write the binder found inside it), or None. ``shows_data``: the statement is ``SHOW t`` of a table of
    the database's own (DuckDB binds it to ``pragma_show``, which describes that table's columns, as DESCRIBE does)."""
    if bound.writes:
        return modifies(*bound.writes[0])
    for path in sorted(bound.functions):
        name = path[-1]
        if shows_data and path == ("system", "main", "pragma_show"):
            continue
        if name not in TABLE_FUNCTIONS or (len(path) > 1 and path[:2] != ("system", "main")):
            return f"refused: {'.'.join(path)} is a system view, {_WHY}"
    for table in sorted(bound.tables):
        if table[0] != catalog:
            return f"refused: {'.'.join(table)} is in DuckDB's {table[0]} catalog, {_WHY}"
    return None


def system_table(ref: TableRef, scope: Scope | None = None) -> str | None:
    """Why reading ``ref`` reaches past the data (a system view, a system catalog, a file), or None. A name that
    only looks like a system view (``pg_teams``) passes when the binder resolves it, as written, to a table or
    view of the database's own (``_is_data``); without a ``scope`` it is refused."""
    if ref.schema in SYSTEM_SCHEMAS or ref.catalog in SYSTEM_SCHEMAS:
        return f"refused: {ref} is a system view, {_WHY}"
    if ref.catalog in SYSTEM_CATALOGS or (not ref.catalog and ref.schema in SYSTEM_CATALOGS):
        return f"refused: {ref} is in DuckDB's {ref.catalog or ref.schema} catalog, {_WHY}"
    if "/" in ref.name or "\\" in ref.name or ref.name.endswith(_FILE_SUFFIXES):
        return f"refused: '{ref.name}' is a file, and only the database's own tables may be read"
    if ref.name.startswith(SYSTEM_PREFIXES) and (scope is None or not _is_data(scope, ref)):
        return f"refused: {ref} is a system view, {_WHY}"
    return None


def check_sql(sql: str, scope: Scope | None = None) -> str:
    """Return the single statement's text (trailing ';' removed) or raise UnsafeSQLError. ``scope``: the
    database the statement runs on, whose binder says what each name resolves to (``reads_server``)."""
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
    why = reads_server(text, scope)
    if why:
        raise UnsafeSQLError(why)
    return text
