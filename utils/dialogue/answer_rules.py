"""Plain-language answers without an LLM: what the result says, and how it was derived.

``rules_answer(df, truncated, question)`` answers in a sentence built from the question's words
(``phrasing.answer_sentence``) and lists what no rule there fits;
``derivation(sql)`` says in words what the query read, kept, grouped, ordered and cut (``sql.describe``).
DataAnalyzer uses both; how a Result is shown is ``utils/api/present.py``.
"""
from __future__ import annotations

import pandas as pd

from duckask.utils.dialogue.phrasing import answer_sentence, fmt
from duckask.utils.sql.describe import describe_sql


def rules_answer(df: pd.DataFrame, truncated: bool = False, max_rows: int = 5, question: str = "") -> str:
    """The answer without a model: a sentence from the question's words when a rule fits, else the values."""
    if df is None:
        return "No result."
    n, cols = len(df), list(df.columns)
    if n == 0:
        return "No rows match the question's conditions."
    if not truncated and (said := answer_sentence(question, df)):
        return said
    if n == 1:
        return ", ".join(fmt(df.iat[0, i]) for i in range(len(cols))) + "."
    head = f"{n}{'+' if truncated else ''} rows"
    shown = []
    for r in range(min(n, max_rows)):
        vals = [fmt(df.iat[r, i]) for i in range(len(cols))]
        shown.append(vals[0] if len(vals) == 1 else "(" + ", ".join(vals) + ")")
    more = f", and {n - max_rows} more" if n > max_rows else ""
    cap = " (capped at the row limit)" if truncated else ""
    return f"{head}{cap}: " + "; ".join(shown) + more + "."


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def derivation(sql: str) -> str:
    """How the answer was derived, in words: 'Derived from batting and people, where year_id is 2018, highest hr
    first, top 1.' (``describe_sql``); empty when the query names no table and no condition."""
    s = describe_sql(sql)
    if not s.tables and not s.filters:
        return ""
    parts = [f"from {_listed(s.tables)}"] if s.tables else []
    if s.filters:
        parts.append("where " + " and ".join(s.filters))
    if s.group_by:
        parts.append("per " + ", ".join(s.group_by))
    parts += s.order_by
    if s.limit:
        parts.append(f"top {s.limit}" if s.order_by else f"the first {s.limit} rows")
    return "Derived " + ", ".join(parts) + "."
