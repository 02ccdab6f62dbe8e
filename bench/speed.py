"""Speed as a user meets it, comparable across hosts: seconds a question, where they go, and as a
multiple of the calibration job (CAL) timed in the same run.

    .venv/bin/python bench/speed.py --label after                       # every set, warm, + cold/first
    .venv/bin/python bench/speed.py --label before --sets lahman --modes warm,cold
    .venv/bin/python bench/speed.py --sets spider --modes warm --limit 20 --label try

CAL is ``../shared/tools/calibrate.py`` (llama.cpp alone: a fixed ~1,500-token prompt from an empty
context, then 64 tokens generated greedily; best of two), run first and again last; figures are
divided by the first. The question sets:

    lahman   bench/lahman_questions.yaml (25) on the demo database, taught (what `duckask demo` uses)
    demo     bench/demo_questions.yaml (10): what a newcomer asks the demo first (its first question, the
             page's suggestions, the headline); not in the default --sets. The database is the demo of the
             duckask imported, so an older commit is timed by the same script (what issue 44 did):
                 git worktree add /tmp/old 2bb574c && pip install --no-deps --target /tmp/old_site /tmp/old
                 PYTHONPATH=/tmp/old_site .venv/bin/python bench/speed.py --sets demo --label demo-2bb574c
    nba      bench/nba_questions_heldout.yaml (20) on ../shared/data/nba, taught: nba_semantic.yaml,
             nba_examples.yaml, column_pruning wide (issue 9's `semantic` configuration)
    spider   ../shared/benchmarks/spider_dev sample100 (grouped by database)

Modes:
    warm     one process (notebook, chat, server): the model and database are opened once, untimed;
             each question is `run_turn` with the user's defaults (router, sentence), timed
    cold     each question a fresh `duckask ask --json` process (the CLI), timed from outside;
             `startup` = wall seconds not spent in the graph (imports, model, catalog, state loads)
    first    `duckask demo` as the first command after setup: a fresh cache folder holding only the
             model, the steps .ci/setup runs after installing (building the demo; `duckask warm` where
             the command exists), untimed, then `duckask demo` timed; repeated --first-runs times

Per question (JSONL in docs/results/speed/<label>/<set>-<mode>.jsonl): wall seconds, seconds per
node, LLM calls, prompt tokens processed and reused (per node too), tokens generated, EX against the
gold SQL (warm and cold). The summary (summary.json / summary.md in the same folder): median, p90,
both as multiples of CAL, EX, and a by-node table.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
SPIDER = SHARED / "benchmarks" / "spider_dev"
NBA_OPTIONS = {"descriptions": str(ROOT / "bench/nba_semantic.yaml"), "examples": str(ROOT / "bench/nba_examples.yaml"),
               "column_pruning": "wide"}
SETS = {
    "lahman": {"questions": ROOT / "bench/lahman_questions.yaml", "db": str(ROOT / "data/lahman.duckdb"),
               "options": {}},
    "demo": {"questions": ROOT / "bench/demo_questions.yaml", "db": "demo", "options": {}},
    "nba": {"questions": ROOT / "bench/nba_questions_heldout.yaml", "db": str(SHARED / "data/nba"),
            "options": NBA_OPTIONS},
    "spider": {"questions": SPIDER, "ids": SPIDER / "sample100.txt", "db": None, "options": {}},
}
FIRST_QUESTION = "Who hit the most home runs in 2019?"   # what `duckask demo` asks


# --------------------------------------------------------------------------- calibration
def calibrate() -> float:
    sys.path.insert(0, str(SHARED / "tools"))
    from calibrate import calibrate as cal

    from duckask.utils.config import load_settings
    from duckask.utils.llm.model_store import model_path

    return cal(str(model_path(load_settings())), verbose=False)


# --------------------------------------------------------------------------- one question's figures
def figures(trace: list[dict], calls: list[dict]) -> dict:
    """Seconds per node and the LLM's tokens, overall and per node, from a Result's trace and calls."""
    nodes: dict[str, float] = {}
    for t in trace:
        nodes[t["node"]] = round(nodes.get(t["node"], 0.0) + t["ms"] / 1000, 3)
    per_node: dict[str, dict] = {}
    for c in calls:
        d = per_node.setdefault(c["node"], {"calls": 0, "prompt": 0, "reused": 0, "generated": 0, "ms": 0.0,
                                            "gen_ms": 0.0})
        d["calls"] += 1
        d["prompt"] += c["prompt_tokens"]
        d["reused"] += c.get("reused_tokens", 0)
        d["generated"] += c["completion_tokens"]
        d["ms"] += c["ms"]
        d["gen_ms"] += c.get("gen_ms") or 0.0
    return {"nodes": nodes, "llm": per_node, "llm_calls": len(calls),
            "prompt_tokens": sum(c["prompt_tokens"] for c in calls),
            "reused_tokens": sum(c.get("reused_tokens", 0) for c in calls),
            "generated_tokens": sum(c["completion_tokens"] for c in calls)}


def load_set(name: str, limit: int | None):
    from duckask.utils.eval.questions import load_questions, read_ids, resolve_db, select

    spec = SETS[name]
    if spec["db"] == "demo":     # the demo database of the duckask imported (another commit's, on PYTHONPATH)
        from duckask.data.lahman import DEFAULT_PATH

        spec = {**spec, "db": str(DEFAULT_PATH)}
    qs, default_dir = load_questions(spec["questions"])
    qs = select(qs, read_ids(spec["ids"]) if spec.get("ids") else None)[: limit or None]
    jobs = [(q, resolve_db(q, db=spec["db"], db_dir=default_dir)) for q in qs]
    order = {d: i for i, d in enumerate(dict.fromkeys(d for _, d in jobs))}
    return sorted(jobs, key=lambda j: order[j[1]]), {**spec["options"], **OVERRIDES}


#: Settings given with --option KEY=VALUE, on top of each set's own (an A/B of one setting).
OVERRIDES: dict[str, str] = {}


class Scorer:
    """EX against the gold SQL, through the same safe executor as the answer."""

    def __init__(self):
        self.dbs: dict[str, object] = {}

    def __call__(self, q, db: str, sql: str | None, options: dict) -> bool:
        from duckask.utils.api import prepare
        from duckask.utils.sql.compare import results_match
        from duckask.utils.sql.describe import has_top_level_order_by

        if not sql or not q.gold_sql:
            return False
        if db not in self.dbs:
            self.dbs[db] = prepare(db, llm=_NoLLM(), **options).database
        database = self.dbs[db]
        gold, out = database.run(q.gold_sql), database.run(sql)
        if not (gold.ok and out.ok):
            return False
        return bool(results_match(out.df, gold.df, order_matters=has_top_level_order_by(q.gold_sql)))


class _NoLLM:
    name, is_endpoint = "none", True

    def complete(self, *a, **k):  # pragma: no cover - the scorer never asks the model
        raise RuntimeError("the scorer does not use the LLM")


# --------------------------------------------------------------------------- modes
def run_warm(name: str, limit: int | None, score: Scorer, out: Path, log) -> list[dict]:
    from duckask.utils.api import new_shared, prepare, run_turn

    jobs, options = load_set(name, limit)
    recs, preps = [], {}
    for i, (q, db) in enumerate(jobs, 1):
        if db not in preps:
            t0 = time.perf_counter()
            preps[db] = prepare(db, **options)
            log(f"  prepare {Path(db).name}: {time.perf_counter() - t0:.1f}s")
        t0 = time.perf_counter()
        r = run_turn(preps[db], new_shared(q.question))
        wall = time.perf_counter() - t0
        rec = {"id": q.id, "db": Path(db).name, "mode": "warm", "seconds": round(wall, 3), "status": r.status,
               "sql": r.sql, "correct": r.status == "answered" and score(q, db, r.sql, options),
               **figures(r.trace, r.llm_calls)}
        recs.append(rec)
        _append(out, rec)
        log(f"  [{i}/{len(jobs)}] {q.id} {wall:.1f}s {'ok' if rec['correct'] else '--'} calls={rec['llm_calls']}")
    return recs


def _cli() -> str:
    return str(Path(sys.executable).with_name("duckask"))


def _option_flags(options: dict) -> list[str]:
    return [x for k, v in options.items() for x in (f"--{k.replace('_', '-')}", str(v))]


def run_cold(name: str, limit: int | None, score: Scorer, out: Path, log) -> list[dict]:
    jobs, options = load_set(name, limit)
    recs = []
    for i, (q, db) in enumerate(jobs, 1):
        cmd = [_cli(), "ask", "--json", "--db", db, *_option_flags(options), q.question]
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        try:
            d = json.loads(p.stdout)
        except json.JSONDecodeError:
            d = {"status": "crashed", "sql": None, "trace": [], "llm_calls": [], "seconds": 0.0}
            log(f"  {q.id}: no JSON (exit {p.returncode}): {p.stderr[-300:]}")
        calls = d.get("llm_calls") or []
        rec = {"id": q.id, "db": Path(db).name, "mode": "cold", "seconds": round(wall, 3),
               "graph_seconds": d.get("seconds"), "startup": round(wall - (d.get("seconds") or 0.0), 3),
               "status": d.get("status"), "sql": d.get("sql"),
               "correct": d.get("status") == "answered" and score(q, db, d.get("sql"), options),
               **figures(d.get("trace") or [], calls)}
        recs.append(rec)
        _append(out, rec)
        log(f"  [{i}/{len(jobs)}] {q.id} {wall:.1f}s (startup {rec['startup']:.1f}s) "
            f"{'ok' if rec['correct'] else '--'} calls={rec['llm_calls']}")
    return recs


def run_first(runs: int, out: Path, log) -> list[dict]:
    """`duckask demo` right after setup, in a fresh cache folder that holds only the model."""
    from duckask.utils.config import load_settings
    from duckask.utils.llm.model_store import model_path

    model = model_path(load_settings())
    has_warm = subprocess.run([_cli(), "warm", "--help"], capture_output=True).returncode == 0
    recs = []
    for i in range(runs):
        cache = Path(tempfile.mkdtemp(prefix="duckask-first-"))
        try:
            (cache / "models").mkdir()
            os.symlink(model, cache / "models" / model.name)
            env = {**os.environ, "DUCKASK_CACHE_DIR": str(cache)}
            demo_missing = not (ROOT / "data/lahman.duckdb").exists()
            steps = ([[sys.executable, "-m", "duckask.data.lahman"]] if demo_missing else []) + \
                ([[_cli(), "warm"]] if has_warm else [])
            t0 = time.perf_counter()
            for step in steps:
                subprocess.run(step, env=env, check=True, capture_output=True, stdin=subprocess.DEVNULL)
            setup_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            p = subprocess.run([_cli(), "ask", "--json", FIRST_QUESTION], env=env, capture_output=True, text=True,
                               stdin=subprocess.DEVNULL)
            wall = time.perf_counter() - t0
            d = json.loads(p.stdout) if p.stdout.strip().startswith("{") else {}
            rec = {"id": f"first-{i + 1}", "mode": "first", "seconds": round(wall, 3), "setup_steps_seconds":
                   round(setup_s, 1), "warm_step": has_warm, "status": d.get("status"), "answer": d.get("answer"),
                   "startup": round(wall - (d.get("seconds") or 0.0), 3),
                   **figures(d.get("trace") or [], d.get("llm_calls") or [])}
            recs.append(rec)
            _append(out, rec)
            log(f"  first run {i + 1}: {wall:.1f}s ({rec['status']}) after {setup_s:.0f}s of setup steps")
        finally:
            shutil.rmtree(cache, ignore_errors=True)
    return recs


# --------------------------------------------------------------------------- summary
def _append(path: Path, rec: dict) -> None:
    with path.open("a") as f:
        f.write(json.dumps(rec, default=str) + "\n")


def _q(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))]


def summarize(recs: list[dict], cal: float) -> dict:
    secs = [r["seconds"] for r in recs]
    med, p90 = statistics.median(secs), _q(secs, 0.9)
    nodes = sorted({n for r in recs for n in r["nodes"]})
    by_node = {}
    for n in nodes:
        xs = [r["nodes"].get(n, 0.0) for r in recs]
        llm = [r["llm"].get(n) for r in recs if r["llm"].get(n)]
        prompt = sum(d["prompt"] for d in llm)
        gen_ms = sum(d["gen_ms"] for d in llm)
        by_node[n] = {"mean_s": round(statistics.mean(xs), 2), "median_s": round(statistics.median(xs), 2),
                      "share": round(sum(xs) / max(sum(secs), 1e-9), 3),
                      "calls_per_q": round(sum(d["calls"] for d in llm) / len(recs), 2),
                      "prompt_per_q": round(prompt / len(recs)),
                      "processed_per_q": round((prompt - sum(d["reused"] for d in llm)) / len(recs)),
                      "reused_share": round(sum(d["reused"] for d in llm) / prompt, 3) if prompt else None,
                      "generated_per_q": round(sum(d["generated"] for d in llm) / len(recs), 1),
                      "gen_tok_s": round(sum(d["generated"] for d in llm) / (gen_ms / 1000), 1) if gen_ms else None}
    scored = [r for r in recs if "correct" in r]
    prompt = sum(r["prompt_tokens"] for r in recs)
    out = {"n": len(recs), "median_s": round(med, 2), "p90_s": round(p90, 2), "median_cal": round(med / cal, 3),
           "p90_cal": round(p90 / cal, 3),
           "ex": round(100 * sum(bool(r["correct"]) for r in scored) / len(scored), 1) if scored else None,
           "llm_calls_per_q": round(statistics.mean(r["llm_calls"] for r in recs), 2),
           "prompt_per_q": round(prompt / len(recs)),
           "processed_per_q": round((prompt - sum(r["reused_tokens"] for r in recs)) / len(recs)),
           "reused_share": round(sum(r["reused_tokens"] for r in recs) / prompt, 3) if prompt else None,
           "generated_per_q": round(statistics.mean(r["generated_tokens"] for r in recs), 1),
           "by_node": by_node}
    if any("startup" in r for r in recs):
        out["startup_median_s"] = round(statistics.median(r["startup"] for r in recs), 2)
    return out


def render(summary: dict) -> str:
    cal = summary["cal"]
    lines = [f"# Speed: {summary['label']} ({summary['date']})", "",
             f"CAL = {cal['start']:.1f} s at the start, {cal.get('end') or float('nan'):.1f} s at the end "
             f"(figures below are divided by the start value). Command: `{summary['command']}`", "",
             "| set | mode | n | EX % | median s | × CAL | p90 s | p90 × CAL | calls/q | prompt tok/q | processed/q "
             "| reused | generated/q | startup s |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for key, s in summary["runs"].items():
        name, mode = key.split("/")
        rs = f"{100 * s['reused_share']:.0f} %" if s["reused_share"] is not None else "—"
        ex = s["ex"] if s["ex"] is not None else "—"
        lines.append(f"| {name} | {mode} | {s['n']} | {ex} | {s['median_s']} | {s['median_cal']} | {s['p90_s']} | "
                     f"{s['p90_cal']} | {s['llm_calls_per_q']} | {s['prompt_per_q']} | {s['processed_per_q']} | {rs} | "
                     f"{s['generated_per_q']} | {s.get('startup_median_s', '—')} |")
    for key, s in summary["runs"].items():
        lines += ["", f"## {key}: by node", "",
                  "| node | mean s | median s | share of time | calls/q | prompt tok/q | processed/q | reused | "
                  "generated/q | generated tok/s |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for n, d in sorted(s["by_node"].items(), key=lambda kv: -kv[1]["mean_s"]):
            rs = f"{100 * d['reused_share']:.0f} %" if d["reused_share"] is not None else "—"
            lines.append(f"| {n} | {d['mean_s']} | {d['median_s']} | {100 * d['share']:.0f} % | {d['calls_per_q']} | "
                         f"{d['prompt_per_q']} | {d['processed_per_q']} | {rs} | {d['generated_per_q']} | "
                         f"{d['gen_tok_s'] or '—'} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--label", required=True, help="folder under docs/results/speed/ for this run")
    ap.add_argument("--sets", default="lahman,nba,spider")
    ap.add_argument("--modes", default="warm", help="warm, cold, first (comma-separated); cold runs --cold-sets only")
    ap.add_argument("--cold-sets", default="lahman")
    ap.add_argument("--limit", type=int, help="at most this many questions a set")
    ap.add_argument("--cold-limit", type=int, help="at most this many questions a set in cold mode")
    ap.add_argument("--first-runs", type=int, default=3)
    ap.add_argument("--resummarize", action="store_true",
                    help="no run: summarize the label's existing records with --cal-start/--cal-end (a run cut short)")
    ap.add_argument("--cal-start", type=float)
    ap.add_argument("--cal-end", type=float)
    ap.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                    help="a setting for every set, e.g. table_sure_band=0 (repeatable)")
    args = ap.parse_args(argv)
    for kv in args.option:
        key, sep, value = kv.partition("=")
        if not sep:
            sys.exit(f"bench/speed.py: --option wants KEY=VALUE, got {kv!r}")
        OVERRIDES[key.strip()] = value.strip()
    if args.resummarize:
        folder = ROOT / "docs/results/speed" / args.label
        runs = {}
        for f in sorted(folder.glob("*.jsonl")):
            recs = [json.loads(line) for line in f.open() if line.strip()]
            if recs:
                name, mode = f.stem.rsplit("-", 1)
                runs[f"{name}/{mode}"] = summarize(recs, args.cal_start)
        summary = {"label": args.label, "date": time.strftime("%Y-%m-%d %H:%M"), "machine": f"{os.cpu_count()} cores",
                   "command": "python bench/speed.py " + " ".join(argv if argv is not None else sys.argv[1:]),
                   "cal": {"start": args.cal_start, "end": args.cal_end}, "runs": runs}
        (folder / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        (folder / "summary.md").write_text(render(summary))
        print(render(summary))
        return 0
    if not SHARED.exists() and any(s in args.sets for s in ("nba", "spider")):
        sys.exit("bench/speed.py: ../shared is missing (nba and spider read it); use --sets lahman")
    folder = ROOT / "docs/results/speed" / args.label
    folder.mkdir(parents=True, exist_ok=True)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    cal_start = calibrate()
    log(f"CAL (start) = {cal_start:.2f} s")
    score, runs = Scorer(), {}
    modes = args.modes.split(",")
    for name in args.sets.split(","):
        for mode in modes:
            if mode == "first" or (mode == "cold" and name not in args.cold_sets.split(",")):
                continue
            out = folder / f"{name}-{mode}.jsonl"
            out.unlink(missing_ok=True)
            log(f"== {name} {mode}")
            limit = args.cold_limit or args.limit if mode == "cold" else args.limit
            recs = (run_warm if mode == "warm" else run_cold)(name, limit, score, out, log)
            runs[f"{name}/{mode}"] = summarize(recs, cal_start)
    if "first" in modes:
        out = folder / "demo-first.jsonl"
        out.unlink(missing_ok=True)
        log("== demo first")
        runs["demo/first"] = summarize(run_first(args.first_runs, out, log), cal_start)
    cal_end = calibrate()
    log(f"CAL (end) = {cal_end:.2f} s")
    summary = {"label": args.label, "date": time.strftime("%Y-%m-%d %H:%M"), "machine": f"{os.cpu_count()} cores",
               "command": "python bench/speed.py " + " ".join(argv if argv is not None else sys.argv[1:]),
               "cal": {"start": round(cal_start, 2), "end": round(cal_end, 2)}, "runs": runs}
    (folder / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    (folder / "summary.md").write_text(render(summary))
    print(render(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
