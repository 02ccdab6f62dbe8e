"""DuckDB's own parser, read as JSON: the engine's own reading of a query (security reads) and the offsets the in-place
rules edit at.

Every reading of a query's meaning starts from sqlglot's tree (``db.tree``); this parse does the two jobs that tree
cannot: what a query may touch is decided by the engine's own reading (``db.reads``, ``db.safety``,
``statement_types``), never by a dialect's guess, and the in-place rules (``sql.tidy``, ``sql.habits``,
``sql.repair``, ``sql.join_repair``) edit the model's text at offsets only this parse gives, keeping its spelling.

``parse(sql)`` is the first statement's top query node from ``json_serialize_sql`` (None when DuckDB
cannot parse it); ``walk(node)`` yields every dict below a node; ``span(sql, node)`` is the text a
node came from. Query locations are character offsets into ``sql``, which is how rules edit a query
without re-printing it (the model's spelling and layout are kept).
"""
from __future__ import annotations

import atexit
import functools
import json
import threading
from collections.abc import Iterator

import duckdb

_PARSER = duckdb.connect()  # in-memory, no data: only parses
_LOCK = threading.Lock()
atexit.register(_PARSER.close)  # closed before the interpreter tears DuckDB's bindings down (no leak report)


@functools.lru_cache(maxsize=512)
def _serialize(sql: str) -> str | None:
    try:
        with _LOCK:
            cur = _PARSER.cursor()
        try:
            row = cur.execute("SELECT json_serialize_sql(?::VARCHAR)", [sql]).fetchone()
            assert row is not None                  # a SELECT without FROM: always one row
            return row[0]
        finally:
            cur.close()
    except duckdb.Error:
        return None


def parse(sql: str) -> dict | None:
    """The top query node of the first statement (a fresh dict each call), or None."""
    raw = _serialize(sql)
    if raw is None:
        return None
    try:
        doc = json.loads(raw)
    except RecursionError:         # nested deeper than Python reads: unreadable, so refused by every caller
        return None
    if doc.get("error") or not doc.get("statements"):
        return None
    return doc["statements"][0]["node"]


def statement_types(sql: str) -> list[str] | None:
    """The type of each statement in ``sql`` as DuckDB's parser reads it ("SELECT", "DROP", ...), for any
    kind of statement (``parse`` serializes SELECTs only); None when it does not parse."""
    try:
        with _LOCK:
            return [str(s.type).rsplit(".", 1)[-1] for s in _PARSER.extract_statements(sql)]
    except duckdb.Error:
        return None


def walk(x, skip: set[int] | None = None) -> Iterator[dict]:
    """Every dict in a JSON AST, depth first, not descending into ``skip`` (a set of ids of dicts)."""
    if isinstance(x, dict):
        if skip and id(x) in skip:
            return
        yield x
        for v in x.values():
            yield from walk(v, skip)
    elif isinstance(x, list):
        for v in x:
            yield from walk(v, skip)


def span(sql: str, node: dict | None) -> str | None:
    """The text of ``sql`` a node was parsed from (None without a location)."""
    if not node or not node.get("query_location_length"):
        return None
    loc = node["query_location"]
    return sql[loc: loc + node["query_location_length"]]


def column_ref(node: dict | None) -> list[str] | None:
    """The name parts of a column reference (``["T1", "name"]``), or None for anything else."""
    if not node or node.get("class") != "COLUMN_REF":
        return None
    return node.get("column_names") or None


def equalities(node: dict) -> Iterator[tuple[dict, dict, list[str], list[str]]]:
    """(left, right, left names, right names) for every ``a.x = b.y`` between two qualified columns."""
    for d in walk(node):
        if d.get("class") == "COMPARISON" and d.get("type") == "COMPARE_EQUAL":
            left, right = column_ref(d.get("left")), column_ref(d.get("right"))
            if left and right and len(left) == 2 and len(right) == 2:
                yield d["left"], d["right"], left, right


def table_aliases(sql: str) -> dict[str, str]:
    """{alias or table name (lower-case): table name} for every base table in the query."""
    return {(d.get("alias") or d["table_name"]).lower(): d["table_name"]
            for d in walk(parse(sql) or {}) if d.get("type") == "BASE_TABLE" and d.get("table_name")}


def outer_tables(node: dict) -> dict[str, str]:
    """{alias or name (lower-case): table} of the base tables in a SELECT's own FROM clause."""
    out, todo = {}, [node.get("from_table") or {}]
    while todo:
        x = todo.pop()
        if x.get("type") == "JOIN":
            todo += [x.get("left") or {}, x.get("right") or {}]
        elif x.get("type") == "BASE_TABLE" and x.get("table_name"):
            out[(x.get("alias") or x["table_name"]).lower()] = x["table_name"]
    return out
