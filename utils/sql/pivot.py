"""A PIVOT that lists no values, made runnable: ``PIVOT t ON year USING sum(x)`` is, to DuckDB, several
statements (it reads the ON column's values first, to name the new columns), which the safe executor
refuses as one read. ``values_pivot`` reads those values with one SELECT DISTINCT through the same safe
``run`` and writes them into the PIVOT (``ON year IN (2023, 2024)``): one statement, the same result.
Every draft SQLExecutor or AssessConfidence runs goes through ``run_pivot`` (``sql.drafts``).
"""
from __future__ import annotations

import re

from duckask.utils.db.quoting import sql_literal
from duckask.utils.sql.edit import top_level

MAX_VALUES = 40
_KEYWORDS = re.compile(r"\b(USING|GROUP\s+BY|ORDER\s+BY|LIMIT)\b", re.I)


def _masked(text: str) -> str:
    """``text`` with everything inside brackets and quotes blanked, offsets kept."""
    keep = dict(top_level(text))
    return "".join(keep.get(i, " ") for i in range(len(text)))


def split_pivot(sql: str) -> tuple[str, str, str] | None:
    """(source, ON expression, the rest from USING on) of a PIVOT statement without an IN list, else None."""
    m = re.match(r"\s*PIVOT\s+", sql, re.I)
    if not m:
        return None
    flat = _masked(sql)
    on = re.search(r"\sON\s", flat[m.end():], re.I)
    if not on:
        return None
    on_start = m.end() + on.end()
    end = _KEYWORDS.search(flat, on_start)
    on_end = end.start() if end else len(sql)
    source, column, rest = sql[m.end():m.end() + on.start()].strip(), sql[on_start:on_end].strip(), sql[on_end:]
    if re.search(r"\sIN\s*$|\sIN\s", " " + _masked(column) + " ", re.I) or "," in _masked(column) or not column:
        return None
    return source, column, rest


def values_pivot(sql: str, run, limit: int = MAX_VALUES) -> str | None:
    """The PIVOT with its ON column's values listed (read through ``run``, the safe executor), or None when
    it is not such a PIVOT, the values cannot be read, or there are more than ``limit``."""
    parts = split_pivot(sql)
    if parts is None:
        return None
    source, column, rest = parts
    src = source if source.startswith("(") or re.fullmatch(r"[\w.\"]+", source) else f"({source})"
    out = run(f"SELECT DISTINCT {column} AS v FROM {src} WHERE {column} IS NOT NULL ORDER BY 1 LIMIT {limit + 1}")
    if not out.ok or out.df is None or not 0 < len(out.df) <= limit:
        return None
    listed = ", ".join(sql_literal(v) for v in out.df["v"].tolist())
    return f"PIVOT {source} ON {column} IN ({listed}) {rest.strip()}".strip()


def run_pivot(run, sql: str):
    """``run(sql)``; when DuckDB would read a PIVOT as several statements, the same PIVOT with its values
    listed instead (its outcome's ``sql`` is what ran)."""
    out = run(sql)
    if not out.ok and "MULTI" in (out.error or "") and (listed := values_pivot(sql, run)):
        return run(listed)
    return out
