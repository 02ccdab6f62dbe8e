"""DuckDB's reference at question time: the few idioms and functions a question needs, for the prompt.

Two sources, both read once a process:

- the sheet ``data/duckdb_reference.yaml``: DuckDB's friendly SQL (SUMMARIZE, DESCRIBE, USING SAMPLE,
  EXCLUDE/REPLACE, COLUMNS, GROUP BY ALL, PIVOT, 1-based list indexes and slices, struct, map and JSON
  access, date_diff, split_part, QUALIFY, arg_max, ...), one line and one runnable example an entry, each
  with the words a question uses when it needs it and the column types that call for it;
- the installed DuckDB's own ``duckdb_functions()`` (name, parameters, return type, description): a
  function enters when the question names it ("the median", "the levenshtein distance").

``lookup(question, types)`` scores each sheet entry by the rarity-weighted words it shares with the
question (an IDF sum over stemmed words, BM25's core without length normalisation: entries are one line),
plus a bonus when a selected column's kind (json, list, struct, map, time) calls for it (an entry for a
kind of column is never shown where the tables have none), and returns the
best few lines within ``MAX_CHARS`` (about 250 tokens). SQLGenerator puts them after the schema and the
examples, so the prompt state of the schema (the long, shared part) is reused as before.

Run on its own::

    python -m duckask.utils.sql.reference "How many minutes did each trip take?" --types TIMESTAMP
"""
from __future__ import annotations

import argparse
import functools
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import yaml

from duckask.utils.schema.terms import stem

SHEET = Path(__file__).resolve().parents[2] / "data" / "duckdb_reference.yaml"    # the duckask.data package
MAX_ENTRIES = 4
MAX_CHARS = 900
MIN_SCORE = 3.0          # an entry must share a rare word, or two common ones
FAMILY_MIN = 4           # columns differing only by a trailing number that make a family (score_q1..score_q12)
#: A nested column calls for its entry on its own (how to read it); a date column only helps words that ask.
TYPE_BONUS = {"json": MIN_SCORE, "list": MIN_SCORE, "struct": MIN_SCORE, "map": MIN_SCORE, "time": 1.0}
#: English words that are also function names: a question saying "first" or "random" does not name a function.
_PLAIN = set("first last random count round value values range right left lower upper length month years hours "
             "today contains position repeat reverse replace array struct union state split ascii least greatest "
             "every error weekday century decade quarter minute second seconds epoch current version mode flatten "
             "filter product concat prefix suffix format sign degrees radians bitstring chr instr nextafter".split())
_STOP = set("a an the of in on at to is are was were be do does did what which who how me show give list tell "
            "and or it its this that these those there their for from with by as than more less many much "
            "have has had get got not".split())
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Entry:
    name: str
    text: str
    words: frozenset[str]
    types: frozenset[str] = frozenset()
    example: str = ""
    functions: tuple[str, ...] = ()


@dataclass
class Hit:
    entry: Entry
    score: float
    why: list[str] = field(default_factory=list)


def terms(text: str) -> set[str]:
    """Stemmed words of ``text`` and its adjacent pairs joined ("day of week" ~ "dayofweek" too)."""
    words = [w for w in _WORD.findall(text.lower()) if w not in _STOP]
    return {stem(w) for w in words} | {stem(a + b) for a, b in zip(words, words[1:])}


def kinds(types) -> set[str]:
    """The kinds of column types that call for entries: json, list, struct, map, time."""
    out = set()
    for t in (str(x).upper() for x in types):
        if t == "JSON":
            out.add("json")
        elif t.endswith("]"):
            out.add("list")
        elif t.startswith("STRUCT"):
            out.add("struct")
        elif t.startswith("MAP"):
            out.add("map")
        elif t.startswith(("DATE", "TIMESTAMP", "TIME", "INTERVAL")):
            out.add("time")
    return out


def _words(text: str) -> set[str]:
    """An entry's words: as ``terms``, except that ``running_total`` stands only for the phrase (so "home
    runs" does not call for running totals) and ``column+type`` for both words anywhere in the question
    ("what columns ... of which types"), each alone being too common to count."""
    phrases = {stem("".join(p for p in w.split("_") if p not in _STOP)) for w in text.split() if "_" in w}
    both = {"+".join(sorted(stem(p) for p in w.split("+"))) for w in text.split() if "+" in w}
    return terms(" ".join(w for w in text.split() if "_" not in w and "+" not in w)) | phrases | both


def _matches(question_terms: set[str], words: frozenset[str]) -> list[str]:
    """The entry words the question has: plain ones and phrases as terms, ``a+b`` when it has a and b."""
    return sorted(w for w in words if w in question_terms
                  or ("+" in w and all(p in question_terms for p in w.split("+"))))


@functools.lru_cache(maxsize=1)
def sheet() -> tuple[Entry, ...]:
    """The hand-written sheet, parsed once."""
    rows = yaml.safe_load(SHEET.read_text(encoding="utf-8"))
    return tuple(Entry(r["name"], r["text"], frozenset(_words(r["words"]) | {stem(r["name"].replace("_", ""))}),
                       frozenset(r.get("types") or ()), r.get("example", ""), tuple(r.get("functions") or ()))
                 for r in rows)


@functools.lru_cache(maxsize=1)
def _idf() -> dict[str, float]:
    entries = sheet()
    df: dict[str, int] = {}
    for e in entries:
        for w in e.words:
            df[w] = df.get(w, 0) + 1
    n = len(entries)
    return {w: math.log(1 + n / c) for w, c in df.items()}


