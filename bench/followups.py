"""Follow-up accuracy on scripted conversations (bench/lahman_conversations.yaml, the Lahman demo).

Each follow-up turn is asked with the conversation's earlier turns in the history as they should
have gone (their standalone question and gold SQL, ``Conversation.add_turn``), so every follow-up is
judged on its own: did the turn, resolved from that history, give the gold result (executed and
compared like ``duckask eval``, order only when the gold SQL orders)? Records say how the turn was
resolved (which rule, or the LLM), the resolved question, the SQL and the seconds.

    .venv/bin/python bench/followups.py [--follow-ups auto|rules|llm|off] [--out FILE.jsonl] [--limit N] [--kinds K,..]

Rerunning with the same ``--out`` resumes. The conversations were written by a helper that never read
duckask's code; nothing was tuned on them before this run (docs/benchmarks.md).
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import Counter
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    from duckask.data.lahman import demo_db_path
    from duckask.utils.app.conversation import Conversation
    from duckask.utils.dialogue.answer_rules import rules_answer
    from duckask.utils.llm import get_llm
    from duckask.utils.sql.compare import results_match
    from duckask.utils.sql.describe import has_top_level_order_by

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--conversations", default=str(ROOT / "bench" / "lahman_conversations.yaml"))
    ap.add_argument("--follow-ups", default="auto", choices=["auto", "rules", "llm", "off"])
    ap.add_argument("--out")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--kinds", help="only turns of these kinds, comma-separated (e.g. period,filter,sort: the "
                                    "shapes the rules rewrite, to compare them with --follow-ups llm)")
    args = ap.parse_args(argv)
    out = Path(args.out or ROOT / "docs" / "results" / "dialogue" / f"followups_{args.follow_ups}.jsonl")
    out.parent.mkdir(parents=True, exist_ok=True)
    done = {json.loads(line)["id"] for line in out.read_text().splitlines() if line.strip()} if out.exists() else set()
    convs = yaml.safe_load(Path(args.conversations).read_text())
    db = str(demo_db_path())
    llm = get_llm()
    base = Conversation(db, llm=llm, follow_ups=args.follow_ups, analyzer="rules")
    n = 0
    for conv in convs:
        turns = conv["turns"]
        for i in range(1, len(turns)):
            tid = f"{conv['id']}.{i + 1}"
            if tid in done:
                continue
            if args.limit and n >= args.limit:
                break
            if args.kinds and turns[i]["kind"] not in args.kinds.split(","):
                continue
            n += 1
            c = Conversation(db, llm=llm, settings=base.prep.settings)
            for prev in turns[:i]:
                gold = c.prep.database.run(prev["gold_sql"])
                c.add_turn(prev["resolved"], prev["gold_sql"], rules_answer(gold.df) if gold.ok else "")
            t = turns[i]
            gold = c.prep.database.run(t["gold_sql"])
            t0 = time.perf_counter()
            r = c.ask(t["say"])
            seconds = time.perf_counter() - t0
            correct = bool(r.ok and gold.ok and results_match(r.df, gold.df,
                                                              order_matters=has_top_level_order_by(t["gold_sql"])))
            rec = {"id": tid, "kind": t["kind"], "say": t["say"], "gold_resolved": t["resolved"],
                   "resolved": r.resolved_question,
                   "intent": r.intent, "status": r.status, "correct": correct, "sql": r.sql,
                   "seconds": round(seconds, 1), "llm_calls": len(r.llm_calls),
                   "nodes": [x["node"] for x in r.trace if x["llm_calls"]]}
            rec["resolved_by"] = "llm" if "ResolveFollowUp" in rec["nodes"] else (
                "rules" if r.resolved_question != t["say"] else "kept")
            with out.open("a") as f:
                f.write(json.dumps(rec) + "\n")
            print(f"{tid} {'ok ' if correct else '-- '}[{rec['kind']}/{rec['resolved_by']}] {t['say']!r} -> "
                  f"{r.resolved_question!r} {seconds:.0f}s", flush=True)
    recs = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    by_kind = Counter(r["kind"] for r in recs)
    right = Counter(r["kind"] for r in recs if r["correct"])
    print(f"\n{sum(r['correct'] for r in recs)}/{len(recs)} follow-ups right "
          f"(median {statistics.median(r['seconds'] for r in recs):.0f} s)" if recs else "no records")
    for k in sorted(by_kind):
        print(f"  {k}: {right[k]}/{by_kind[k]}")
    for how in ("rules", "llm", "kept"):
        sel = [r for r in recs if r["resolved_by"] == how]
        if sel:
            print(f"  resolved by {how}: {sum(r['correct'] for r in sel)}/{len(sel)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
