"""A readable layout for one-line SQL: each top-level clause and join on a line of its own, string
literals untouched. For display only (the notebook view, the chat): the query that runs is unchanged.
"""
from __future__ import annotations

import re

from duckask.utils.sql.edit import sub_outside_strings

_CLAUSE = re.compile(r"\s+(?=\b(FROM|WHERE|GROUP\s+BY|HAVING|ORDER\s+BY|LIMIT|QUALIFY|WINDOW|UNION(\s+ALL)?|"
                     r"INTERSECT|EXCEPT|(?:(?:LEFT|RIGHT|FULL|INNER|CROSS|NATURAL)\s+)?(?:OUTER\s+)?JOIN)\b)", re.I)
_AND_OR = re.compile(r"\s+(?=\b(AND|OR)\b)", re.I)


def format_sql(sql: str) -> str:
    """``sql`` with a line break before each clause keyword; already multi-line SQL is kept as written."""
    text = (sql or "").strip()
    if "\n" in text:
        return text
    out = sub_outside_strings(_CLAUSE, "\n", text)
    if max(map(len, out.splitlines())) > 100:
        out = sub_outside_strings(_AND_OR, "\n  ", out)
    return out
