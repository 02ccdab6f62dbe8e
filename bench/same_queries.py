"""Whether a refactor left behaviour alone: two runs' records of the same questions compared question by question.

    .venv/bin/python bench/same_queries.py BEFORE.jsonl AFTER.jsonl [--replace BEFORE_RERUN.jsonl ...]

For each question both runs hold: the same final SQL (whitespace folded), the same first query, the same confidence
level, the same answer (``correct``); and which questions hit the time budget in either run (``budget_stop``: a
run slowed by other work on the machine answers differently, so such a question is asked again alone and its rerun
given with ``--replace``, which takes the place of its record in BEFORE).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path


def _records(path: str) -> dict[str, dict]:
    return {r["id"]: r for r in (json.loads(line) for line in Path(path).read_text().splitlines() if line.strip())}


def _fold(sql: str | None) -> str:
    return " ".join((sql or "").split())


def _level(r: dict) -> str | None:
    return (r.get("confidence") or {}).get("level") if isinstance(r.get("confidence"), dict) else r.get("confidence")


def compare(before: dict[str, dict], after: dict[str, dict]) -> dict:
    ids = [i for i in before if i in after]
    differ = [i for i in ids if _fold(before[i].get("sql")) != _fold(after[i].get("sql"))]
    return {"questions": len(ids), "same final SQL": len(ids) - len(differ), "differ": differ,
            "same first SQL": sum(_fold(before[i].get("first_sql")) == _fold(after[i].get("first_sql")) for i in ids),
            "EX before": sum(bool(before[i].get("correct")) for i in ids),
            "EX after": sum(bool(after[i].get("correct")) for i in ids),
            "confidence level differs": [i for i in ids if _level(before[i]) != _level(after[i])],
            "budget stop": {"before": [i for i in ids if before[i].get("budget_stop")],
                            "after": [i for i in ids if after[i].get("budget_stop")]}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--replace", nargs="*", default=[], help="records of BEFORE's questions asked again alone")
    args = ap.parse_args(argv)
    before = _records(args.before)
    for path in args.replace:
        before.update(_records(path))
    print(json.dumps(compare(before, _records(args.after)), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
