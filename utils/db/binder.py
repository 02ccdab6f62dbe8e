"""What DuckDB's binder resolves a statement to: every table it scans, as the catalog holds it, and every table
function it calls, by its full name. The read allowlist (``db.access``) and the guard on the server's own views
(``db.safety``) decide from this, never from a name as it was written.

``bind(cur, sql)`` asks the engine for the bound, unoptimized logical plan (``json_serialize_plan``: the plan is
bound, nothing runs) and collects each ``LOGICAL_GET``:

- a table scan (``seq_scan``) as ``(catalog, schema, table)``, as the catalog spells them: ``hr.teams`` is
  ``("shop", "hr", "teams")``, a bare ``teams`` is whichever ``teams`` the search path finds, and a view (or a
  model, a TEMP view) is expanded to the tables it reads;
- any other table function by its qualified name: ``duckdb_databases`` (the view or the function),
  ``information_schema.tables`` and ``pg_settings`` all become ``system.main.duckdb_*`` functions, whatever a
  user table of the same bare name is called elsewhere.

Names compare in DuckDB's own case folding (``sql.reads.fold``: ASCII letters only).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import duckdb

from duckask.utils.sql.reads import fold

Qualified = tuple[str, str, str]          # (catalog, schema, table), folded


@dataclass(frozen=True)
class Bound:
    tables: frozenset[Qualified] = frozenset()                  # scanned tables, views expanded
    functions: frozenset[tuple[str, ...]] = field(default_factory=frozenset)   # other table functions, full path

    def system(self) -> list[str]:
        """The table functions of DuckDB's ``system`` catalog this reads (its views resolve to them)."""
        return sorted(".".join(p) for p in self.functions if p and p[0] == "system" and len(p) > 1)


def _gets(x, tables: set[Qualified], functions: set[tuple[str, ...]]) -> None:
    stack = [x]
    while stack:                    # iterative: a deeply nested plan never exhausts Python's stack
        x = stack.pop()
        if isinstance(x, list):
            stack.extend(x)
            continue
        if not isinstance(x, dict):
            continue
        if x.get("type") == "LOGICAL_GET":
            path = tuple(fold(p) for p in ((x.get("qname") or {}).get("path") or []))
            data = x.get("function_data")
            scanned = ((data.get("qualified_name") or {}).get("path") if isinstance(data, dict) else None) or []
            if path == ("seq_scan",) and len(scanned) == 3:
                tables.add(tuple(fold(p) for p in scanned))          # type: ignore[arg-type]
            else:
                functions.add(path or ("?",))
        stack.extend(v for v in x.values() if isinstance(v, dict | list))


def bind(cur: duckdb.DuckDBPyConnection, sql: str) -> Bound | None:
    """What ``sql`` (one SELECT) reads once bound on ``cur``, or None when DuckDB cannot bind it (a wrong
    column, a statement that is not a query): callers then decide from the parse alone, and running it fails
    the same way."""
    try:
        raw = cur.execute("SELECT json_serialize_plan(?::VARCHAR)", [sql]).fetchone()[0]
        doc = json.loads(raw)
    except (duckdb.Error, ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or doc.get("error") or not doc.get("plans"):
        return None
    tables: set[Qualified] = set()
    functions: set[tuple[str, ...]] = set()
    _gets(doc["plans"], tables, functions)
    return Bound(frozenset(tables), frozenset(functions))


def user_table_names(cur: duckdb.DuckDBPyConnection) -> frozenset[str]:
    """The bare names of the database's tables and views (models' TEMP views too), folded."""
    return frozenset(fold(n) for (n,) in cur.execute(
        "SELECT table_name FROM duckdb_tables() UNION SELECT view_name FROM duckdb_views() WHERE NOT internal"
    ).fetchall())


def catalog_of(cur: duckdb.DuckDBPyConnection) -> str:
    """The name of the database ``cur`` reads (its catalog), folded."""
    return fold(cur.execute("SELECT current_database()").fetchone()[0])


class ConnectionScope:
    """One connection (or cursor) as the scope ``safety.check_sql`` binds on: a model build's, or the cursor a
    query runs on (``Database.scope``), so checking costs no cursor of its own."""

    def __init__(self, con: duckdb.DuckDBPyConnection, catalog: str | None = None):
        self.con, self.catalog = con, catalog if catalog is not None else catalog_of(con)

    def bind(self, sql: str) -> Bound | None:
        return bind(self.con, sql)
