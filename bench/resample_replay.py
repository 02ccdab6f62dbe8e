"""What would fewer resample drafts cost? Replays recorded runs' resample votes with k = 0..4 drafts (no LLM).

When the first query fails or finds nothing, SQLGenerator samples ``resample_drafts`` (default 4)
queries from the first prompt (temperature 0.7, seeds 1..n; the draft with seed i does not depend on
n) and SQLExecutor votes over every distinct draft plus the failed query (``duckask.utils.sql.voting``).
Each draft costs about 60 generated tokens (~3 s on the embedded model). An eval record holds that
ballot: per distinct candidate the query that ran (after ``run_repaired``'s free repairs), the
positions that produced it (0 = the failed query, i = the draft with seed i), its status and whether
it was chosen. Because the draft with seed i is the same whatever n is, the candidates with a
position <= k are exactly what ``resample_drafts = k`` would have voted on.

How, for every resampled question of each records file:

- the recorded candidate queries are re-executed (``Database.run``, the eval's timeout and row cap)
  and scored against the gold result (``results_match``; row order counts only when the gold SQL has
  a top-level ORDER BY), as ``duckask.utils.eval.run`` scores them;
- for k = 1..4 the vote is replayed as SQLExecutor casts it: the kept candidates in ballot order
  (failed query first), each weighted by how many of its positions are <= k;
- what happens after the vote decides the question's outcome at k:
    * the vote picks the query the recorded run picked: the rest of the graph is what was recorded,
      so the recorded final correctness stands ("observed");
    * it picks another query that ran and passes ResponseGrader's rules (``rule_check``; every run
      replayed here graded with the rules): the graph ends there, so that query's correctness
      ("ends");
    * otherwise the graph would go on to an LLM call the record does not hold (ErrorFixer's retry
      when no kept candidate runs; the grader's critique for an empty, all-NULL or rule-failing
      result): the chosen query's correctness is counted, a proxy ("continues");
    * when every kept draft repeats the failed query there is no vote (SQLExecutor runs the failed
      query alone) and the question is where k = 0 leaves it.
- k = 0 (no resample): the failed or empty first query's outcome stands. The graph itself would not
  stop there: with ``resample_drafts = 0`` ``can_resample`` is false, so an error goes to ErrorFixer
  (free repairs including forgotten joins, then up to ``max_fix_retries`` LLM retries with the error)
  and an empty or all-NULL result fails ResponseGrader's rules, whose critique goes back to
  SQLGenerator (``max_grader_rounds``). The replay cannot reproduce those LLM calls, so k = 0 counts
  the first query's recorded correctness (``first_correct``), a proxy that can err either way;
  "k = 0 + repairs" also shows the failed query after the free repairs (its ballot position 0).
- Resampled questions without a ballot (all drafts repeated the failed query) keep their recorded
  outcome for k >= 1 (the graph was in the same state for any k) and ``first_correct`` at k = 0.
  Questions that were not resampled keep their recorded correctness under every k.
- Reproduction check at k = 4: does the replayed vote pick the recorded choice, does each candidate
  re-score as recorded, and does the chosen query's correctness equal the recorded final correctness
  (it need not: the graph can go on after the vote).

Run (from the repo root; a few minutes, most of it Spider's 1,028-question file)::

    nice .venv/bin/python bench/resample_replay.py
    nice .venv/bin/python bench/resample_replay.py --run RECORDS.jsonl QUESTIONS [DB]   # other files

Outputs: docs/results/resample_replay/summary.json (per file: counts, total EX per k, reproduction
check, and per question the outcome and its basis at every k) and summary.md (the tables).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import pandas as pd

from duckask.utils.config import load_settings
from duckask.utils.db.database import open_database
from duckask.utils.eval.questions import load_questions, resolve_db
from duckask.utils.eval.records import read_records
from duckask.utils.sql.compare import results_match
from duckask.utils.sql.describe import has_top_level_order_by
from duckask.utils.sql.voting import vote

ROOT = Path(__file__).resolve().parents[1]
KS = (0, 1, 2, 3, 4)
SPIDER = "../shared/benchmarks/spider_dev"
NBA = "../shared/data/nba"
#: (records, questions, database for all of them or None for the question's own)
FILES = [
    ("docs/results/spider_dev_full.jsonl.gz", SPIDER, None),
    ("docs/results/lahman/taught.jsonl", "bench/lahman_questions.yaml", "data/lahman.duckdb"),
    ("docs/results/lahman/untaught.jsonl", "bench/lahman_questions.yaml", "data/lahman.duckdb"),
    ("docs/results/nba_ablation/nba_questions_heldout-semantic.jsonl", "bench/nba_questions_heldout.yaml", NBA),
    ("docs/results/nba_ablation/nba_questions_heldout-examples.jsonl", "bench/nba_questions_heldout.yaml", NBA),
    ("docs/results/nba_heldout.jsonl", "bench/nba_questions_heldout.yaml", NBA),
]


def _path(p: str) -> Path:
    q = Path(p)
    return q if q.is_absolute() else ROOT / q


def _gold(q, db) -> tuple[pd.DataFrame | None, bool]:
    """The gold result and whether its row order counts (as ``duckask.utils.eval.run._gold``)."""
    if q.expected is not None:
        return pd.DataFrame(q.expected), q.ordered
    if q.gold_sql:
        out = db.run(q.gold_sql)
        return (out.df if out.ok else None), has_top_level_order_by(q.gold_sql)
    return None, False


def replay_question(r: dict, q, db) -> dict:
    """One resampled question: its outcome at every k, the basis of each, and reproduction facts."""
    from duckask.utils.sql.checks import rule_check

    first, final = bool(r.get("first_correct")), bool(r.get("correct"))
    row = {"id": r["id"], "db": r.get("db"), "first_correct": first, "recorded": final, "k": {}}
    row["k"]["0"] = {"correct": first, "basis": "first query (proxy)", "vote_correct": first}
    cands = r.get("candidates") or []
    if not cands:
        # No ballot: every draft repeated the failed query, the same state for any k >= 1.
        for k in KS[1:]:
            row["k"][str(k)] = {"correct": final, "basis": "no ballot (observed)", "vote_correct": final}
        row["ballot"] = False
        return row
    row["ballot"] = True
    gold, ordered = _gold(q, db)
    outs = [db.run(c["sql"]) for c in cands]
    right = [bool(o.ok and gold is not None and results_match(o.df, gold, order_matters=ordered)) for o in outs]
    rec_chosen = next((c["sql"] for c in cands if c.get("chosen")), None)
    pos0 = next((i for i, c in enumerate(cands) if 0 in c["positions"]), 0)
    row["k0_repaired"] = right[pos0]
    row["status_mismatch"] = sum(c["status"] != o.status for c, o in zip(cands, outs))
    row["correct_mismatch"] = sum(bool(c.get("correct")) != ok for c, ok in zip(cands, right))
    for k in KS[1:]:
        idx = [i for i, c in enumerate(cands) if min(c["positions"]) <= k]
        if len(idx) <= 1:
            row["k"][str(k)] = {"correct": first, "basis": "drafts repeat the failed query (proxy)",
                                "vote_correct": first}
            continue
        v = vote([outs[i] for i in idx], [sum(p <= k for p in cands[i]["positions"]) for i in idx])
        ci = idx[v.chosen]
        out, sql = outs[ci], cands[ci]["sql"]
        # The graph goes on after the vote (an LLM call) unless the pick ran and passes the grader rules.
        goes_on = not (out.ok and rule_check(q.question, out.df, sql) is None)
        if sql == rec_chosen:
            est, basis = final, "observed"
        elif not goes_on:
            est, basis = right[ci], "ends"
        else:
            est, basis = right[ci], "continues (proxy)"
        row["k"][str(k)] = {"correct": est, "basis": basis, "vote_correct": right[ci], "chosen": ci,
                            "candidates": len(idx), "goes_on": goes_on}
    k4 = row["k"]["4"]
    row["k4_same_choice"] = cands[k4["chosen"]]["sql"] == rec_chosen if "chosen" in k4 else False
    if k4["vote_correct"] != final:
        why = []
        if not row["k4_same_choice"]:
            why.append("the replayed vote picks another query")
        if right[k4["chosen"]] != bool(cands[k4["chosen"]].get("correct")):
            why.append("the chosen query re-scores differently (nondeterministic result, e.g. a tie under LIMIT)")
        if k4["goes_on"]:
            why.append("no candidate ran: ErrorFixer retried" if not outs[k4["chosen"]].ok
                       else "the grader rules rejected the pick: a critique went back to SQLGenerator")
        row["k4_mismatch"] = "; ".join(why) or "unexplained"
    return row


def replay_file(records: str, questions: str, db_path: str | None, settings) -> dict:
    recs = read_records(_path(records))
    if not recs:
        raise SystemExit(f"no records in {records}")
    qs, db_dir = load_questions(_path(questions))
    by_id = {q.id: q for q in qs}
    resampled = [r for r in recs if r.get("resampled")]
    rows = []
    t0 = time.perf_counter()
    for n, r in enumerate(resampled, 1):
        q = by_id[r["id"]]
        where = str(_path(db_path)) if db_path else resolve_db(q, db_dir=db_dir)
        rows.append(replay_question(r, q, open_database(where, settings)))
        if n % 25 == 0 or n == len(resampled):
            print(f"  {records}: {n}/{len(resampled)} resampled questions ({time.perf_counter() - t0:.0f} s)",
                  file=sys.stderr, flush=True)
    others = sum(bool(r.get("correct")) for r in recs if not r.get("resampled"))
    correct = {str(k): sum(row["k"][str(k)]["correct"] for row in rows) for k in KS}
    ballots = [row for row in rows if row["ballot"]]
    repro = {
        "ballots": len(ballots),
        "vote_differs": sum(not row["k4_same_choice"] for row in ballots),
        "candidates_rescored_differently": sum(row["correct_mismatch"] > 0 for row in ballots),
        "candidates_status_differs": sum(row["status_mismatch"] > 0 for row in ballots),
        "estimate_vs_recorded": sum(row["k"]["4"]["correct"] != row["recorded"] for row in rows),
        "vote_vs_recorded": sum(row["k"]["4"]["vote_correct"] != row["recorded"] for row in rows),
        "vote_vs_recorded_same_choice": sum(row["k"]["4"]["vote_correct"] != row["recorded"]
                                            for row in ballots if row["k4_same_choice"]),
        "mismatches": [{"id": row["id"], "recorded": row["recorded"], "vote": row["k"]["4"]["vote_correct"],
                        "why": row["k4_mismatch"]} for row in rows if "k4_mismatch" in row],
    }
    # What going on after the vote was worth in the recorded run (k = 4): a rough guide to the proxies.
    went_on = [row for row in ballots if row["k"]["4"]["goes_on"]]
    after_vote = {"went_on": len(went_on), "ended_correct": sum(row["recorded"] for row in went_on),
                  "rescued": sum(row["recorded"] and not row["k"]["4"]["vote_correct"] for row in went_on),
                  "broken": sum(row["k"]["4"]["vote_correct"] and not row["recorded"] for row in went_on)}
    wrong_proxies = {str(k): sum("proxy" in row["k"][str(k)]["basis"] and not row["k"][str(k)]["correct"]
                                 for row in rows) for k in KS}
    return {
        "records": records, "questions": questions, "db": db_path or "per question", "n": len(recs),
        "recorded_correct": sum(bool(r.get("correct")) for r in recs),
        "resampled": len(resampled), "no_ballot": len(rows) - len(ballots),
        "recorded_resampled_correct": sum(row["recorded"] for row in rows),
        "correct": correct,
        "vote_only": {str(k): sum(row["k"][str(k)]["vote_correct"] for row in rows) for k in KS},
        "k0_repaired": sum(row.get("k0_repaired", row["first_correct"]) for row in rows),
        "proxies": {str(k): sum("proxy" in row["k"][str(k)]["basis"] for row in rows) for k in KS},
        "total_ex": {str(k): round(100.0 * (others + correct[str(k)]) / len(recs), 1) for k in KS},
        "recorded_ex": round(100.0 * sum(bool(r.get("correct")) for r in recs) / len(recs), 1),
        "wrong_proxies": wrong_proxies,
        "after_vote_k4": after_vote,
        "reproduction": repro,
        "seconds": round(time.perf_counter() - t0, 1),
        "per_question": rows,
    }


def markdown(files: list[dict]) -> str:
    def label(f):
        return f["records"].removeprefix("docs/results/")

    ks = " | ".join(f"k={k}" for k in KS)
    out = ["# Resample drafts: what k < 4 would cost (replay, no LLM)", "",
           "Made by `nice .venv/bin/python bench/resample_replay.py` (method: its docstring). For each "
           "resampled question the recorded candidate queries were re-run and the vote replayed with the "
           "failed first query plus the drafts of seeds 1..k. k = 0 is the first query's recorded "
           "correctness: the real graph would then go on to ErrorFixer or a grader critique (LLM calls "
           "the replay cannot make), so k = 0 is a proxy, not a measurement. Where a k < 4 vote picks "
           "another query whose result the grader rules would reject, or no kept candidate runs, the "
           "chosen query's correctness is a proxy too (counted under 'proxies'). k = 4 keeps the "
           "recorded outcome wherever the replayed vote picks the recorded query.", "",
           "## Resampled questions correct with k drafts", "",
           f"| records | questions | resampled | {ks} | recorded | k=0 + repairs |",
           "|---|---:|---:|" + "---:|" * len(KS) + "---:|---:|"]
    for f in files:
        out.append(f"| {label(f)} | {f['n']} | {f['resampled']} | "
                   + " | ".join(str(f["correct"][str(k)]) for k in KS)
                   + f" | {f['recorded_resampled_correct']} | {f['k0_repaired']} |")
    out += ["", "Each draft costs about 60 generated tokens (~3 s on the embedded model) on every resampled "
            "question, so 4 - k fewer drafts save about (4 - k) x 3 s x resampled / questions per question "
            "on average (Spider dev: 202 of 1,028 resampled, ~0.6 s per question per draft). 'k=0 + repairs': "
            "the failed query after the free repairs (ballot position 0), what ErrorFixer would run first "
            "without a resample; a proxy as well.", "",
            "## Total EX of the file (%) with k drafts (questions not resampled keep their recorded result)", "",
            f"| records | {ks} | recorded |", "|---|" + "---:|" * len(KS) + "---:|"]
    for f in files:
        out.append(f"| {label(f)} | " + " | ".join(f"{f['total_ex'][str(k)]:.1f}" for k in KS)
                   + f" | {f['recorded_ex']:.1f} |")
    out += ["", "## Proxies: resampled questions whose outcome at k is not determined by the record", "",
            "The graph would go on to an LLM call (ErrorFixer retry or grader critique) that the record does "
            "not hold; the first (k = 0) or the chosen query's correctness is counted. In brackets: how many "
            "of them are counted wrong, which that LLM call could still rescue.", "",
            f"| records | {ks} |", "|---|" + "---:|" * len(KS)]
    for f in files:
        out.append(f"| {label(f)} | " + " | ".join(f"{f['proxies'][str(k)]} ({f['wrong_proxies'][str(k)]})"
                                                   for k in KS) + " |")
    out += ["", "What going on after the vote was worth in the recorded runs (k = 4: the pick did not run, or "
            "the grader rules rejected it):", "",
            "| records | went on after the vote | ended correct | rescued (pick wrong, final right) "
            "| broken (pick right, final wrong) |", "|---|---:|---:|---:|---:|"]
    for f in files:
        a = f["after_vote_k4"]
        out.append(f"| {label(f)} | {a['went_on']} | {a['ended_correct']} | {a['rescued']} | {a['broken']} |")
    out += ["", "## Vote alone (the chosen query's correctness, whatever the graph does next)", "",
            f"| records | {ks} |", "|---|" + "---:|" * len(KS)]
    for f in files:
        out.append(f"| {label(f)} | " + " | ".join(str(f["vote_only"][str(k)]) for k in KS) + " |")
    out += ["", "## Reproduction check (k = 4)", "",
            "| records | ballots | replayed vote picks another query | a candidate re-scores differently "
            "| k=4 estimate != recorded | chosen query's correctness != recorded final (of which same pick) |",
            "|---|---:|---:|---:|---:|---:|"]
    for f in files:
        r = f["reproduction"]
        out.append(f"| {label(f)} | {r['ballots']} | {r['vote_differs']} | {r['candidates_rescored_differently']} "
                   f"| {r['estimate_vs_recorded']} | {r['vote_vs_recorded']} ({r['vote_vs_recorded_same_choice']}) |")
    out += ["", "Where the chosen query's correctness differs from the recorded final one:", ""]
    for f in files:
        for m in f["reproduction"]["mismatches"]:
            out.append(f"- {label(f)} {m['id']}: recorded {'right' if m['recorded'] else 'wrong'}, "
                       f"pick {'right' if m['vote'] else 'wrong'}: {m['why']}")
    out += ["", "Some gold or candidate queries have nondeterministic results (ties under ORDER BY ... LIMIT), so "
            "a rerun can move a count by one."]
    no_ballot = [f"{label(f)} {f['no_ballot']}" for f in files if f["no_ballot"]]
    out += ["", "Resampled questions without a ballot (every draft repeated the failed query; recorded outcome "
            "for k >= 1): " + (", ".join(no_ballot) or "none") + ".", ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run", nargs="+", action="append", metavar="RECORDS QUESTIONS [DB]",
                    help="a records file, its question file and optionally the database of all its questions "
                         "(repeatable; default: the committed Spider, Lahman and NBA runs)")
    ap.add_argument("--out", default="docs/results/resample_replay", help="folder for summary.{json,md}")
    args = ap.parse_args(argv)
    runs = [(r[0], r[1], r[2] if len(r) > 2 else None) for r in args.run] if args.run else FILES
    settings = load_settings()
    files = []
    for records, questions, db in runs:
        if not _path(records).exists():
            print(f"skipped (missing): {records}", file=sys.stderr)
            continue
        files.append(replay_file(records, questions, db, settings))
    out = _path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps({"ks": list(KS), "files": files}, indent=1) + "\n")
    md = markdown(files)
    (out / "summary.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
