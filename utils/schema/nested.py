"""Nested columns shown as they are used: a STRUCT's fields, a LIST's elements, a MAP's keys and values and
the keys found in a JSON column's values, each with one literal example read from the data.

A generic coder model knows ``a.b`` and ``x[0]`` from other dialects; what it does not know is what *this*
column holds and how DuckDB reads it. ``shape(con, table, column, type)`` reads up to ``SAMPLE_ROWS``
values and returns one short note (at most ``MAX_NOTE`` characters) for the schema text:

- STRUCT: ``read a field as address.city; e.g. {'city': 'Berlin', 'zip': '10088'}``
- LIST: ``e.g. ['eco', 'gift'] (1-based: tags[1] is the first, tags[-1] the last, tags[1:2] a slice)``
- MAP: ``read a key as attrs['color']; e.g. MAP {'color': 'red'}``
- JSON: ``read as payload->>'$.device.os'; keys $.device.os, $.items[*].sku, $.price``

``literal(value)`` writes a Python value (what DuckDB returns for a nested value) as a DuckDB literal.
"""
from __future__ import annotations

import json
from typing import Any

import duckdb

from duckask.utils.db.quoting import sql_literal

SAMPLE_ROWS = 200
MAX_NOTE = 130
MAX_PATHS = 8


def kind_of(type_: str) -> str | None:
    """"struct", "list", "map" or "json" for a nested DuckDB type, else None."""
    t = type_.upper().strip()
    if t == "JSON":
        return "json"
    if t.endswith("]"):
        return "list"
    if t.startswith("STRUCT"):
        return "struct"
    if t.startswith("MAP"):
        return "map"
    return None


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def literal(value: Any, width: int = 24) -> str:
    """``value`` as a DuckDB literal, each text cut to ``width`` characters (an example, not the data)."""
    return sql_literal(value, width)


def _cut(note: str) -> str:
    return note if len(note) <= MAX_NOTE else note[: MAX_NOTE - 1] + "…"


def _example(con, table: str, column: str, order: str) -> Any:
    """The first sampled value by ``order`` (the fullest one first), or None."""
    row = con.execute(f"SELECT {_q(column)} FROM (SELECT {_q(column)} FROM {_q(table)} WHERE {_q(column)} IS NOT "
                      f"NULL LIMIT {SAMPLE_ROWS}) ORDER BY {order} LIMIT 1").fetchone()
    return row[0] if row else None


def json_paths(structure: Any, prefix: str = "$") -> list[str]:
    """The leaf paths of a ``json_group_structure`` result: ``$.device.os``, ``$.items[*].sku``."""
    if isinstance(structure, dict):
        return [p for k, v in structure.items() for p in json_paths(v, f"{prefix}.{k}")]
    if isinstance(structure, list) and structure:
        return json_paths(structure[0], f"{prefix}[*]")
    return [prefix]


def shape(con: duckdb.DuckDBPyConnection, table: str, column: str, type_: str) -> str:
    """The note for a nested column (see the module's docstring), or "" for any other column or no data."""
    kind = kind_of(type_)
    col = _q(column)
    try:
        if kind == "json":
            row = con.execute(f"SELECT json_group_structure({col}) FROM (SELECT {col} FROM {_q(table)} WHERE {col} "
                              f"IS NOT NULL LIMIT {SAMPLE_ROWS})").fetchone()
            assert row is not None                      # an aggregate: always one row
            raw = row[0]
            paths = json_paths(json.loads(raw)) if raw else []
            if not paths or paths == ["$"]:
                return ""
            shown = ", ".join(paths[:MAX_PATHS]) + (", …" if len(paths) > MAX_PATHS else "")
            first = next((p for p in paths if "[*]" not in p), paths[0])
            return _cut(f"read as {column}->>'{first}'; keys {shown}")
        if kind == "list":
            value = _example(con, table, column, f"len({col}) >= 2 DESC, len({col}) DESC")
            if value is None:
                return ""
            return _cut(f"e.g. {literal(list(value)[:3], 16)} (1-based: {column}[1] is the first, {column}[-1] the "
                        f"last, {column}[1:2] a slice)")
        if kind == "struct":
            value = _example(con, table, column, "1")
            if not isinstance(value, dict):
                return ""
            field = next(iter(value), "field")
            return _cut(f"read a field as {column}.{field}; e.g. {literal(value, 16)}")
        if kind == "map":
            value = _example(con, table, column, f"cardinality({col}) DESC")
            if not value:
                return ""
            key, item = next(iter(dict(value).items()))
            return _cut(f"read a key as {column}[{literal(key)}]; e.g. MAP {{{literal(key)}: {literal(item, 16)}}}")
    except duckdb.Error:
        return ""
    return ""
