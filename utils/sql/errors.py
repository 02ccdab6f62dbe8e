"""DuckDB's error messages, read once: what went wrong and what DuckDB suggests.

``parse_error(message)`` returns a ``QueryError`` whose ``kind`` is one of
- ``column_not_found``: ``Referenced column "x" not found in FROM clause! Candidate bindings: ...``;
- ``qualified_column``: ``Table "t2" does not have a column named "x" Candidate bindings: ...``;
- ``table_not_found``: ``Table with name x does not exist! Did you mean "y"``;
- ``group_by``: ``column "x" must appear in the GROUP BY clause``;
- ``conversion``: ``Could not convert string 'United Airlines' to INT32``;
- ``other``.
The repairs (``repair.py``) and the hints ErrorFixer gives the model (``column_hint``,
``value_hint``) read it; ``error_summary`` is what reports and feedback show.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from duckask.utils.schema.catalog import fold

_COL_NOT_FOUND = re.compile(r'Referenced column "([^"]+)" not found in FROM clause!\s*Candidate bindings: ([^\n]+)')
_QUAL_COL = re.compile(r'Table "([^"]+)" does not have a column named "([^"]+)"\s*Candidate bindings: :?([^\n]+)')
_TABLE_NOT_FOUND = re.compile(r'Table with name ([^\s]+) does not exist!\s*Did you mean "([^"]+)"')
_GROUP_BY = re.compile(r'column "?([^"\s]+)"? must appear in the GROUP BY clause')
_CONVERSION = re.compile(r"Could not convert string '([^']+)' to (\w+)")
_MISSING_COL = re.compile(r'(?:column named|Referenced column) "([^"]+)"')
_QUOTED = re.compile(r'"([^"]+)"')


@dataclass(frozen=True)
class QueryError:
    kind: str       # column_not_found | qualified_column | table_not_found | group_by | conversion | other
    name: str = ""                  # the column, table or text value DuckDB names
    qualifier: str = ""             # the alias a qualified column was looked up on
    candidates: tuple[str, ...] = field(default_factory=tuple)   # DuckDB's suggestions, as it wrote them
    target_type: str = ""           # conversion: the type the value did not convert to


def parse_error(message: str) -> QueryError:
    msg = message or ""
    if m := _COL_NOT_FOUND.search(msg):
        return QueryError("column_not_found", m.group(1), candidates=tuple(_QUOTED.findall(m.group(2))))
    if m := _QUAL_COL.search(msg):
        return QueryError("qualified_column", m.group(2), qualifier=m.group(1),
                          candidates=tuple(_QUOTED.findall(m.group(3))))
    if m := _TABLE_NOT_FOUND.search(msg):
        return QueryError("table_not_found", m.group(1).strip('"'), candidates=(m.group(2),))
    if m := _GROUP_BY.search(msg):
        return QueryError("group_by", m.group(1))
    if m := _CONVERSION.search(msg):
        return QueryError("conversion", m.group(1), target_type=m.group(2))
    return QueryError("other")


def error_summary(error: str) -> str:
    """The useful part of a DuckDB error: drop the LINE/caret excerpt."""
    lines = []
    for line in (error or "").splitlines():
        if line.startswith("LINE "):
            break
        if line.strip():
            lines.append(line.strip())
    return " ".join(lines)[:400]


def column_hint(error: str, columns: dict[str, set[str]], tables: dict[str, str]) -> str:
    """Where a column the error could not find really is, from the catalog."""
    m = _MISSING_COL.search(error or "")
    if not m:
        return ""
    col = m.group(1).split(".")[-1]
    owners = [tables[t] for t, cols in columns.items() if col.lower() in cols]
    if owners:
        return f" Note: column {col} belongs to table {', '.join(owners)}."
    return f" Note: no table has a column {col}; use only columns shown in the schema."


def value_hint(error: str, values: dict[str, list[list[str]]]) -> str:
    """For "could not convert 'United Airlines' to INT32": where that text really is stored
    (``values`` is the catalog's index of text values)."""
    err = parse_error(error)
    if err.kind != "conversion":
        return ""
    where = {f"{t}.{c}" for t, c, _ in values.get(fold(err.name), [])}
    if where:
        return (f" Note: '{err.name}' is stored in {', '.join(sorted(where)[:3])}; compare it there "
                f"(join that table) instead of with a {err.target_type} column.")
    return f" Note: '{err.name}' is text; do not compare it with a {err.target_type} column."
