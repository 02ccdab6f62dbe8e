"""SQL idioms a question's wording calls for, which a small model misses on its own: ``question_hints``
("both X and Y" is an INTERSECT). DuckDB's own syntax and functions come from ``sql.reference``.
"""
from __future__ import annotations

import re

# "both X and Y" asks for the items that meet each condition on some row: an INTERSECT of two queries.
# A small model writes "x = 'X' AND x = 'Y'" (never true) or "x IN ('X', 'Y')" (either) instead.
# "list/show both A and B" only asks for two columns.
_BOTH = re.compile(r"\bboth\b", re.I)
_BOTH_COLUMNS = re.compile(r"\b(list|show|give|return|display)\s+(me\s+)?both\b|\bboth\s+the\b", re.I)
BOTH_HINT = ("Note: \"both ... and ...\" means items that meet each condition, possibly on different rows: "
             "SELECT ... WHERE <first condition> INTERSECT SELECT ... WHERE <second condition>.")


def question_hints(question: str) -> list[str]:
    """SQL idioms the question's wording calls for, which the model misses on its own."""
    if _BOTH.search(question) and not _BOTH_COLUMNS.search(question):
        return [BOTH_HINT]
    return []
