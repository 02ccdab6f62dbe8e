"""Answers in real sentences, and the check that they say what the result says.

``PROMPT`` asks the model for one or two plain sentences from the question and at most ``MAX_ROWS``
rows of the result (no SQL: fewer tokens, and nothing to paraphrase but the data). ``check_sentence``
then compares every number and every capitalised name in the sentence with the result:

- a number must be a value of the result (to the precision it is written with; a percentage may be
  a fraction times 100), a number inside a text value (dates), the row count, or a number of the
  question (a year the question names);
- a name (a capitalised word that does not open a sentence) must occur in the result's text values,
  its column names or the question.

Anything else is a disagreement, and DataAnalyzer falls back to the sentence its rules write.
"""
from __future__ import annotations

import math
import re

import pandas as pd

from duckask.utils.schema.catalog import fold

MAX_ROWS = 20

PROMPT = """Question: {question}
Result of the query ({n} rows{more}):
{rows}
Answer the question in one or two plain sentences with the names and numbers from the result. No SQL, no markdown."""


def result_text(df: pd.DataFrame, max_rows: int = MAX_ROWS) -> str:
    """The first rows as CSV, long text values cut, for the prompt."""
    head = df.head(max_rows).copy()
    for c in head.columns:
        if head[c].dtype == object:
            head[c] = head[c].map(lambda v: v[:60] if isinstance(v, str) else v)
    return head.to_csv(index=False).strip()


def prompt(question: str, df: pd.DataFrame, truncated: bool = False) -> str:
    return PROMPT.format(question=question, n=len(df), more="+" if truncated else "", rows=result_text(df))


_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s?%)?(?![\w])")
_NAME = re.compile(r"\b[A-Z][\w'’.-]*\b")
# Capitalised words that are not names of anything in the data.
_COMMON = {"i", "the", "a", "an", "in", "on", "of", "and", "or", "with", "for", "by", "to", "at", "from", "there",
           "this", "that", "these", "those", "it", "its", "he", "she", "they", "his", "her", "their", "who", "what",
           "which", "no", "yes", "total", "average", "sql", "result", "results", "answer", "query", "none",
           "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
           "mr", "mrs", "ms", "dr", "st", "id", "usd", "us"}


def _numbers(text: str) -> list[tuple[float, int, bool, str]]:
    """(value, decimals written, is a percentage, as written) for each number in ``text``."""
    out = []
    for m in _NUMBER.finditer(text):
        raw = m.group(0)
        pct = raw.endswith("%")
        digits = raw.rstrip("% ").replace(",", "")
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        out.append((float(digits), decimals, pct, raw))
    return out


def _result_numbers(df: pd.DataFrame) -> list[float]:
    vals: list[float] = [float(len(df)), float(len(df.columns))]
    for c in df.columns:
        for v in df[c].head(200):
            if isinstance(v, bool) or v is None:
                continue
            if isinstance(v, (int, float)) and not (isinstance(v, float) and math.isnan(v)):
                vals.append(float(v))
            else:
                try:
                    vals.append(float(v))  # Decimal, numpy numbers
                except (TypeError, ValueError):
                    vals.extend(n for n, *_ in _numbers(str(v)))
    return vals


def _matches(x: float, decimals: int, pct: bool, known: list[float]) -> bool:
    tol = 0.5 * 10 ** (-decimals) + 1e-9
    for v in known:
        if abs(abs(x) - abs(v)) <= tol or (pct and abs(x - v * 100) <= tol):
            return True
        # "29.3 million" style rounding is not produced by the prompt; "2.61" for 2.6100001 is.
        if decimals == 0 and abs(v) >= 1000 and abs(x - v) / abs(v) < 0.005 and abs(x) >= 1000:
            return True
    return False


def check_sentence(sentence: str, df: pd.DataFrame, question: str = "") -> list[str]:
    """What in ``sentence`` the result does not support (empty: it agrees)."""
    problems: list[str] = []
    known = _result_numbers(df) + [n for n, *_ in _numbers(question)]
    for x, decimals, pct, raw in _numbers(sentence):
        if not _matches(x, decimals, pct, known):
            problems.append(f"the number {raw} is not in the result")
    texts = " ".join([fold(str(v)) for c in df.columns for v in df[c].head(200) if isinstance(v, str)]
                     + [fold(str(c)).replace("_", " ") for c in df.columns] + [fold(question)])
    for _start, sentence_part in _sentences(sentence):
        for m in _NAME.finditer(sentence_part):
            word = m.group(0).rstrip(".'’")
            if m.start() == 0 or fold(word) in _COMMON or len(word) < 2:
                continue
            w = fold(word)
            stem = w[:-2] if w.endswith("'s") or w.endswith("’s") else w
            if stem not in texts and stem.rstrip("s") not in texts:
                problems.append(f"the name {word!r} is not in the result")
    return problems


def _sentences(text: str):
    pos = 0
    for part in re.split(r"(?<=[.!?])\s+", text.strip()):
        yield pos, part
        pos += len(part) + 1
