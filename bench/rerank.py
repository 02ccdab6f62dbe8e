"""The read-back reranker against voting, on drafts already drawn and judged (issue 63, item 2).

Each eval record keeps its ballot: every distinct draft that ran, the one the vote chose, and whether each was right
(strict EX). Where a record holds two or more drafts that ran and disagree on being right (the only questions a
choice can change), every draft is run again for its first rows and scored by the embedded model as a reviewer:
the log-probability of the question given the SQL and its result, p(x | y) in Zhang et al., "Coder-Reviewer
Reranking for Code Generation" (2022), as LEVER (Ni et al., 2023) scores a program with its execution result. Three
ways to choose are compared on the same drafts: the vote as it chose, the reviewer alone, and the reviewer plus the
log of the drafts agreeing on the result (votes as a prior). Nothing is fitted.

    .venv/bin/python bench/rerank.py lahman:candidates spider-sample100:candidates nba-heldout:candidates \\
        idioms-heldout:candidates spider-fit400:shipped --out docs/results/rerank.json
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from run import CALIBRATE, RESULTS, calibrate, commit, load, now  # noqa: E402

from duckask.utils.sql.compare import results_match  # noqa: E402
from duckask.utils.sql.voting import reviewer_messages  # noqa: E402


def options_of(suite: dict, config: str) -> dict:
    """The settings a suite's configuration ran with that open its database (semantic file, examples)."""
    args = list(suite.get("options") or []) + list(suite["configs"][config] or [])
    out = {}
    for flag, key in (("--semantic", "descriptions"), ("--descriptions", "descriptions"), ("--examples", "examples")):
        if flag in args:
            out[key] = args[args.index(flag) + 1]
    return out


def contested(path: Path) -> list[dict]:
    """The records whose ballot holds two or more drafts that ran and disagree on being right."""
    out = []
    for line in path.read_text().splitlines():
        r = json.loads(line)
        ok = [c for c in r.get("candidates") or [] if c.get("status") == "ok"]
        if len(ok) >= 2 and len({bool(c.get("correct")) for c in ok}) > 1:
            out.append({**r, "candidates": ok})
    return out


def main(argv: list[str] | None = None) -> int:
    from duckask.utils.api import prepare
    from duckask.utils.config import load_settings
    from duckask.utils.eval.questions import load_questions, resolve_db
    from duckask.utils.llm import get_llm

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("targets", nargs="+", metavar="SUITE:CONFIG")
    ap.add_argument("--out", default=str(RESULTS / "rerank.json"))
    args = ap.parse_args(argv)
    suites = load()
    cal = calibrate() if CALIBRATE.exists() else None
    llm = get_llm(load_settings(None))
    started, per_suite, rows, t0 = now(), {}, [], time.time()
    for target in args.targets:
        name, config = target.split(":")
        suite = suites[name]
        records = contested(RESULTS / name / f"{config}.jsonl")
        questions, base = load_questions(ROOT / suite["questions"])
        by_id = {q.id: q for q in questions}
        tally = {"questions": len(records), "vote": 0, "reviewer": 0, "reviewer+votes": 0, "oracle": len(records)}
        for i, r in enumerate(records, 1):
            q = by_id[r["id"]]
            db = resolve_db(q, db=str(ROOT / suite["db"]) if suite.get("db") else None, db_dir=base)
            prep = prepare(db, llm=llm, **options_of(suite, config))
            scored = []
            for c in r["candidates"]:
                out = prep.database.run(c["sql"])
                df = out.df if out.ok else None
                reply = llm.score(reviewer_messages(c["sql"], df), " " + r["question"], node="Reviewer")
                votes = len(c.get("positions") or [0])
                scored.append({"correct": bool(c.get("correct")), "chosen": bool(c.get("chosen")), "df": df,
                               "review": reply.mean_logprob * reply.completion_tokens, "votes": votes})
            for s in scored:            # the drafts agreeing with each on the result (as the vote groups them)
                s["agree"] = sum(o["votes"] for o in scored if o["df"] is not None and s["df"] is not None
                                 and results_match(o["df"], s["df"]))
            pick = {"vote": next((s for s in scored if s["chosen"]), scored[0]),
                    "reviewer": max(scored, key=lambda s: s["review"]),
                    "reviewer+votes": max(scored, key=lambda s: s["review"] + math.log(max(s["agree"], 1)))}
            for k, s in pick.items():
                tally[k] += s["correct"]
            rows.append({"suite": target, "id": r["id"], **{k: s["correct"] for k, s in pick.items()},
                         "drafts": [{k: v for k, v in s.items() if k != "df"} for s in scored]})
            print(f"{target} {i}/{len(records)} {r['id']}: " + " ".join(f"{k}={int(s['correct'])}"
                                                                        for k, s in pick.items()), file=sys.stderr)
        per_suite[target] = tally
    total = {k: sum(t[k] for t in per_suite.values()) for k in ("questions", "vote", "reviewer", "reviewer+votes")}
    Path(args.out).write_text(json.dumps({"command": " ".join(["bench/rerank.py", *sys.argv[1:]]), "started": started,
                                          "finished": now(), "commit": commit(), "cal_s": cal, "per_suite": per_suite,
                                          "total": total, "records": rows}, indent=1) + "\n")
    print(json.dumps({"per_suite": per_suite, "total": total, "cal_s": cal, "seconds": round(time.time() - t0)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
