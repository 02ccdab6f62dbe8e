"""Issue 32's table: each set without and with candidates, side by side (from committed eval records).

For each ``LABEL=OFF.jsonl,ON.jsonl``: EX, the oracle (any candidate right), the share and EX of each
confidence level as the run recorded it, median and p90 seconds (and x CAL, from the ``.cal`` file beside
each records file), LLM calls a question (each sampled draft counts as one), and the questions that
changed outcome.

    .venv/bin/python bench/candidates_compare.py \\
        spider100=docs/results/idioms/regress-spider100-r2.jsonl,docs/results/candidates/spider100-on.jsonl ...
"""
from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from duckask.utils.eval.records import read_records


def _cal(path: str) -> float | None:
    cal = Path(path).with_suffix(".cal")
    try:
        return float(cal.read_text().strip().splitlines()[-1])
    except (OSError, ValueError, IndexError):
        return None


def _q(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else 0.0


def row(label: str, path: str) -> tuple[str, dict[str, bool]]:
    recs = read_records(path)
    n = len(recs)
    right = {r["id"]: bool(r["correct"]) for r in recs}
    oracle = sum(bool(r["correct"]) or any(c.get("correct") for c in r.get("candidates") or []) for r in recs)
    levels = []
    for lv in ("high", "medium", "low"):
        got = [bool(r["correct"]) for r in recs if (r.get("confidence") or {}).get("level") == lv]
        levels.append(f"{len(got) / n:.0%}, " + (f"{sum(got) / len(got):.0%}" if got else "-"))
    secs = [r["seconds"] for r in recs]
    cal = _cal(path)
    med, p90 = statistics.median(secs), _q(secs, 0.9)
    x = f"{med / cal:.2f} / {p90 / cal:.2f}" if cal else "-"
    calls = statistics.mean(r["llm_calls"] for r in recs)
    return (f"| {label} | {n} | {sum(right.values()) / n:.0%} | {oracle / n:.0%} | " + " | ".join(levels)
            + f" | {med:.1f} / {p90:.1f} | {x} | {calls:.1f} |"), right


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pairs", nargs="+", help="LABEL=OFF.jsonl,ON.jsonl")
    a = ap.parse_args(argv)
    print("| set | n | EX | oracle | high: share, right | medium: share, right | low: share, right | "
          "median / p90 s | x CAL | LLM calls/q |\n|---|---:|---:|---:|---|---|---|---:|---:|---:|")
    changed = []
    for pair in a.pairs:
        label, paths = pair.split("=", 1)
        off, on = paths.split(",")
        line_off, r_off = row(f"{label}, without", off)
        line_on, r_on = row(f"{label}, **with**", on)
        print(line_off)
        print(line_on)
        both = set(r_off) & set(r_on)
        won = sorted(i for i in both if r_on[i] and not r_off[i])
        lost = sorted(i for i in both if r_off[i] and not r_on[i])
        changed.append(f"{label}: won {len(won)} ({', '.join(won)}), lost {len(lost)} ({', '.join(lost)})")
    print("\n" + "\n".join(changed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
