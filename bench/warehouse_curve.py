"""The warehouse learning curve (issue 65): the NBA warehouse as a team keeps k = 0, 5, 10, 20, 40 verified pairs.

``bench/warehouse_curve.yaml`` (written before the matcher work, not read while it was written) gives the order in
which 40 verified pairs are kept (NBA tuning questions and warehouse examples), twelve questions that mean the same
as one of them worded otherwise (``same``), and ten NBA held-out questions that mean the same as none (``other``).
In one process, warm (the model and the warehouse opened once), with the NBA ``models`` configuration: at each k the
pairs up to k are kept (``knowledge.keep``, as the page's Right keeps one) and every question is asked
(``run_turn``), timed. Scored by execution against the gold (``learning_curve.score``).

Reported per k: ``same`` questions right (and of those whose pair is kept, how many were answered from it),
``other`` questions right, **answers wrongly reached** (from a kept pair, and wrong: an ``other`` question, or a
``same`` question answered wrongly from a pair), and seconds (median, max, as multiples of CAL timed first and last
in the same run). Twelve and ten questions: one question is 8 and 10 points.

    .venv/bin/python bench/warehouse_curve.py [--ks 0,5,10,20,40] [--out docs/results/warehouse-curve]
    .venv/bin/python bench/warehouse_curve.py --ks 5,10,20,40 \
        --check-reach docs/results/warehouse-curve/second/records.jsonl
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
sys.path.insert(0, str(ROOT / "bench"))
from learning_curve import options_of, score, substitute  # noqa: E402

OPTIONS = {"descriptions": "bench/nba_models", "column_pruning": "wide"}


def pairs_by_id() -> dict[str, tuple[str, str]]:
    """Every NBA question or example with its verified SQL, by id (``nbaexNN``: the NN-th example)."""
    out = {q["id"]: (q["question"], q["gold_sql"])
           for f in ("nba_questions.yaml", "nba_questions_heldout.yaml")
           for q in yaml.safe_load((ROOT / "bench" / f).read_text())}
    for i, e in enumerate(yaml.safe_load((ROOT / "bench/nba_examples.yaml").read_text()), 1):
        out[f"nbaex{i:02d}"] = (e["question"], e["sql"])
    return out


def questions(spec: dict, known: dict) -> list[dict]:
    qs = [{"kind": "same", "of": s["of"], "question": s["question"], "gold": substitute(known[s["of"]][1], s["sub"])}
          for s in spec["same"]]
    return qs + [{"kind": "other", "of": None, "id": i, "question": known[i][0], "gold": known[i][1]}
                 for i in spec["other"]]


def record(prep, q: dict, k: int, kept: list[str], stamp: dict) -> dict:
    from duckask.utils.api import new_shared, run_turn

    t0 = time.perf_counter()
    r = run_turn(prep, new_shared(q["question"]))
    wall = time.perf_counter() - t0
    right = r.status == "answered" and score(prep.database, r.sql, q["gold"])
    reached = r.path == "template"
    return {**q, "k": k, **stamp, "pair_kept": q["of"] in kept, "seconds": round(wall, 3), "status": r.status,
            "sql": r.sql, "path": r.path, "template": r.template, "llm_calls": len(r.llm_calls),
            "confidence": (r.confidence or {}).get("level"), "correct": right, "reached": reached,
            "reached_wrongly": reached and not right}


def summarize(recs: list[dict], cal: float) -> list[dict]:
    rows = []
    for k in sorted({r["k"] for r in recs}):
        at = [r for r in recs if r["k"] == k]
        same, other = [r for r in at if r["kind"] == "same"], [r for r in at if r["kind"] == "other"]
        kept = [r for r in same if r["pair_kept"]]
        secs = [r["seconds"] for r in at]
        rows.append({"k": k, "same_right": sum(r["correct"] for r in same), "same_n": len(same),
                     "same_kept_n": len(kept), "same_kept_right": sum(r["correct"] for r in kept),
                     "same_kept_reached": sum(r["reached"] and r["correct"] for r in kept),
                     "other_right": sum(r["correct"] for r in other), "other_n": len(other),
                     "reached_wrongly": sum(r["reached_wrongly"] for r in at),
                     "median_s": round(statistics.median(secs), 2), "max_s": round(max(secs), 2),
                     "median_cal": round(statistics.median(secs) / cal, 3),
                     "reached_median_s": round(statistics.median([r["seconds"] for r in at if r["reached"]]), 2)
                     if any(r["reached"] for r in at) else None})
    return rows


def render(rows: list[dict], meta: dict) -> str:
    lines = [f"# Warehouse learning curve ({meta['date']}, commit {meta['commit']})", "",
             f"`{meta['command']}`; CAL {meta['cal_s']} s (first), {meta['cal_end']} s (last).", "",
             "| k kept | same: right | same, pair kept: right (from the pair) | other: right | wrongly reached | "
             "median s | max s | median x CAL | reached: median s |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['k']} | {r['same_right']}/{r['same_n']} | {r['same_kept_right']}/{r['same_kept_n']} "
                     f"({r['same_kept_reached']}) | {r['other_right']}/{r['other_n']} | {r['reached_wrongly']} | "
                     f"{r['median_s']} | {r['max_s']} | {r['median_cal']} | {r['reached_median_s'] or '-'} |")
    return "\n".join(lines) + "\n"


def check_reach(records: Path, ks: list[int]) -> int:
    """Without the model: whether today's matcher answers the same questions from the same kept pairs with the same
    SQL at each k as the run whose ``records`` are given (then that run's figures hold for today's code: the model
    path is what it was)."""
    from duckask.nodes.match_template import matched
    from duckask.utils.api import prepare
    from duckask.utils.knowledge.examples import Example
    from duckask.utils.llm import ScriptedLLM
    from duckask.utils.schema.value_index import ValueIndex

    spec, known = yaml.safe_load((ROOT / "bench/warehouse_curve.yaml").read_text()), pairs_by_id()
    recs = [json.loads(line) for line in records.read_text().splitlines() if line.strip()]
    prep = prepare(str(SHARED / "data/nba"), llm=ScriptedLLM({}),
                   **options_of({"options": OPTIONS}, Path(tempfile.mkdtemp(prefix="duckask-wc-"))))
    values, changed = ValueIndex.of(prep.database, prep.catalog), 0
    for k in ks:
        kept = [Example(question=known[i][0], sql=known[i][1], id=str(n)) for n, i in enumerate(spec["kept"][:k])]
        for q in questions(spec, known):
            found = matched(q["question"], kept, values, prep.catalog)
            was = next((r for r in recs if r["k"] == k and r["question"] == q["question"]), None)
            if was is None:
                continue
            then = " ".join(was["sql"].split()) if was["path"] == "template" else None
            now = " ".join(found[0].sql.split()) if found else None
            if then != now and not (then is None and now is None):
                changed += 1
                print(f"  k={k} changed: {q['question']}\n    then: {then}\n    now:  {now}")
    print(f"{changed} answers from a kept pair differ from the run's")
    return 1 if changed else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ks", default="0,5,10,20,40")
    ap.add_argument("--out", default=str(ROOT / "docs/results/warehouse-curve"))
    ap.add_argument("--check-reach", type=Path, metavar="RECORDS",
                    help="no model: does today's matcher reach what that run's records reached (see check_reach)")
    args = ap.parse_args(argv)
    if not SHARED.exists():
        sys.exit("bench/warehouse_curve.py: ../shared/data/nba is missing (the warehouse it measures)")
    if args.check_reach:
        return check_reach(args.check_reach, [int(x) for x in args.ks.split(",")])
    from speed import calibrate

    from duckask.utils.api import prepare
    from duckask.utils.knowledge.keep import keep

    spec = yaml.safe_load((ROOT / "bench/warehouse_curve.yaml").read_text())
    known = pairs_by_id()
    qs = questions(spec, known)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cal = calibrate()
    print(f"CAL {cal:.1f}s", flush=True)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    stamp = {"commit": commit, "cal_s": round(cal, 2)}
    state = Path(tempfile.mkdtemp(prefix="duckask-wc-"))
    prep = prepare(str(SHARED / "data/nba"), **options_of({"options": OPTIONS}, state))
    for q in qs:                      # every gold runs and finds something before anything is measured
        g = prep.database.run(q["gold"])
        if not g.ok or g.df is None or len(g.df) == 0:
            raise SystemExit(f"gold of {q['question']!r} does not run or finds nothing: {g.error}")
    recs: list[dict] = []
    kept: list[str] = []
    (out / "records.jsonl").write_text("")
    for k in [int(x) for x in args.ks.split(",")]:
        for pid in spec["kept"][len(kept):k]:
            keep(prep.database, prep.settings, *known[pid])
            kept.append(pid)
        for i, q in enumerate(qs, 1):
            rec = record(prep, q, k, kept, stamp)
            recs.append(rec)
            with (out / "records.jsonl").open("a") as f:
                f.write(json.dumps(rec, default=str) + "\n")
            print(f"  [k={k} {i}/{len(qs)}] {q['kind']:<5} {rec['seconds']:6.1f}s {'ok' if rec['correct'] else '--'} "
                  f"{rec['path'] or '-':<8} {q['question']}", flush=True)
    cal_end = calibrate()
    meta = {"date": dt.date.today().isoformat(), "commit": commit, "cal_s": round(cal, 2), "cal_end": round(cal_end, 2),
            "command": "python bench/warehouse_curve.py " + " ".join(argv if argv is not None else sys.argv[1:])}
    rows = summarize(recs, cal)
    (out / "summary.json").write_text(json.dumps({**meta, "rows": rows}, indent=1) + "\n")
    (out / "summary.md").write_text(render(rows, meta))
    print(render(rows, meta))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
