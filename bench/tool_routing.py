"""Tool routing with the embedded model (issue 24's benchmark): which source a question goes to.

The Lahman demo database, with two tools configured as a user would (an OMDb-style film API and SearxNG
web search; neither is called here: only the decision is measured). Each labelled question
(``bench/tool_routing_{dev,heldout}.yaml``) runs through IntentRouter and ChooseSource as in the graph;
the source is ChooseSource's (``database``, ``api`` for the film tool, ``web``, ``none``), or the database
for a turn IntentRouter sends elsewhere on the database (schema, SQL). Reported: accuracy, the confusion
matrix, LLM calls and seconds per question with CAL (``../shared/tools/calibrate.py``) timed in the same run.

    .venv/bin/python bench/tool_routing.py bench/tool_routing_dev.yaml --out docs/results/tools/dev
    .venv/bin/python bench/tool_routing.py bench/tool_routing_heldout.yaml --out docs/results/tools/heldout
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

import yaml
from pocketflow import Flow

ROOT = Path(__file__).resolve().parents[1]
TOOLS = [
    {"name": "omdb", "type": "http_json", "description": "films and movies by title: plot, year, director, cast, "
     "runtime, ratings", "url": "https://www.omdbapi.com/?apikey={key}&t={title}", "key_env": "OMDB_API_KEY",
     "params": {"title": "the film's title"}},
    {"name": "web", "type": "searxng", "url": "http://localhost:8888"},
]
KIND = {"omdb": "api", "web": "web", "database": "database", "none": "none"}


def route(prep, question: str) -> tuple[str, dict]:
    from duckask.nodes import ChooseSource, Context, IntentRouter
    from duckask.utils.llm import MeteredLLM

    ctx = Context(llm=MeteredLLM(prep.llm), settings=prep.settings, db=prep.database, catalog=prep.catalog,
                  tools=prep.tools)
    router, choose = IntentRouter(ctx), ChooseSource(ctx)
    router - "data" >> choose
    router - "general" >> choose
    shared = {"question": question, "original_question": question, "history": [], "trace": []}
    Flow(start=router).run(shared)
    source = (shared.get("source") or {}).get("source") or "database"   # schema / sql / change: the database
    return KIND.get(source, source), {"intent": shared.get("intent"), "intent_by": shared.get("intent_by"),
                                      "choice": shared.get("source"), "llm_calls": len(shared.get("llm_calls", [])),
                                      "trace": [(t["node"], t["action"]) for t in shared["trace"]]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("questions")
    ap.add_argument("--out", required=True, help="path stem: writes .jsonl, .json and .cal")
    ap.add_argument("--no-cal", action="store_true")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT.parent / "shared" / "tools"))
    from duckask.data.lahman import demo_db_path
    from duckask.utils.api import prepare

    items = yaml.safe_load(Path(args.questions).read_text())
    prep = prepare(str(demo_db_path()), tools=TOOLS, examples="", semantic="")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    records = []
    with out.with_suffix(".jsonl").open("w") as fh:
        for i, item in enumerate(items, 1):
            t0 = time.perf_counter()
            got, detail = route(prep, item["question"])
            rec = {**item, "got": got, "ok": got == item["source"], "seconds": round(time.perf_counter() - t0, 2),
                   **detail}
            records.append(rec)
            fh.write(json.dumps(rec, default=str) + "\n")
            print(f"[{i}/{len(items)}] {'ok ' if rec['ok'] else 'BAD'} {item['source']:>8} -> {got:<8} "
                  f"{rec['seconds']:5.1f}s {item['question']}", file=sys.stderr)
    cal = None
    if not args.no_cal:
        from calibrate import calibrate

        cal = calibrate()
        out.with_suffix(".cal").write_text(f"{cal:.3f}\n")
    secs = [r["seconds"] for r in records]
    summary = {
        "questions": len(records), "correct": sum(r["ok"] for r in records),
        "accuracy": round(sum(r["ok"] for r in records) / len(records), 3),
        "by_label": {k: f"{sum(r['ok'] for r in records if r['source'] == k)}/{n}"
                     for k, n in Counter(r["source"] for r in records).items()},
        "confusion": dict(Counter(f"{r['source']}->{r['got']}" for r in records)),
        "llm_calls_mean": round(sum(r["llm_calls"] for r in records) / len(records), 2),
        "seconds_mean": round(sum(secs) / len(secs), 2), "seconds_max": max(secs),
        "cal_s": cal, "seconds_mean_in_cal": round(sum(secs) / len(secs) / cal, 2) if cal else None,
        "date": time.strftime("%Y-%m-%d"), "model": prep.llm.name if hasattr(prep.llm, "name") else "embedded",
    }
    out.with_suffix(".json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
