"""What each answer check did in a live run: how often it fired, on right answers (false alarms) and on wrong ones
(catches), and how the question ended after it spoke. (No LLM, no database: the eval records' grades.)

ResponseGrader records which check failed an answer; the eval run scores the SQL each grade judged against the
gold (``judged_correct``, records written since issue 44). A check that fires sends the generator its critique
and the checks run again on the new answer, so one question may count a check more than once; "fixed" counts the
questions whose final answer was right after the check fired on a wrong one, "lost" those whose final answer was
wrong after it fired on a right one.

    .venv/bin/python bench/answer_checks_live.py docs/results/nba-heldout/models.jsonl docs/results/lahman/shipped.jsonl
"""
from __future__ import annotations

import argparse
from collections import Counter, defaultdict
from pathlib import Path

from duckask.utils.eval.records import read_records

FIELDS = ("fired", "questions", "on right", "on wrong", "fixed", "lost")


def live(path: str) -> tuple[dict[str, Counter], int]:
    """{check: Counter(FIELDS)} over one run's records, and how many records carried the judged answers' scores."""
    out: dict[str, Counter] = defaultdict(Counter)
    scored = 0
    for r in read_records(path):
        grades = [g for g in r.get("grades") or [] if g.get("check")]
        if not grades or any("judged_correct" not in g for g in grades):
            continue
        scored += 1
        final = bool(r.get("correct"))
        for name in dict.fromkeys(g["check"] for g in grades):
            mine = [g for g in grades if g["check"] == name]
            c = out[name]
            c["fired"] += len(mine)
            c["questions"] += 1
            c["on right"] += sum(bool(g["judged_correct"]) for g in mine)
            c["on wrong"] += sum(not g["judged_correct"] for g in mine)
            c["fixed"] += any(not g["judged_correct"] for g in mine) and final
            c["lost"] += any(g["judged_correct"] for g in mine) and not final
    return out, scored


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("records", nargs="+", help="eval records (.jsonl or .jsonl.gz)")
    a = ap.parse_args(argv)
    print("| records | check | " + " | ".join(FIELDS) + " |\n|---|---|" + "---:|" * len(FIELDS))
    for path in a.records:
        table, scored = live(path)
        if not table:
            print(f"| {Path(path).parent.name}/{Path(path).name} | none fired ({scored} records with scored "
                  f"grades) |" + " |" * len(FIELDS))
        for name, c in sorted(table.items(), key=lambda kv: -kv[1]["fired"]):
            print(f"| {Path(path).parent.name}/{Path(path).name} | {name} | "
                  + " | ".join(str(c[f]) for f in FIELDS) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
