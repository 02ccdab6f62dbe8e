"""Reading a database through an Apache Arrow ADBC driver into a DuckDB file: Postgres for real, and the
same code for every ADBC driver (SQLite's here; Snowflake, BigQuery and Flight SQL where installed).

The structure comes from ADBC's own catalog call (``adbc_get_objects``: tables, views, columns, primary and
foreign keys, column comments), so one code path serves every driver; a driver's ``Dialect`` adds only what
that call lacks (Postgres: table comments, numeric precision, enum labels). Each table is read with one
``SELECT *`` as a stream of Arrow record batches that DuckDB inserts as they come (memory stays bounded).

Types: DuckDB's own Arrow mapping (timestamptz → TIMESTAMPTZ, arrays → lists, uuid → UUID, interval,
bytea → BLOB), plus: numeric(p,s) → DECIMAL(p,s) (p ≤ 38, else DOUBLE; unbounded numeric → DOUBLE),
json/jsonb → JSON, an enum → a DuckDB ENUM of its labels, any other type Arrow cannot carry → VARCHAR.
Names: a table of the default schema (Postgres ``public``) keeps its name; one of another schema becomes
``<schema>_<table>``; two names DuckDB cannot tell apart (case) are a clear error, never a silent merge.
Foreign keys become DuckDB constraints where DuckDB can hold them (the referenced table read first, with
its key), else the column's comment says ``references t(c)``.
"""
from __future__ import annotations

import fnmatch
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import duckdb
import pyarrow as pa

from duckask.utils.db.quoting import quote_ident as _q
from duckask.utils.db.quoting import quote_literal as _lit


@dataclass(frozen=True)
class Dialect:
    """One ADBC driver: its module, how a URL becomes connect() arguments, and its system schemas."""
    scheme: str
    module: str
    pip: str
    default_schemas: tuple[str, ...] = ("", "main")
    system_schemas: tuple[str, ...] = ("information_schema",)
    connect_args: Callable[[str], dict[str, Any]] = lambda url: {"uri": url}


def _sqlite_args(url: str) -> dict[str, Any]:
    path = url.split("://", 1)[1]
    return {"uri": f"file:{path}?mode=ro"}


def _bigquery_args(url: str) -> dict[str, Any]:
    project, _, dataset = url.split("://", 1)[1].partition("/")
    kwargs = {"adbc.bigquery.sql.project_id": project}
    if dataset:
        kwargs["adbc.bigquery.sql.dataset_id"] = dataset
    return {"db_kwargs": kwargs}


DIALECTS = {
    "postgresql": Dialect("postgresql", "adbc_driver_postgresql", "adbc-driver-postgresql",
                          default_schemas=("public",),
                          system_schemas=("information_schema", "pg_catalog", "pg_toast*", "pg_temp*")),
    "sqlite": Dialect("sqlite", "adbc_driver_sqlite", "adbc-driver-sqlite", connect_args=_sqlite_args),
    "snowflake": Dialect("snowflake", "adbc_driver_snowflake", "adbc-driver-snowflake",
                         default_schemas=("PUBLIC",), system_schemas=("INFORMATION_SCHEMA",),
                         connect_args=lambda url: {"uri": url.split("://", 1)[1]}),
    "bigquery": Dialect("bigquery", "adbc_driver_bigquery", "adbc-driver-bigquery",
                        system_schemas=("INFORMATION_SCHEMA",), connect_args=_bigquery_args),
    "flightsql": Dialect("flightsql", "adbc_driver_flightsql", "adbc-driver-flightsql",
                         connect_args=lambda url: {"uri": url.split("flightsql+", 1)[-1]}),
}
#: URL prefix -> dialect name
PREFIXES = {"postgresql://": "postgresql", "postgres://": "postgresql", "sqlite://": "sqlite",
            "snowflake://": "snowflake", "bigquery://": "bigquery", "flightsql+grpc://": "flightsql",
            "flightsql+grpc+tls://": "flightsql"}


def dialect_of(url: str) -> Dialect | None:
    low = url.strip().lower()
    return next((DIALECTS[d] for p, d in PREFIXES.items() if low.startswith(p)), None)


def driver(dialect: Dialect):
    """The dialect's ``dbapi`` module, or None when its package is not installed."""
    try:
        return importlib.import_module(f"{dialect.module}.dbapi")
    except ImportError:
        return None


def connect(url: str, dialect: Dialect, autocommit: bool = False):
    args = dialect.connect_args(url)
    if dialect.scheme == "postgresql" and url.lower().startswith("postgres://"):
        args = {"uri": "postgresql://" + url.split("://", 1)[1]}     # libpq takes both; be explicit
    return driver(dialect).connect(**args, autocommit=autocommit)


@dataclass
class Column:
    name: str
    source_type: str
    comment: str = ""
    duck_type: str | None = None        # decided by the dialect's rules, else from the Arrow schema


