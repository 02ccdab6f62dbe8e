"""Does the LLM grader earn its place? Its recall on wrong first results, its false fails on right ones,
and its seconds, on the embedded model (or an endpoint with --base-url), against the rules grader.

Replays an eval run's records: each question's first result (``first_sql``, run again on its database,
scored against the gold result as the run scored it) goes to the rules grader (``rule_check``) and then
to the LLM grader (``llm_verdict``, the code ResponseGrader runs with ``grader: llm``). A reply the
grader cannot use counts as a pass, as in the graph. No SQL is generated, so the figure is the grader's
alone. CAL (../shared/tools/calibrate.py) is timed in the same run and written beside the output.

    .venv/bin/python bench/grader_eval.py docs/results/spider-sample200/shipped.jsonl \\
        --questions ../shared/benchmarks/spider_dev --out docs/results/confidence/grader
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from duckask.nodes.response_grader import llm_verdict
from duckask.utils.checks.registry import rule_check
from duckask.utils.eval.records import replay

ROOT = Path(__file__).resolve().parents[1]


def _pct(xs: list[bool]) -> float | None:
    return round(100.0 * sum(xs) / len(xs), 1) if xs else None


def main(argv: list[str] | None = None) -> int:
    from duckask.utils.config import load_settings
    from duckask.utils.llm import get_llm

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("records", nargs="+")
    ap.add_argument("--questions", required=True, help="the question set the records came from")
    ap.add_argument("--base-url", help="an OpenAI-compatible endpoint instead of the embedded model")
    ap.add_argument("--model")
    ap.add_argument("--out", required=True, help="writes OUT.jsonl (a verdict a question) and OUT.json (the summary)")
    a = ap.parse_args(argv)
    if not a.base_url:
        sys.path.insert(0, str(ROOT.parent / "shared" / "tools"))
        from calibrate import calibrate

        Path(a.out + ".cal").write_text(str(calibrate()) + "\n")
    opts = {k: v for k, v in (("base_url", a.base_url), ("model", a.model)) if v}
    llm = get_llm(load_settings(None, **opts))
    rows = []
    with open(a.out + ".jsonl", "w") as f:
        for rec, q, db, _cat in replay(a.records, a.questions):
            if not rec.get("first_sql") or rec.get("gold_error"):
                continue
            out = db.run(rec["first_sql"])
            if not out.ok:
                continue        # a query that did not run never reaches the grader
            rules = rule_check(q.question, out.df, rec["first_sql"])
            t0 = time.perf_counter()
            try:
                v = llm_verdict(llm, q.question, rec["first_sql"], out.df)
            except Exception as e:   # unusable reply: a pass, as in the graph
                v = {"verdict": "pass", "critique": "", "by": f"fallback ({type(e).__name__})"}
            row = {"id": rec["id"], "right": bool(rec.get("first_correct")), "rules": "fail" if rules else "pass",
                   "llm": v["verdict"], "by": v["by"], "critique": v["critique"],
                   "seconds": round(time.perf_counter() - t0, 2)}
            rows.append(row)
            f.write(json.dumps(row) + "\n")
            print(f"[{len(rows)}] {row['id']} right={row['right']} rules={row['rules']} llm={row['llm']} "
                  f"{row['seconds']}s", flush=True)
    wrong = [r for r in rows if not r["right"]]
    right = [r for r in rows if r["right"]]
    secs = sorted(r["seconds"] for r in rows)

    def stats(fails) -> dict:
        return {"recall_on_wrong": _pct([fails(r) for r in wrong]),
                "false_fail_on_right": _pct([fails(r) for r in right])}
    summary = {"first_results": len(rows), "wrong": len(wrong), "right": len(right),
               "rules": stats(lambda r: r["rules"] == "fail"), "llm": stats(lambda r: r["llm"] == "fail"),
               "rules_then_llm": stats(lambda r: "fail" in (r["rules"], r["llm"])),
               "llm_median_s": secs[len(secs) // 2] if secs else None,
               "unusable_replies": sum(1 for r in rows if r["by"].startswith("fallback")),
               "backend": a.base_url or "embedded", "records": a.records}
    Path(a.out + ".json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
