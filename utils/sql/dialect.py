"""DuckDB dialect notes: a few short lines of DuckDB's own syntax for what a question or its tables
call for (JSON, LIST and STRUCT columns, dates and intervals, window functions and QUALIFY,
arg_max, strings and regular expressions). A generic coder model writes generic SQL; these notes
are the DuckDB idioms it misses. Every function named here exists in DuckDB's ``duckdb_functions()``
and every snippet runs (tests/test_dialect.py checks both).

``dialect_notes(question, tables)`` returns the notes that apply, most specific first, at most
``limit``. SQLGenerator shows them after the examples when the ``dialect_notes`` setting is ``auto``.
``question_hints(question)`` gives the SQL idioms the question's wording calls for (always shown).

Run on its own::

    python -m duckask.utils.sql.dialect "How many orders per month in 2024?" --types DATE
"""
from __future__ import annotations

import argparse
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Note:
    name: str
    text: str
    functions: tuple[str, ...]       # DuckDB functions the note names (checked against duckdb_functions())


JSON = Note("json", "JSON columns: col->>'$.a.b' is text, col->'$.items' is JSON; cast numbers with "
                    "(col->>'$.price')::DOUBLE; json_array_length(col->'$.items') counts an array.",
            ("json_extract_string", "json_extract", "json_array_length"))
LIST = Note("list", "LIST columns (type[]): unnest(col) gives one row per element; list_contains(col, x); "
                    "len(col) counts elements; list_sum(col), list_avg(col).",
            ("unnest", "list_contains", "len", "list_sum", "list_avg"))
STRUCT = Note("struct", "STRUCT columns: read a field as col.field (e.g. address.city).", ("struct_extract",))
DATES = Note("dates", "Dates: date_trunc('month', ts) groups by month; year(d), month(d), dayofweek(d); "
                      "date_diff('day', a, b); d - INTERVAL 30 DAY; strftime(d, '%Y-%m') formats.",
             ("date_trunc", "year", "month", "dayofweek", "date_diff", "strftime"))
WINDOW = Note("window", "Windows: rank() OVER (PARTITION BY g ORDER BY x DESC); keep the top row per group "
                        "with QUALIFY row_number() OVER (PARTITION BY g ORDER BY x DESC) = 1; a running total "
                        "is sum(x) OVER (ORDER BY d); lag(x) OVER (ORDER BY d) is the previous row's x.",
              ("rank", "row_number", "sum", "lag"))
ARGMAX = Note("argmax", "arg_max(name, value) is the name at the largest value (arg_min: smallest); with "
                        "GROUP BY it gives one per group.", ("arg_max", "arg_min"))
STRINGS = Note("strings", "Strings: regexp_extract(s, 'SKU-(\\d+)', 1) takes a group; regexp_matches(s, '^A'); "
                          "split_part(s, '@', 2); s ILIKE '%x%'; string_agg(s, ', ').",
               ("regexp_extract", "regexp_matches", "split_part", "string_agg"))
NOTES = (JSON, LIST, STRUCT, DATES, WINDOW, ARGMAX, STRINGS)

_TIME_WORDS = re.compile(r"\b(year|years|yearly|annual|month|months|monthly|week|weeks|weekly|day|days|daily|"
                         r"date|dates|quarter|hour|hours|since|before|after|between|ago|last|recent|weekday|"
                         r"weekend|morning|evening|19\d\d|20\d\d|january|february|march|april|may|june|july|"
                         r"august|september|october|november|december)\b", re.I)
_WINDOW_WORDS = re.compile(r"\b(rank|ranked|ranking|running|cumulative|previous|prior|preceding|next|"
                           r"change from|growth|streak|consecutive|moving average|"
                           r"top \d+ (?:\w+ )?(?:per|in each|for each|of each)|"
                           r"(?:each|every) \w+'?s? (?:top|best|highest|first|latest))\b", re.I)
_ARGMAX_WORDS = re.compile(r"\b(most|highest|largest|biggest|lowest|smallest|best|worst|latest|earliest)\b.*"
                           r"\b(per|for each|in each|of each|by each)\b", re.I)
_STRING_WORDS = re.compile(r"\b(pattern|regex|domain|prefix|suffix|starts? with|ends? with|contains?|digits?|"
                           r"letters?|code|codes|extension|substring|part of|email|emails|comma-separated)\b", re.I)


def _types(tables) -> set[str]:
    return {c.type.upper() for t in tables for c in t.columns}


def dialect_notes(question: str, tables, limit: int = 3) -> list[str]:
    """The notes the question and the selected tables (catalog ``Table`` objects) call for."""
    types = _types(tables)
    hits = []
    if "JSON" in types:
        hits.append(JSON)
    if any(t.endswith("[]") for t in types):
        hits.append(LIST)
    if any(t.startswith("STRUCT") for t in types):
        hits.append(STRUCT)
    if _WINDOW_WORDS.search(question):
        hits.append(WINDOW)
    if _ARGMAX_WORDS.search(question):
        hits.append(ARGMAX)
    if any(t.startswith(("DATE", "TIMESTAMP")) for t in types) and _TIME_WORDS.search(question):
        hits.append(DATES)
    if _STRING_WORDS.search(question):
        hits.append(STRINGS)
    return [n.text for n in hits[:limit]]


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


def main(argv: list[str] | None = None) -> int:
    from duckask.utils.schema.catalog import Column, Table

    ap = argparse.ArgumentParser(description="Show the DuckDB dialect notes a question would get.")
    ap.add_argument("question")
    ap.add_argument("--types", default="", help="comma-separated column types of the selected tables")
    args = ap.parse_args(argv)
    table = Table("t", [Column(f"c{i}", t.strip()) for i, t in enumerate(args.types.split(",")) if t.strip()])
    for note in dialect_notes(args.question, [table], limit=len(NOTES)):
        print(note)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
