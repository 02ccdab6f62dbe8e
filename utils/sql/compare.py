"""Execution-accuracy scoring: does a predicted result equal the gold result?

Spider (test-suite) semantics, the default: rows compared as a multiset; order matters only when
the gold SQL has a top-level ORDER BY; any permutation of the columns is accepted; numbers are
compared after rounding (so 4 == 4.0 and 0.1+0.2 == 0.3); NULL equals NULL.
BIRD semantics (``mode="bird"``): the sets of rows are compared.
"""
from __future__ import annotations

import datetime as dt
import decimal
import itertools
import math
from collections import Counter
from typing import Any

import numpy as np
import pandas as pd

MAX_PERMUTED_COLUMNS = 6


def _norm(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, float) and math.isnan(v):
        return None
    if v is pd.NaT or v is pd.NA:  # DuckDB returns NULL in an INTEGER column as pd.NA (nullable Int dtypes)
        return None
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (dt.date, dt.datetime, pd.Timestamp, np.datetime64)):
        # A DATE (midnight) compares equal to its ISO text, as expected rows from JSON/CSV give it.
        ts = pd.Timestamp(v)
        return ts.date().isoformat() if ts.tzinfo is None and ts == ts.normalize() else str(ts)
    if isinstance(v, (int, float, decimal.Decimal)) or hasattr(v, "dtype"):
        try:
            f = float(v)
        except (TypeError, ValueError):
            return str(v)
        return None if math.isnan(f) else round(f, 4) + 0.0
    if isinstance(v, str):
        return v.strip()
    return str(v)


def _rows(df: pd.DataFrame) -> list[tuple]:
    return [tuple(_norm(v) for v in row) for row in df.itertuples(index=False, name=None)]


def results_match(pred: pd.DataFrame | None, gold: pd.DataFrame | None, *, order_matters: bool = False,
                  mode: str = "spider") -> bool:
    """True when ``pred`` equals ``gold`` under the chosen semantics."""
    if pred is None or gold is None:
        return False
    if pred.shape[1] != gold.shape[1]:
        return False
    g_rows, p_rows = _rows(gold), _rows(pred)
    if mode == "spider" and len(g_rows) != len(p_rows):
        return False
    ncols = gold.shape[1]
    perms = itertools.permutations(range(ncols)) if ncols <= MAX_PERMUTED_COLUMNS else [tuple(range(ncols))]
    g_key = set(g_rows) if mode == "bird" else (g_rows if order_matters else Counter(g_rows))
    for perm in perms:
        cand = [tuple(r[i] for i in perm) for r in p_rows]
        if mode == "bird":
            if set(cand) == g_key:
                return True
        elif order_matters:
            if cand == g_key:
                return True
        elif Counter(cand) == g_key:
            return True
    return False


def _joined(values: tuple) -> str:
    return " ".join("" if v is None else str(v) for v in values)


def _column(df: pd.DataFrame, names: tuple[str, ...]) -> list[Any] | None:
    """The values of ``names`` row by row, normalized: one column's values, or several joined as text ("LeBron" and
    "James" as "LeBron James"); None when a name is not a column of ``df``."""
    if any(n not in df.columns for n in names):
        return None
    rows = [tuple(_norm(v) for v in row) for row in df[list(names)].itertuples(index=False, name=None)]
    return [r[0] for r in rows] if len(names) == 1 else [_joined(r) for r in rows]


def _matches(want: list[Any], got: list[Any]) -> bool:
    """Two columns' values, position by position: equal, or equal as text (a number joined into a name)."""
    return all(w == g or (isinstance(w, str) or isinstance(g, str)) and str(w) == str(g) for w, g in zip(want, got))


def answer_holds(pred: pd.DataFrame | None, gold: pd.DataFrame | None, answer_columns: list[list[str]] | None, *,
                 order_matters: bool = False) -> bool:
    """Whether ``pred`` holds what the question asks for, as a user reads it: for each of ``answer_columns`` (the
    gold columns the question asks for; an entry of several, such as a first and a last name, may be answered as
    one joined column, and a gold name may be answered by a first and a last name column), some column of ``pred``
    (or two, joined) holds its values row for row; extra columns are allowed, the rows must be as many as the gold's
    and, as a whole, the same (in order when the gold's ORDER BY makes it matter). ``None``: every gold column."""
    if pred is None or gold is None or len(pred) != len(gold):
        return False
    entries = [tuple(e) for e in answer_columns] if answer_columns is not None else [(c,) for c in gold.columns]
    read = [_column(gold, e) for e in entries]
    wants = [w for w in read if w is not None]
    if len(wants) != len(read):                     # a name that is not a gold column
        return False
    names = list(pred.columns)
    singles = [(n,) for n in names]
    pairs = [(a, b) for a in names for b in names if a != b] if len(names) <= 12 else []
    pred_cols = {c: _column(pred.loc[:, ~pred.columns.duplicated()], c) for c in [*singles, *pairs]}
    order = range(len(pred)) if order_matters else None
    # Rows may come in another order: find a row order of pred under which every entry's column matches.
    options = []
    for want in wants:
        found = [c for c, got in pred_cols.items()
                 if got is not None and (Counter(map(str, got)) == Counter(map(str, want)))]
        if not found:
            return False
        options.append(found)
    for choice in itertools.islice(itertools.product(*options), 2000):
        got_rows = list(zip(*(pred_cols[c] for c in choice)))
        want_rows = list(zip(*wants))
        if order is not None:
            if all(_matches(list(w), list(g)) for w, g in zip(want_rows, got_rows)):
                return True
        elif Counter(tuple(map(str, r)) for r in got_rows) == Counter(tuple(map(str, r)) for r in want_rows):
            return True
    return False