@dataclass
class SourceTable:
    schema: str
    name: str                          # in the source
    target: str                        # in DuckDB
    kind: str = "table"
    comment: str = ""
    columns: list[Column] = field(default_factory=list)
    pk: list[str] = field(default_factory=list)
    fks: list[tuple[list[str], str, str, list[str]]] = field(default_factory=list)  # cols, schema, table, ref cols


def _skipped(schema: str, dialect: Dialect) -> bool:
    return any(fnmatch.fnmatch(schema, p) for p in dialect.system_schemas)


def read_structure(conn, dialect: Dialect, only: list[str] | None = None) -> list[SourceTable]:
    """Every table and view of the source (those matching ``only``'s names or globs, when given)."""
    tables: list[SourceTable] = []
    for catalog in conn.adbc_get_objects(depth="all").read_all().to_pylist():
        for sch in catalog["catalog_db_schemas"] or []:
            schema = sch["db_schema_name"] or ""
            if _skipped(schema, dialect):
                continue
            for t in sch["db_schema_tables"] or []:
                name = t["table_name"]
                target = name if schema in dialect.default_schemas else f"{schema}_{name}"
                if only and not any(fnmatch.fnmatch(p, pat) for p in (name, target) for pat in only):
                    continue
                st = SourceTable(schema, name, target, kind=(t["table_type"] or "table").lower())
                st.columns = [Column(c["column_name"], c["xdbc_type_name"] or "", c.get("remarks") or "")
                              for c in sorted(t["table_columns"] or [], key=lambda c: c["ordinal_position"] or 0)]
                for con in t["table_constraints"] or []:
                    if con["constraint_type"] == "PRIMARY KEY":
                        st.pk = list(con["constraint_column_names"])
                    elif con["constraint_type"] == "FOREIGN KEY" and con["constraint_column_usage"]:
                        use = con["constraint_column_usage"]
                        st.fks.append((list(con["constraint_column_names"]), use[0]["fk_db_schema"] or "",
                                       use[0]["fk_table"], [u["fk_column_name"] for u in use]))
                tables.append(st)
    _check_names(tables)
    if dialect.scheme == "postgresql":
        _postgres_details(conn, tables)
    return tables


def _check_names(tables: list[SourceTable]) -> None:
    seen: dict[str, SourceTable] = {}
    for t in tables:
        other = seen.setdefault(t.target.lower(), t)
        if other is not t:
            raise ValueError(f"tables {other.schema}.{other.name} and {t.schema}.{t.name} would both be "
                             f"{t.target!r} in DuckDB (names there ignore case); rename one, or leave one out "
                             "with the source_tables setting")


def _postgres_details(conn, tables: list[SourceTable]) -> None:
    """What ADBC's catalog call lacks on Postgres: table comments, numeric precision, enum labels."""
    by_name = {(t.schema, t.name): t for t in tables}
    cur = conn.cursor()
    try:
        cur.execute("SELECT n.nspname::text, c.relname::text, obj_description(c.oid, 'pg_class') FROM pg_class c "
                    "JOIN pg_namespace n ON n.oid = c.relnamespace "
                    "WHERE obj_description(c.oid, 'pg_class') IS NOT NULL")
        for schema, name, comment in cur.fetchall():
            if (t := by_name.get((schema, name))):
                t.comment = comment
        cur.execute("SELECT table_schema::text, table_name::text, column_name::text, numeric_precision, numeric_scale "
                    "FROM information_schema.columns WHERE data_type = 'numeric'")
        for schema, name, col, precision, scale in cur.fetchall():
            if (t := by_name.get((schema, name))):
                for c in t.columns:
                    if c.name == col:
                        c.duck_type = f"DECIMAL({precision},{scale})" if precision and precision <= 38 else "DOUBLE"
        cur.execute("SELECT t.typname::text, string_agg(quote_literal(e.enumlabel), ', ' ORDER BY e.enumsortorder) "
                    "FROM pg_enum e JOIN pg_type t ON t.oid = e.enumtypid GROUP BY t.typname")
        enums = {name: f"ENUM({labels})" for name, labels in cur.fetchall()}
    finally:
        cur.close()
    for t in tables:
        for c in t.columns:
            if c.source_type in enums:
                c.duck_type = enums[c.source_type]
            elif c.source_type in ("json", "jsonb"):
                c.duck_type = "JSON"
            elif c.source_type == "numeric" and c.duck_type is None:
                c.duck_type = "DOUBLE"


def _declared(c: Column, dialect: Dialect) -> str | None:
    """A type from the declared name where Arrow carries only text (SQLite's dates)."""
    if c.duck_type or dialect.scheme != "sqlite":
        return c.duck_type
    from duckask.utils.db.sqlite_source import sqlite_type_to_duckdb

    mapped = sqlite_type_to_duckdb(c.source_type)
    return mapped if mapped in ("DATE", "TIMESTAMP") else None


