"""What running one query gave: ``QueryOutcome`` (every runner's result: a DuckDB file's, a live engine's)."""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass
class QueryOutcome:
    sql: str
    status: str                      # ok | refused | timeout | error
    df: pd.DataFrame | None = None
    error: str | None = None
    truncated: bool = False          # more rows existed than the row cap
    ms: float = 0.0
    engine_sql: str | None = None    # a live source: the query as the engine ran it (its dialect, its names)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def dedupe(cols: list[str]) -> list[str]:
    """Column names made unique (``id``, ``id_1``), as a DataFrame of the rows needs them."""
    seen: dict[str, int] = {}
    out = []
    for c in cols:
        n = seen.get(c, 0)
        out.append(c if n == 0 else f"{c}_{n}")
        seen[c] = n + 1
    return out
