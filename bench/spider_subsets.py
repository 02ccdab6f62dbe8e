"""Split one eval run over Spider dev into the subsets development did and did not look at.

- sample100: ../shared/benchmarks/spider_dev/sample100.txt, the questions the graph was developed on;
- held-out 100: sample200.txt minus sample100, used to check changes (its failures were read);
- test 100: bench/spider_test100.txt, run once in session 2, its failures read afterwards;
- the others (728): never read one by one to tune the graph. Three decisions used every dev question
  a wording triggers on, some of which fall here: the "both X and Y" note (25 questions), the
  rejected negation note (95) and the flag hints (18); see docs/benchmarks.md.

    .venv/bin/python bench/spider_subsets.py docs/results/spider_dev_full.jsonl.gz

Prints a markdown table: per subset, graph and baseline EX, the margin, median seconds and LLM
calls per question, and SQL that did not run.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from duckask.utils.eval.questions import read_ids
from duckask.utils.eval.records import read_records
from duckask.utils.eval.report import summarize

ROOT = Path(__file__).resolve().parents[1]
SPIDER = ROOT.parent / "shared" / "benchmarks" / "spider_dev"


def subsets(spider: Path) -> dict[str, set[str]]:
    s100 = set(read_ids(spider / "sample100.txt"))
    held = set(read_ids(spider / "sample200.txt")) - s100
    test = set(read_ids(ROOT / "bench" / "spider_test100.txt"))
    return {"sample100 (developed on)": s100, "held-out 100": held, "test 100": test}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("records", help="records of an eval run over Spider dev with --baseline single-prompt")
    ap.add_argument("--spider", default=str(SPIDER), help="the spider_dev folder (for the sample id files)")
    args = ap.parse_args(argv)
    records = read_records(args.records)
    parts = subsets(Path(args.spider))
    seen = set().union(*parts.values())
    parts["all others (not developed on)"] = {r["id"] for r in records} - seen
    parts["all"] = {r["id"] for r in records}
    print("| subset | questions | graph EX % | single prompt EX % | margin | graph median s | "
          "single median s | graph LLM calls/q | graph / single SQL did not run % |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, ids in parts.items():
        s = summarize([r for r in records if r["id"] in ids])
        if not s["questions"]:
            continue
        p, b = s["pipeline"], s.get("baseline") or {}
        margin = round(p["ex"] - b["ex"], 1) if b else None
        print(f"| {name} | {s['questions']} | {p['ex']} | {b.get('ex')} | {margin:+} | {p['median_s']} | "
              f"{b.get('median_s')} | {p['llm_calls_per_q']} | {p['sql_did_not_run']} / {b.get('sql_did_not_run')} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
