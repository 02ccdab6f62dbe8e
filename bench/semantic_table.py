"""The semantic-layer benchmark table from eval records: SQL path vs plan path vs both (plan, then SQL).

Each "both" run answers a question by the plan when the plan holds and by the SQL path otherwise; the
plan path alone is read from the same records (a question counts only if the plan answered it and was
right). Each row gives EX, the share answered by the plan, median seconds (and as a multiple of CAL, the
calibration job timed before that run: <records>.cal), LLM calls and prompt tokens per question.

    .venv/bin/python bench/semantic_table.py "Lahman 25" docs/results/lahman/taught-sql.jsonl \
        docs/results/lahman/taught.jsonl [more pairs: LABEL SQL.jsonl BOTH.jsonl ...]
"""
from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path


def _records(path: str) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def _cal(path: str) -> float | None:
    f = Path(path).with_suffix(".cal")
    try:
        return float(f.read_text().strip().splitlines()[-1])
    except (OSError, ValueError, IndexError):
        return None


def _row(label: str, recs: list[dict], cal: float | None, plan_only: bool = False) -> str:
    n = len(recs)
    ok = [r["correct"] and (r.get("path") == "plan" or not plan_only) for r in recs]
    planned = sum(1 for r in recs if r.get("path") == "plan")
    secs = statistics.median(r["seconds"] for r in recs)
    x = f"{secs / cal:.2f}" if cal else "n/a"
    return (f"| {label} | {n} | {100 * sum(ok) / n:.1f} ({sum(ok)}) | {100 * planned / n:.0f} % | "
            f"{secs:.1f} s = {x} x CAL | {statistics.mean(r['llm_calls'] for r in recs):.2f} | "
            f"{statistics.mean(r['prompt_tokens'] for r in recs):.0f} |")


def table(label: str, sql_path: str, both_path: str) -> list[str]:
    sql, both = _records(sql_path), _records(both_path)
    plan_recs = [r for r in both if r.get("path") == "plan"]
    cal_sql, cal_both = _cal(sql_path), _cal(both_path)
    out = [_row(f"{label}: SQL path", sql, cal_sql),
           _row(f"{label}: plan path alone", both, cal_both, plan_only=True),
           _row(f"{label}: both (plan, then SQL)", both, cal_both)]
    if plan_recs:
        ex = sum(r["correct"] for r in plan_recs)
        out.append(f"|   of which the plan answered | {len(plan_recs)} | {100 * ex / len(plan_recs):.1f} ({ex}) | "
                   f"100 % | {statistics.median(r['seconds'] for r in plan_recs):.1f} s | | |")
    return out


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or len(args) % 3:
        print(__doc__)
        return 2
    print("| run | n | EX % (right) | answered by a plan | median s | LLM calls/q | prompt tokens/q |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for i in range(0, len(args), 3):
        print("\n".join(table(*args[i:i + 3])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
