"""The conversation features on labelled sets: IntentRouter's accuracy and ClarifyQuery's bounces.

    .venv/bin/python bench/dialogue_sets.py router bench/intents_heldout.yaml [--llm] [--out FILE.json]
    .venv/bin/python bench/dialogue_sets.py clarify bench/clarify_heldout.yaml [--out FILE.json]
    .venv/bin/python bench/dialogue_sets.py bounces ../shared/benchmarks/spider_dev [--db DB] [--out FILE.json]

``router`` runs the rules on each turn (``history`` in an item means a conversation is going and
its text was the previous question); a turn the rules cannot place counts as ``data`` (what the
``rules`` setting does) unless ``--llm``, which asks the configured LLM as ``auto`` does. It prints the
accuracy, a confusion table and every miss. ``clarify`` runs ClarifyQuery's rules: clear questions
bounced (target 0) and vague ones caught. ``bounces`` runs them on every question of an evaluation
file (all answerable by construction: each has gold SQL) and lists those it would ask back about.
Databases: ``lahman`` (the demo, with its semantic file, as duckask uses it), ``nba``
(../shared/data/nba) and ``spider:<db_id>`` (../shared/benchmarks/spider_dev).

The sets were written by a helper that never read duckask's code; the ``_dev`` files were read while
writing the rules, the ``_heldout`` files were not (docs/benchmarks.md reports both, labelled).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


def db_path(name: str) -> str:
    if name == "lahman":
        from duckask.data.lahman import demo_db_path

        return str(demo_db_path())
    if name == "nba":
        return str(SHARED / "data" / "nba")
    if name.startswith("spider:"):
        return str(SHARED / "benchmarks" / "spider_dev" / "dbs" / name.split(":", 1)[1])
    raise ValueError(f"unknown db {name!r}")


_PREPARED: dict = {}


def prepared(name: str, llm):
    from duckask.utils.api import prepare

    if name not in _PREPARED:
        _PREPARED[name] = prepare(db_path(name), llm=llm)
    return _PREPARED[name]


def run_router(items: list[dict], use_llm: bool) -> dict:
    from duckask.nodes import Context, IntentRouter
    from duckask.utils.llm import MeteredLLM, ScriptedLLM, get_llm

    llm = get_llm() if use_llm else ScriptedLLM({})
    rows = []
    for it in items:
        prep = prepared(it["db"], llm)
        ctx = Context(llm=MeteredLLM(prep.llm), settings=prep.settings, db=prep.database, catalog=prep.catalog)
        ctx.settings.router = "auto" if use_llm else "rules"
        history = [{"text": it["history"], "intent": "data"}] if it.get("history") else []
        shared = {"question": it["text"], "history": history, "trace": [], "attempts": []}
        t0 = time.perf_counter()
        IntentRouter(ctx).run(shared)
        got = shared["intent"]    # (its action is "write" for SQL that is not a SELECT; the intent stays "sql")
        rows.append({"text": it["text"], "db": it["db"], "gold": it["intent"], "got": got,
                     "by": shared["intent_by"], "llm_calls": len(ctx.llm.calls),
                     "ms": round((time.perf_counter() - t0) * 1000, 1)})
    right = sum(r["gold"] == r["got"] for r in rows)
    confusion = Counter((r["gold"], r["got"]) for r in rows)
    return {"items": len(rows), "correct": right, "accuracy": round(100 * right / max(1, len(rows)), 1),
            "llm_calls": sum(r["llm_calls"] for r in rows),
            "undecided_by_rules": sum(1 for r in rows if r["by"] in ("llm", "undecided: data")) ,
            "confusion": {f"{g}->{p}": n for (g, p), n in sorted(confusion.items())},
            "misses": [r for r in rows if r["gold"] != r["got"]], "rows": rows}


def run_clarify(items: list[dict]) -> dict:
    from duckask.utils.dialogue.vague import vagueness
    from duckask.utils.llm import ScriptedLLM

    rows = []
    for it in items:
        prep = prepared(it["db"], ScriptedLLM({}))
        found = vagueness(it["text"], prep.catalog, False)
        rows.append({"text": it["text"], "db": it["db"], "label": it["label"], "asked_back": bool(found),
                     "rule": found["rule"] if found else None})
    clear = [r for r in rows if r["label"] == "clear"]
    vague = [r for r in rows if r["label"] == "vague"]
    bounced = [r for r in clear if r["asked_back"]]
    caught = [r for r in vague if r["asked_back"]]
    return {"clear": len(clear), "clear_bounced": len(bounced), "vague": len(vague), "vague_caught": len(caught),
            "bounced": bounced, "missed_vague": [r for r in vague if not r["asked_back"]], "rows": rows}


def run_bounces(path: str, db: str | None) -> dict:
    from duckask.utils.api import prepare
    from duckask.utils.dialogue.vague import vagueness
    from duckask.utils.eval.questions import load_questions, resolve_db
    from duckask.utils.llm import ScriptedLLM

    qs, default_dir = load_questions(path)
    cats: dict = {}
    bounced = []
    for q in qs:
        d = resolve_db(q, db=db, db_dir=default_dir)
        if d not in cats:
            cats[d] = prepare(d, llm=ScriptedLLM({})).catalog
        found = vagueness(q.question, cats[d], False)
        if found:
            bounced.append({"id": q.id, "text": q.question, "rule": found["rule"]})
    return {"questions": len(qs), "bounced": len(bounced), "items": bounced}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["router", "clarify", "bounces"])
    ap.add_argument("--db", help="bounces: one database for every question")
    ap.add_argument("file")
    ap.add_argument("--llm", action="store_true", help="router: ask the configured LLM when the rules cannot decide")
    ap.add_argument("--out", help="write the full result as JSON")
    args = ap.parse_args(argv)
    if args.what == "bounces":
        res = run_bounces(args.file, args.db)
        print(f"{args.file}: {res['bounced']} of {res['questions']} answerable questions would be asked back")
        for m in res["items"]:
            print(f"  [{m['rule']}] {m['id']}: {m['text'][:110]!r}")
        if args.out:
            Path(args.out).write_text(json.dumps({"file": args.file, "date": time.strftime("%Y-%m-%d"), **res},
                                                 indent=1))
        return 0
    items = yaml.safe_load(Path(args.file).read_text())
    if any(it["db"] != "lahman" for it in items) and not SHARED.is_dir():
        print(f"{SHARED} is absent: the nba and spider items need it", file=sys.stderr)
        return 2
    if args.what == "router":
        res = run_router(items, args.llm)
        print(f"{args.file}: {res['correct']}/{res['items']} = {res['accuracy']} %  "
              f"(rules undecided: {res['undecided_by_rules']}, LLM calls: {res['llm_calls']})")
        print("confusion (gold->got):", res["confusion"])
        for m in res["misses"]:
            print(f"  MISS {m['gold']}->{m['got']} [{m['by']}] {m['db']}: {m['text'][:100]!r}")
    else:
        res = run_clarify(items)
        print(f"{args.file}: clear bounced {res['clear_bounced']}/{res['clear']}, "
              f"vague caught {res['vague_caught']}/{res['vague']}")
        for m in res["bounced"]:
            print(f"  BOUNCED [{m['rule']}] {m['db']}: {m['text'][:100]!r}")
        for m in res["missed_vague"]:
            print(f"  MISSED {m['db']}: {m['text'][:100]!r}")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps({"file": args.file, "date": time.strftime("%Y-%m-%d"),
                                              "llm": args.llm, **res}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