def _select_list(duck: duckdb.DuckDBPyConnection, t: SourceTable, schema: pa.Schema, dialect: Dialect):
    """(column definitions, cast expressions) for ``t`` given the Arrow ``schema`` of its rows."""
    rel = duck.from_arrow(pa.Table.from_batches([], schema=schema))
    arrow_types = dict(zip(rel.columns, map(str, rel.types)))
    defs, exprs = [], []
    for c in t.columns:
        col = _q(c.name)
        got = arrow_types.get(c.name, "VARCHAR")
        want = _declared(c, dialect) or got
        if want == "BLOB" and isinstance(schema.field(c.name).type, pa.ExtensionType):
            want = "VARCHAR"          # a type Arrow cannot carry (inet, geometry, ...): its text
        source = f"decode({col})" if got == "BLOB" and want != "BLOB" else col
        defs.append(f"{col} {want}")
        exprs.append(f"TRY_CAST({source} AS {want})" if want.startswith(("DATE", "TIMESTAMP")) and got == "VARCHAR"
                     else f"CAST({source} AS {want})")
    return defs, exprs


def qualified(t: SourceTable) -> str:
    """The table's name as the source reads it (schema-qualified, quoted)."""
    return ".".join(_q(p) for p in (t.schema, t.name) if p)


def copy_tables(conn, dialect: Dialect, tables: list[SourceTable], duck: duckdb.DuckDBPyConnection,
                say: Callable[[str], None] = lambda _m: None, limit: int | None = None) -> dict[str, int]:
    """Read each of ``tables`` into ``duck`` (parents of a foreign key first); returns rows per table. With
    ``limit`` (a live source's catalog), at most that many rows each and no foreign keys (a sample of a child
    need not find its parents in the parent's sample: ``live_catalog.facts`` keeps the references)."""
    rows: dict[str, int] = {}
    keys = {(t.schema, t.name): t for t in tables}
    for t in _parents_first(tables):
        cur = conn.cursor()
        try:
            cur.execute(f"SELECT * FROM {qualified(t)}" + (f" LIMIT {int(limit)}" if limit is not None else ""))
            reader = cur.fetch_record_batch()
            defs, exprs = _select_list(duck, t, reader.schema, dialect)
            if t.pk:
                defs.append(f"PRIMARY KEY ({', '.join(_q(c) for c in t.pk)})")
            defs += _fk_defs(t, keys, rows) if limit is None else []
            duck.execute(f"CREATE TABLE {_q(t.target)} ({', '.join(defs)})")
            duck.register("__duckask_batches", reader)
            try:
                duck.execute(f"INSERT INTO {_q(t.target)} SELECT {', '.join(exprs)} FROM __duckask_batches")
            finally:
                duck.unregister("__duckask_batches")
        finally:
            cur.close()
        _comment(duck, t)
        counted = duck.execute(f"SELECT count(*) FROM {_q(t.target)}").fetchone()
        assert counted is not None                  # an aggregate: always one row
        rows[t.target] = counted[0]
        say(f"read {t.target} ({rows[t.target]:,} rows{' sampled' if limit is not None else ''})")
    return rows


def _parents_first(tables: list[SourceTable]) -> list[SourceTable]:
    by_key = {(t.schema, t.name): t for t in tables}
    done: list[SourceTable] = []
    seen: set[int] = set()

    def visit(t: SourceTable, path: frozenset) -> None:
        if id(t) in seen or id(t) in path:
            return
        for _cols, schema, table, _refs in t.fks:
            if (parent := by_key.get((schema, table))) is not None:
                visit(parent, path | {id(t)})
        seen.add(id(t))
        done.append(t)

    for t in tables:
        visit(t, frozenset())
    return done


def _fk_defs(t: SourceTable, keys: dict, loaded: dict[str, int]) -> list[str]:
    """FOREIGN KEY clauses DuckDB can hold: the parent already read, its primary key the referenced columns."""
    out = []
    for cols, schema, table, refs in t.fks:
        parent = keys.get((schema, table))
        if parent is not None and parent is not t and parent.target in loaded and parent.pk == refs:
            out.append(f"FOREIGN KEY ({', '.join(map(_q, cols))}) REFERENCES {_q(parent.target)} "
                       f"({', '.join(map(_q, refs))})")
        else:
            target = parent.target if parent is not None else table
            for c, r in zip(cols, refs):
                col = next((x for x in t.columns if x.name == c), None)
                if col is not None:
                    col.comment = "; ".join(filter(None, [col.comment, f"references {target}({r})"]))
    return out


def _comment(duck: duckdb.DuckDBPyConnection, t: SourceTable) -> None:
    note = t.comment or (f"a view in the source ({t.schema}.{t.name})" if "view" in t.kind else "")
    if note:
        duck.execute(f"COMMENT ON TABLE {_q(t.target)} IS {_lit(note)}")
    for c in t.columns:
        if c.comment:
            duck.execute(f"COMMENT ON COLUMN {_q(t.target)}.{_q(c.name)} IS {_lit(c.comment)}")
