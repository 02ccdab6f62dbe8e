"""Quoting for SQL that duckask writes itself (importer, introspection, DDL shown to the model).

- ``quote_ident(name)``: always a double-quoted identifier;
- ``quote_literal(text)``: a single-quoted string literal; ``sql_literal(value)``: any value, nested ones too;
- ``ident(name)``: the name as is when DuckDB accepts it bare, else quoted (reserved words, unusual
  characters), so the DDL the model reads stays short.
"""
from __future__ import annotations

import datetime as dt
import decimal
import threading

import duckdb


def quote_ident(name: str) -> str:
    """Quote an SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text: str) -> str:
    """SQL string literal (single quotes escaped)."""
    return "'" + text.replace("'", "''") + "'"


_RESERVED: set[str] = set()
_LOCK = threading.Lock()


def sql_literal(value, width: int | None = None) -> str:
    """A Python value (what DuckDB returns, nested ones too) as a DuckDB literal; texts cut to ``width``
    characters when given (an example, not the data)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | decimal.Decimal):
        return str(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"'{k}': {sql_literal(v, width)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(sql_literal(v, width) for v in value) + "]"
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return f"'{value}'"
    text = str(value)
    if width is not None and len(text) > width:
        text = text[: width - 1] + "…"
    return quote_literal(text)


def ident(name: str) -> str:
    """Quote an identifier only when DuckDB needs it (reserved word or unusual characters)."""
    if not _RESERVED:
        with _LOCK:
            if not _RESERVED:
                con = duckdb.connect()   # its own connection: the shared default one is not thread-safe
                _RESERVED.update(k for (k,) in con.execute(
                    "SELECT keyword_name FROM duckdb_keywords() WHERE keyword_category = 'reserved'").fetchall())
                con.close()
    if name.isidentifier() and name.isascii() and name.lower() not in _RESERVED:
        return name
    return quote_ident(name)
