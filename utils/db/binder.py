"""What DuckDB's binder resolves a statement to: every table it scans, as the catalog holds it, and every table
function it calls, by its full name. The read allowlist (``access.roles``) and the guard on the server's own views
(``db.safety``) decide from this, never from a name as it was written.

``bind(cur, sql)`` asks the engine for the bound, unoptimized logical plan (``json_serialize_plan``: the plan is
bound, nothing runs) and collects each ``LOGICAL_GET``:

- a table scan (``seq_scan``) as ``(catalog, schema, table)``, as the catalog spells them: ``hr.teams`` is
  ``("shop", "hr", "teams")``, a bare ``teams`` is whichever ``teams`` the search path finds, and a view (or a
  model, a TEMP view) is expanded to the tables it reads;
- any other table function by its qualified name: ``duckdb_databases`` (the view or the function),
  ``information_schema.tables`` and ``pg_settings`` all become ``system.main.duckdb_*`` functions, whatever a
  user table of the same bare name is called elsewhere.

Every operator that changes something (``LOGICAL_INSERT``, ``LOGICAL_DELETE``, ``LOGICAL_UPDATE``,
``LOGICAL_MERGE_INTO``, ``LOGICAL_CREATE_*``, ``LOGICAL_ALTER``, ``LOGICAL_DROP``, ``LOGICAL_COPY_*``, ...) is collected
too, with the table it writes (``Bound.writes``): the binder binds writes as well as reads, so a data-modifying
``WITH`` below a SELECT or an INSERT is seen as the engine will run it (``tiers.engine_writes``,
``safety.outside_data``).

Names compare in DuckDB's own case folding (``db.reads.fold``: ASCII letters only).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import duckdb

from duckask.utils.db.reads import fold

Qualified = tuple[str, str, str]          # (catalog, schema, table), folded


@dataclass(frozen=True)
class Bound:
    tables: frozenset[Qualified] = frozenset()                  # scanned tables, views expanded
    functions: frozenset[tuple[str, ...]] = field(default_factory=frozenset)   # other table functions, full path
    writes: tuple[tuple[str, str], ...] = ()    # (operator without LOGICAL_, the table it writes) in plan order


#: Plan operators that read or compute; every other operator writes something (a table, a file, the catalog).
_READ_OPERATORS = {
    "LOGICAL_GET", "LOGICAL_PROJECTION", "LOGICAL_FILTER", "LOGICAL_AGGREGATE_AND_GROUP_BY", "LOGICAL_WINDOW",
    "LOGICAL_UNNEST", "LOGICAL_LIMIT", "LOGICAL_ORDER_BY", "LOGICAL_TOP_N",
    "LOGICAL_DISTINCT", "LOGICAL_SAMPLE", "LOGICAL_PIVOT", "LOGICAL_COMPARISON_JOIN", "LOGICAL_ANY_JOIN",
    "LOGICAL_CROSS_PRODUCT", "LOGICAL_POSITIONAL_JOIN", "LOGICAL_ASOF_JOIN", "LOGICAL_DEPENDENT_JOIN",
    "LOGICAL_DELIM_JOIN", "LOGICAL_UNION", "LOGICAL_EXCEPT", "LOGICAL_INTERSECT", "LOGICAL_RECURSIVE_CTE",
    "LOGICAL_MATERIALIZED_CTE", "LOGICAL_CTE_REF", "LOGICAL_CHUNK_GET", "LOGICAL_DELIM_GET",
    "LOGICAL_EXPRESSION_GET", "LOGICAL_DUMMY_SCAN", "LOGICAL_EMPTY_RESULT", "LOGICAL_EXPLAIN",
}


def _written(x: dict) -> str:
    """The table (or file, object) a writing operator changes, as the binder names it."""
    for key in ("table_info", "info"):
        info = x.get(key)
        if isinstance(info, dict):
            path = (info.get("qualified_name") or {}).get("path") or [info.get(k) for k in ("catalog", "schema", "name")
                                                                     if info.get(k)]
            if path:
                return ".".join(fold(str(p)) for p in path)
    return str(x.get("file_path") or "?")


def _gets(x, tables: set[Qualified], functions: set[tuple[str, ...]], writes: list[tuple[str, str]]) -> None:
    stack = [x]
    while stack:                    # iterative: a deeply nested plan never exhausts Python's stack
        x = stack.pop()
        if isinstance(x, list):
            stack.extend(x)
            continue
        if not isinstance(x, dict):
            continue
        kind = x.get("type")
        if isinstance(kind, str) and kind.startswith("LOGICAL_") and kind not in _READ_OPERATORS:
            writes.append((kind.removeprefix("LOGICAL_"), _written(x)))
        if kind == "LOGICAL_GET":
            path = tuple(fold(p) for p in ((x.get("qname") or {}).get("path") or []))
            data = x.get("function_data")
            scanned = ((data.get("qualified_name") or {}).get("path") if isinstance(data, dict) else None) or []
            if path == ("seq_scan",) and len(scanned) == 3:
                tables.add(tuple(fold(p) for p in scanned))          # type: ignore[arg-type]
            else:
                functions.add(path or ("?",))
        stack.extend(reversed([v for v in x.values() if isinstance(v, dict | list)]))


def bind(cur: duckdb.DuckDBPyConnection, sql: str) -> Bound | None:
    """What ``sql`` (one statement: a SELECT, or a write) reads and writes once bound on ``cur``, or None when DuckDB
    cannot bind it (a wrong column): callers then decide from the parse alone, and running it fails the same way."""
    try:
        row = cur.execute("SELECT json_serialize_plan(?::VARCHAR)", [sql]).fetchone()
        assert row is not None                      # a SELECT without FROM: always one row
        doc = json.loads(row[0])
    except (duckdb.Error, ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or doc.get("error") or not doc.get("plans"):
        return None
    tables: set[Qualified] = set()
    functions: set[tuple[str, ...]] = set()
    writes: list[tuple[str, str]] = []
    _gets(doc["plans"], tables, functions, writes)
    return Bound(frozenset(tables), frozenset(functions), tuple(writes))


def bind_error(cur: duckdb.DuckDBPyConnection, sql: str) -> str | None:
    """What DuckDB's binder says is wrong with ``sql`` on ``cur`` (a column or type the catalog lacks), or None when
    it binds. A live source sends nothing its catalog cannot bind: the engine would read such a name otherwise
    (``user``, a system column, an ``oid`` cast)."""
    try:
        row = cur.execute("SELECT json_serialize_plan(?::VARCHAR)", [sql]).fetchone()
        doc = json.loads(row[0]) if row else {}
    except (duckdb.Error, ValueError, RecursionError) as e:
        return f"the catalog cannot bind it: {str(e).splitlines()[0]}"
    if isinstance(doc, dict) and doc.get("error"):
        message = " ".join(str(doc.get("error_message") or "it does not bind").split())
        return f"{str(doc.get('error_type') or 'binder').title()} Error: {message}"
    return None


def user_table_names(cur: duckdb.DuckDBPyConnection) -> frozenset[str]:
    """The bare names of the database's tables and views (models' TEMP views too), folded."""
    return frozenset(fold(n) for (n,) in cur.execute(
        "SELECT table_name FROM duckdb_tables() UNION SELECT view_name FROM duckdb_views() WHERE NOT internal"
    ).fetchall())


def catalog_of(cur: duckdb.DuckDBPyConnection) -> str:
    """The name of the database ``cur`` reads (its catalog), folded."""
    row = cur.execute("SELECT current_database()").fetchone()
    assert row is not None                          # a SELECT without FROM: always one row
    return fold(row[0])


class ConnectionScope:
    """One connection (or cursor) as the scope ``safety.check_sql`` binds on: a model build's, or the cursor a
    query runs on (``Database.scope``), so checking costs no cursor of its own."""

    def __init__(self, con: duckdb.DuckDBPyConnection, catalog: str | None = None):
        self.con, self.catalog = con, catalog if catalog is not None else catalog_of(con)

    def bind(self, sql: str) -> Bound | None:
        return bind(self.con, sql)
