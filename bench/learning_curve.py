"""The learning curve (issue 45): questions before and after a user keeps the answers they checked.

For each set of ``bench/learning_pairs.yaml`` (kept pairs from the NBA tuning set and the Lahman set, each with
variant questions written by hand and near-misses), in one process per set, warm (the model and database opened
once, untimed), each question a ``run_turn`` with the user's defaults, timed:

    before   the set's configuration with no pair kept (a fresh, empty knowledge store);
    after    the pairs kept (``knowledge.keep``, as the page's Right or ``duckask teach`` keeps them), then the
             same questions again.

A variant's gold is the pair's gold SQL with its ``sub`` literals put in (sqlglot's tree), run; a near-miss has its
own. Scored by execution (``sql.compare.results_match``, order when the gold orders). Reported: accuracy before
and after, seconds (median, p90, max; as multiples of CAL, ``../shared/tools/calibrate.py`` timed first and last
in the same run), how often the answer came from a template, and templates used wrongly (a near-miss answered
from a template, or a template answer that is wrong). Variants marked ``code`` (the changed words stand in the
SQL as a code) are counted apart.

    .venv/bin/python bench/learning_curve.py                       # both sets, before and after
    .venv/bin/python bench/learning_curve.py --sets lahman --phases after --out /tmp/lc

Writes ``records.jsonl``, ``summary.json`` and ``summary.md`` to ``--out`` (docs/results/learning-curve). With
``--append`` the records already there stay and a phase run again replaces its earlier records (each record
names its commit and CAL), so one phase can be redone after a fix without running the others again:

    .venv/bin/python bench/learning_curve.py --phases after --append
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

import sqlglot
import yaml
from sqlglot import exp

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
sys.path.insert(0, str(ROOT / "bench"))


def substitute(sql: str, sub: dict) -> str:
    """The gold SQL with each literal in ``sub`` replaced (on the tree; the same kind of literal)."""
    tree = sqlglot.parse_one(sql, read="duckdb")
    wanted = {str(k): str(v) for k, v in sub.items()}
    seen = set()
    for lit in list(tree.find_all(exp.Literal)):
        if lit.this in wanted:
            seen.add(lit.this)
            new = wanted[lit.this]
            lit.replace(exp.Literal.string(new) if lit.is_string else exp.Literal.number(new))
    if seen != set(wanted):
        raise ValueError(f"{sorted(set(wanted) - seen)} not literals of: {sql}")
    return tree.sql(dialect="duckdb")


def questions(spec: dict) -> list[dict]:
    out = []
    for pair in spec["pairs"]:
        for v in pair.get("variants") or []:
            out.append({"pair": pair["id"], "kind": "code" if v.get("code") else "variant",
                        "question": v["question"], "gold": substitute(pair["sql"], v["sub"])})
        for n in pair.get("near_misses") or []:
            out.append({"pair": pair["id"], "kind": "near-miss", "question": n["question"], "gold": n["gold"]})
    return out


def database_of(spec: dict) -> str:
    if spec["db"] == "demo":
        from duckask.data.lahman import DEFAULT_PATH

        return str(DEFAULT_PATH)
    return str((ROOT / spec["db"]).resolve()) if not Path(spec["db"]).is_absolute() else spec["db"]


def options_of(spec: dict, state: Path) -> dict:
    opts = {k: (str(ROOT / v) if k == "descriptions" else v) for k, v in (spec.get("options") or {}).items()}
    return {**opts, "knowledge_file": str(state / "knowledge.duckdb"), "audit_file": str(state / "audit.duckdb")}


def score(database, sql: str | None, gold: str) -> bool:
    from duckask.utils.sql.compare import results_match
    from duckask.utils.sql.describe import has_top_level_order_by

    if not sql:
        return False
    g, o = database.run(gold), database.run(sql)
    return bool(g.ok and o.ok and results_match(o.df, g.df, order_matters=has_top_level_order_by(gold)))


def run_set(name: str, spec: dict, phases: list[str], out: Path, log, stamp: dict) -> list[dict]:
    from duckask.utils.api import new_shared, prepare, run_turn
    from duckask.utils.knowledge.keep import keep

    state = Path(tempfile.mkdtemp(prefix=f"duckask-lc-{name}-"))
    prep = prepare(database_of(spec), **options_of(spec, state))
    qs = questions(spec)
    for q in qs:                      # every gold runs and finds something before anything is measured
        g = prep.database.run(q["gold"])
        if not g.ok or g.df is None or len(g.df) == 0:
            raise SystemExit(f"gold of {q['question']!r} does not run or finds nothing: {g.error}")
    recs = []
    for phase in phases:
        if phase == "after":
            for pair in spec["pairs"]:
                keep(prep.database, prep.settings, pair["question"], pair["sql"])
            log(f"  kept {len(spec['pairs'])} pairs")
        for i, q in enumerate(qs, 1):
            t0 = time.perf_counter()
            r = run_turn(prep, new_shared(q["question"]))
            wall = time.perf_counter() - t0
            rec = {"set": name, "phase": phase, **q, **stamp, "seconds": round(wall, 3), "status": r.status,
                   "sql": r.sql,
                   "path": r.path, "template": r.template, "llm_calls": len(r.llm_calls),
                   "confidence": (r.confidence or {}).get("level"),
                   "correct": r.status == "answered" and score(prep.database, r.sql, q["gold"])}
            recs.append(rec)
            with (out / "records.jsonl").open("a") as f:
                f.write(json.dumps(rec, default=str) + "\n")
            log(f"  [{phase} {i}/{len(qs)}] {q['kind']:<9} {wall:6.1f}s {'ok' if rec['correct'] else '--'} "
                f"{r.path or '-':<8} {q['question']}")
    return recs


def _q(xs: list[float], p: float) -> float | None:
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]


def newest(recs: list[dict]) -> list[dict]:
    """One record per (set, phase, question): the last one written (a phase run again replaces the earlier)."""
    last = {(r["set"], r["phase"], r["question"]): r for r in recs}
    return list(last.values())


def summarize(recs: list[dict], cal: float) -> dict:
    recs = newest(recs)
    runs = sorted({(r.get("commit") or "?", r.get("cal_s")) for r in recs}, key=str)
    out: dict = {"cal_s": round(cal, 2), "runs": [{"commit": c, "cal_s": k} for c, k in runs], "rows": []}
    for s in sorted({r["set"] for r in recs}) + ["all"]:
        for kind in ("variant", "code", "near-miss"):
            for phase in ("before", "after"):
                rs = [r for r in recs if (s == "all" or r["set"] == s) and r["kind"] == kind and r["phase"] == phase]
                if not rs:
                    continue
                secs = [r["seconds"] for r in rs]
                templ = [r for r in rs if r["path"] == "template"]
                wrong = [r for r in templ if kind == "near-miss" or not r["correct"]]
                out["rows"].append({
                    "set": s, "kind": kind, "phase": phase, "n": len(rs),
                    "right": sum(r["correct"] for r in rs),
                    "accuracy": round(sum(r["correct"] for r in rs) / len(rs), 3),
                    "from_template": len(templ), "template_wrong": len(wrong),
                    "median_s": round(statistics.median(secs), 2), "p90_s": _q(secs, 0.9), "max_s": max(secs),
                    "median_cal": round(statistics.median(r["seconds"] / (r.get("cal_s") or cal) for r in rs), 3),
                    "max_cal": round(max(r["seconds"] / (r.get("cal_s") or cal) for r in rs), 3),
                    "llm_calls": sum(r["llm_calls"] for r in rs)})
    return out


def render(summary: dict, meta: dict) -> str:
    lines = [f"# Learning curve ({meta['date']}, commit {meta['commit']})", "",
             f"`{meta['command']}`; CAL {summary['cal_s']} s (first), {meta['cal_end']} s (last). Records from "
             + ", ".join(f"commit {r['commit']} (CAL {r['cal_s']} s)" for r in summary["runs"])
             + "; seconds as multiples of the CAL of the run that timed them.", "",
             "| set | kind | phase | n | right | accuracy | from a template | template wrongly used | median s | "
             "p90 s | max s | median ×CAL | max ×CAL | LLM calls |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in summary["rows"]:
        lines.append(f"| {r['set']} | {r['kind']} | {r['phase']} | {r['n']} | {r['right']} | {r['accuracy']:.0%} | "
                     f"{r['from_template']} | {r['template_wrong']} | {r['median_s']} | {r['p90_s']} | {r['max_s']} | "
                     f"{r['median_cal']} | {r['max_cal']} | {r['llm_calls']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="nba,lahman")
    ap.add_argument("--phases", default="before,after")
    ap.add_argument("--file", default=str(ROOT / "bench/learning_pairs.yaml"))
    ap.add_argument("--out", default=str(ROOT / "docs/results/learning-curve"))
    ap.add_argument("--append", action="store_true",
                    help="keep the records there; a phase run again replaces its own")
    args = ap.parse_args(argv)
    from speed import calibrate

    sets = yaml.safe_load(Path(args.file).read_text())["sets"]
    names = [s for s in args.sets.split(",") if s]
    if not SHARED.exists() and any(sets[n]["db"].startswith("../shared") for n in names):
        sys.exit("bench/learning_curve.py: ../shared is missing (the NBA set reads it); use --sets lahman")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if not args.append or not (out / "records.jsonl").exists():
        (out / "records.jsonl").write_text("")

    def log(msg: str) -> None:
        print(msg, flush=True)

    cal = calibrate()
    log(f"CAL {cal:.1f}s")
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    for n in names:
        log(f"{n}:")
        stamp = {"commit": commit, "cal_s": round(cal, 2)}
        run_set(n, sets[n], [p for p in args.phases.split(",") if p], out, log, stamp)
    cal_end = calibrate()
    recs = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines() if line.strip()]
    summary = summarize(recs, cal)
    meta = {"date": dt.date.today().isoformat(), "commit": commit, "cal_end": round(cal_end, 2),
            "command": "python bench/learning_curve.py " + " ".join(argv if argv is not None else sys.argv[1:])}
    (out / "summary.json").write_text(json.dumps({**meta, **summary}, indent=1) + "\n")
    (out / "summary.md").write_text(render(summary, meta))
    print(render(summary, meta))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
