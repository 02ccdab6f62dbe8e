"""``extract_sql(reply)``: the one SQL statement in a model's reply, fenced or bare.
"""
from __future__ import annotations

import re

import duckdb

_FENCE = re.compile(r"```(?:sql|duckdb|SQL)?\s*\n?(.*?)(?:```|$)", re.S)
#: Where a bare statement starts: a query, or DuckDB's SUMMARIZE/DESCRIBE/PIVOT/UNPIVOT forms (upper-case
#: only, so "to describe the ..." in prose is not taken for SQL).
_START = re.compile(r"\b(?:(?i:WITH|SELECT|FROM)|SUMMARIZE|DESCRIBE|UNPIVOT|PIVOT)\b")


def extract_sql(reply: str) -> str:
    """The SQL statement in an LLM reply; '' when there is none."""
    text = reply or ""
    m = _FENCE.search(text)
    if m and m.group(1).strip():
        text = m.group(1)
    else:
        s = _START.search(text)
        text = text[s.start():] if s else ""
    text = text.strip()
    # Keep the first statement only; models sometimes add a second query or prose after ';'.
    try:
        stmts = duckdb.extract_statements(text)
        if stmts:
            text = stmts[0].query
    except duckdb.Error:
        pass
    return text.strip().rstrip(";").strip()
