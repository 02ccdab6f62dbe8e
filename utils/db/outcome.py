"""What running one query gave: ``QueryOutcome`` (every runner's result: a DuckDB file's, a live engine's), and the
byte budget every runner fetches within (``fetch_within``)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd


@dataclass
class QueryOutcome:
    sql: str
    status: str                      # ok | refused | timeout | error
    df: pd.DataFrame | None = None
    error: str | None = None
    truncated: bool = False          # more rows existed than the row cap (or than the byte budget let in)
    ms: float = 0.0
    engine_sql: str | None = None    # a live source: the query as the engine ran it (its dialect, its names)
    cut: str | None = None           # what the byte budget cut (rows past result_bytes, cells past cell_bytes)

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


@dataclass(frozen=True)
class Budget:
    """What one result may hold: ``rows`` (the row cap), ``result_bytes`` (its cells' bytes summed), ``cell_bytes``
    (one cell's). Text and bytes count their length in bytes, a nested value its parts, anything else 8."""
    rows: int
    result_bytes: int
    cell_bytes: int


#: How many rows a fetch asks for at most at once (the first asks for one, to learn a row's size).
MOST_AT_ONCE = 1024
_CUT = "… [cut: {n:,} bytes]"


def _size(value, depth: int = 0) -> int:
    if isinstance(value, str):
        return len(value.encode("utf-8", "surrogatepass"))
    if isinstance(value, bytes | bytearray):
        return len(value)
    if isinstance(value, dict) and depth < 8:
        return sum(_size(k, depth + 1) + _size(v, depth + 1) for k, v in value.items())
    if isinstance(value, list | tuple) and depth < 8:
        return sum(_size(v, depth + 1) for v in value)
    return 8


def _cell(value, most: int) -> tuple[object, int, bool]:
    """(the value within ``most`` bytes, its size as kept, whether it was cut): text is cut at a character, bytes at
    a byte, a nested value too large becomes the start of its text."""
    size = _size(value)
    if size <= most:
        return value, size, False
    if isinstance(value, bytes | bytearray):
        return bytes(value[:most]), most, True
    text = value if isinstance(value, str) else str(value)
    kept = text.encode("utf-8", "surrogatepass")[:most].decode("utf-8", "ignore")
    return kept + _CUT.format(n=size), most, True


def fetch_within(fetch: Callable[[int], list], budget: Budget) -> tuple[list[tuple], bool, str | None]:
    """(rows, truncated, what was cut): rows read through ``fetch(n)`` (at most n more rows, [] at the end) until
    ``budget.rows + 1`` rows (the one past the cap says there were more) or ``budget.result_bytes``. A row past the
    byte budget is not kept (the first row always is, its cells cut to ``cell_bytes``), and the fetch stops there:
    the engine is not asked for more. Each fetch asks for as many rows as the bytes left should hold, judged from
    the rows so far, so no more than about one budget is in memory at once."""
    rows: list[tuple] = []
    used, cells_cut, stopped, ask = 0, 0, False, 1
    while len(rows) <= budget.rows and not stopped:
        chunk = fetch(min(ask, budget.rows + 1 - len(rows)))
        if not chunk:
            break
        for raw in chunk:
            kept = [_cell(v, budget.cell_bytes) for v in raw]
            size = sum(k[1] for k in kept)
            if rows and used + size > budget.result_bytes:
                stopped = True
                break
            rows.append(tuple(k[0] for k in kept))
            used += size
            cells_cut += sum(k[2] for k in kept)
        ask = max(1, min(MOST_AT_ONCE, (budget.result_bytes - used) // max(1, used // max(1, len(rows)))))
    cut = []
    if stopped:
        cut.append(f"rows past result_bytes={budget.result_bytes:,} bytes were not fetched")
    if cells_cut:
        cut.append(f"{cells_cut:,} value(s) longer than cell_bytes={budget.cell_bytes:,} bytes were cut")
    truncated = stopped or len(rows) > budget.rows
    return rows[:budget.rows], truncated, "; ".join(cut) or None
