"""Answers about the database itself, from the catalog (introspection plus the semantic file): no SQL
from the model and no query on the data.

``answer_schema(text, catalog)`` picks one of four shapes, each a small function:
- ``describe_table``: a table the text names ("describe the teams table", "what columns does people
  have?"): its rows, description, keys and columns;
- ``explain_column``: a column the text names ("what does hbp mean?"): type, description, synonyms,
  allowed or sample values, and the tables that have it;
- ``locate``: "which table has salaries?", "where are birthplaces stored?": the best-ranked tables
  and the columns that matched;
- ``list_tables``: everything else ("what tables are there?"): each table with rows and description.
Each returns a short answer and a DataFrame to show.
"""
from __future__ import annotations

import re

import pandas as pd

from duckask.utils.schema.catalog import Catalog, Column, Table
from duckask.utils.schema.ranker import rank_tables

_LOCATE = re.compile(r"\bwhich (table|tables)\b|\bwhere\b|\bin which\b|\bwhat table\b|\bfind\b", re.I)
_SCHEMA_WORDS = re.compile(r"\b(which|what|where|table|tables|column|columns|field|fields|stored|kept|recorded|"
                           r"found|held|has|have|holds?|contains?|stores?|keeps?|records?|tracks?|lists?|"
                           r"includes?|is|are|the|in|do|does|you|i|can|data|about|information|info)\b", re.I)


def _words(text: str) -> list[str]:
    return [w.lower() for w in re.findall(r"[A-Za-z_][\w.]*", text)]


def _first_line(text: str) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


def describe_table(text: str, cat: Catalog) -> tuple[str, pd.DataFrame] | None:
    words = _words(text)
    lower = {t.lower(): t for t in cat.tables}
    named = [lower[w] for w in words if w in lower]
    if not named:
        return None
    if len(named) == 1 and re.search(r"\b(mean|stand for|represent)\b", text, re.I) and \
            any(w != named[0].lower() and _columns_named(cat, w) for w in words):
        return None  # "what does hr mean in batting?": the column's meaning
    t = cat.tables[named[0]]
    df = pd.DataFrame([{"column": c.name, "type": c.type, "key": _key(c, t), "description": _first_line(c.comment)}
                       for c in t.columns])
    about = f": {_first_line(t.comment)}" if t.comment else ""
    links = sorted({f"{c.name} -> {c.ref}" for c in t.columns if c.ref})
    keys = f" Primary key: {', '.join(t.pk)}." if t.pk else ""
    joins = f" Links: {'; '.join(links)}." if links else ""
    answer = (f"Table {t.name} ({t.rows:,} rows){about}. It has {len(t.columns)} columns: "
              f"{', '.join(c.name for c in t.columns[:25])}{', ...' if len(t.columns) > 25 else ''}.{keys}{joins}")
    return answer, df


def _key(c: Column, t: Table) -> str:
    parts = ["primary key"] if c.pk or c.name in t.pk else []
    if c.ref:
        parts.append(f"references {c.ref}")
    return "; ".join(parts)


def _columns_named(cat: Catalog, word: str) -> list[tuple[Table, Column]]:
    return [(t, c) for t in cat.tables.values() for c in t.columns
            if c.name.lower() == word or word in (s.lower() for s in c.synonyms)]


def explain_column(text: str, cat: Catalog) -> tuple[str, pd.DataFrame] | None:
    quoted = re.findall(r"[\"'`]([\w.]+)[\"'`]", text)
    candidates = [q.lower().split(".")[-1] for q in quoted] + _words(text)
    for w in candidates:
        w = w.split(".")[-1]
        found = _columns_named(cat, w)
        if not found or w in {"name", "id", "year", "type"} and not quoted:
            continue
        rows, lines = [], []
        for t, c in found:
            values = c.allowed or c.samples
            rows.append({"table": t.name, "column": c.name, "type": c.type, "description": _first_line(c.comment),
                         "values": ", ".join(map(str, values[:6]))})
        described = [r for r in rows if r["description"]]
        first = (described or rows)[0]
        where = ", ".join(sorted({r["table"] for r in rows}))
        meaning = f": {first['description']}" if first["description"] else " (no description in the schema)"
        lines.append(f"{first['column']} ({first['type']}, in {where}){meaning}.")
        if first["values"]:
            lines.append(f"Values such as {first['values']}.")
        return " ".join(lines), pd.DataFrame(rows)
    return None


def locate(text: str, cat: Catalog) -> tuple[str, pd.DataFrame] | None:
    if not _LOCATE.search(text):
        return None
    topic = _SCHEMA_WORDS.sub(" ", text)
    ranked = [r for r in rank_tables(cat, topic) if r.score > 0][:3]
    if not ranked:
        return None
    rows = [{"table": r.table, "score": round(r.score, 1), "why": "; ".join(r.reasons[:4]),
             "description": _first_line(cat.tables[r.table].comment)} for r in ranked]
    best = cat.tables[ranked[0].table]
    about = f" ({_first_line(best.comment)})" if best.comment else ""
    others = f" Also related: {', '.join(r.table for r in ranked[1:])}." if len(ranked) > 1 else ""
    return f"Most likely table {best.name}{about}.{others}", pd.DataFrame(rows)


def list_tables(text: str, cat: Catalog) -> tuple[str, pd.DataFrame]:
    rows = [{"table": t.name, "rows": t.rows, "columns": len(t.columns), "description": _first_line(t.comment)}
            for t in cat.tables.values()]
    names = ", ".join(list(cat.tables)[:30]) + (", ..." if len(cat.tables) > 30 else "")
    return f"This database has {len(cat.tables)} tables: {names}.", pd.DataFrame(rows)


#: The shapes, in the order they are tried (``list_tables`` always answers).
SHAPES = [describe_table, explain_column, locate]


def answer_schema(text: str, cat: Catalog) -> tuple[str, pd.DataFrame, str]:
    """(answer, a DataFrame to show, the shape that answered)."""
    for shape in SHAPES:
        out = shape(text, cat)
        if out:
            return out[0], out[1], shape.__name__
    answer, df = list_tables(text, cat)
    return answer, df, "list_tables"