@functools.lru_cache(maxsize=1)
def functions() -> dict[str, str]:
    """{function name: one line 'name(params) -> type: description'} from the installed DuckDB, for every
    scalar, aggregate and window function with a description (the first overload that has one)."""
    con = duckdb.connect()
    try:
        rows = con.execute(
            "SELECT function_name, parameters, return_type, description FROM duckdb_functions() "
            "WHERE description IS NOT NULL AND function_type IN ('scalar', 'aggregate', 'window') "
            "ORDER BY function_name, len(parameters)").fetchall()
    finally:
        con.close()
    out: dict[str, str] = {}
    for name, params, returns, description in rows:
        if name in out or not name[:1].isalpha():
            continue
        first = re.split(r"(?<=\.)\s", description.strip(), maxsplit=1)[0].replace("`", "")
        out[name] = f"{name}({', '.join(params or [])})" + (f" -> {returns}" if returns else "") + f": {first}"
    return out


def named_functions(question: str) -> list[str]:
    """The reference lines of DuckDB functions the question names by their full name (at least 5 letters,
    so 'max' or 'len' in ordinary words do not count; 'median' and 'levenshtein' do)."""
    words = set(_WORD.findall(question.lower()))
    joined = {a + "_" + b for a, b in zip(_WORD.findall(question.lower()), _WORD.findall(question.lower())[1:])}
    table = functions()
    return [table[w] for w in sorted((words | joined) & set(table)) if len(w) >= 5 and w not in _PLAIN]


def score(question_terms: set[str], question_kinds: set[str], entry: Entry) -> Hit:
    """An entry's score for a question: the IDF of the words they share, plus the bonus of a column kind
    that calls for it. An entry for a kind of column (a list, a JSON document, a date) scores 0 where the
    selected tables have none: on a database without lists, "the first two" is not a slice."""
    if entry.types and not entry.types & question_kinds:
        return Hit(entry, 0.0, ["no " + "/".join(sorted(entry.types)) + " column"])
    idf = _idf()
    shared = _matches(question_terms, entry.words)
    hit = Hit(entry, sum(idf.get(w, 0.0) for w in shared), shared)
    if entry.types & question_kinds:
        hit.score += max(TYPE_BONUS[k] for k in entry.types & question_kinds)
        hit.why.append("type:" + ",".join(sorted(entry.types & question_kinds)))
    return hit


def rank(question: str, types=()) -> list[Hit]:
    """Every sheet entry that reaches ``MIN_SCORE``, best first (ties in sheet order)."""
    q, k = terms(question), kinds(types)
    hits = [score(q, k, e) for e in sheet()]
    return sorted((h for h in hits if h.score >= MIN_SCORE), key=lambda h: -h.score)


def families(names) -> dict[str, list[str]]:
    """Column families of a wide table: at least ``FAMILY_MIN`` names that differ only by a trailing number
    (``score_q1`` ... ``score_q12``), by their common start."""
    groups: dict[str, list[str]] = {}
    for name in names:
        if m := re.match(r"^(.*?[A-Za-z_])\d+$", name):
            groups.setdefault(m.group(1), []).append(name)
    return {start: members for start, members in groups.items() if len(members) >= FAMILY_MIN}


def family_lines(question: str, names) -> list[str]:
    """A line for each column family the question names by its words ("the twelve score questions": ``score_q1``
    ... ``score_q12``): the family's own ``COLUMNS`` regex and ``UNPIVOT``, so a question about every column of
    a kind is asked of all of them in DuckDB's form (issue 63, item 4), not of the first one."""
    q, out = terms(question), []
    for start, members in families(names).items():
        words = {stem(w) for w in re.findall(r"[a-z]+", start.lower()) if len(w) > 1 and w not in _STOP}
        if not words or not words & q:
            continue
        rx = f"^{start}\\d+$"
        out.append(f"{members[0]} ... {members[-1]} ({len(members)} columns) are one family: COLUMNS('{rx}') is all "
                   f"of them (SELECT count_if(COLUMNS('{rx}') = 5) FROM t gives one count per column); UNPIVOT t ON "
                   f"COLUMNS('{rx}') INTO NAME item VALUE answer gives one row per column and answer.")
    return out


def lookup(question: str, types=(), *, columns=(), limit: int = MAX_ENTRIES, budget: int = MAX_CHARS) -> list[str]:
    """The reference lines for ``question`` over columns of ``types`` (or the ``columns`` themselves: anything
    with a name and a type): the column families it names first, then sheet entries, then functions it names,
    at most ``limit`` lines and ``budget`` characters."""
    types = [*types, *(c.type for c in columns)]
    out: list[str] = []
    used = 0
    lines = family_lines(question, [c.name for c in columns])
    for line in lines + [h.entry.text for h in rank(question, types)] + named_functions(question):
        if len(out) >= limit or used + len(line) > budget:
            break
        if line not in out:
            out.append(line)
            used += len(line)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Show the DuckDB reference lines a question would get.")
    ap.add_argument("question")
    ap.add_argument("--types", default="", help="comma-separated column types of the selected tables")
    ap.add_argument("--why", action="store_true", help="print each entry's score and shared words")
    a = ap.parse_args(argv)
    types = [t.strip() for t in a.types.split(",") if t.strip()]
    if a.why:
        for h in rank(a.question, types):
            print(f"{h.score:5.2f} {h.entry.name:15s} {' '.join(h.why)}")
    for line in lookup(a.question, types):
        print("-", line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
