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
