"""One runner for every living benchmark (bench/suites.yaml): calibration, resume, records and the report.

    .venv/bin/python bench/run.py list                          # the suites and their configurations
    .venv/bin/python bench/run.py run lahman                     # every configuration of a suite
    .venv/bin/python bench/run.py run nba-heldout:models lahman:shipped --resume
    .venv/bin/python bench/run.py show lahman:shipped            # the command it would run, nothing run
    .venv/bin/python bench/run.py table                          # the current figure of each eval suite

An eval configuration writes docs/results/<suite>/<config>.{jsonl,json,md} through `duckask eval` and
<config>.run.json beside them: the command, when it started and ended, the commit, and CAL
(../shared/tools/calibrate.py, timed just before, alone: run one benchmark at a time). ``--resume`` keeps
the records already written (duckask eval skips those questions). The ``table`` command is what
docs/benchmarks.md's cog block prints.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SUITES = ROOT / "bench" / "suites.yaml"
RESULTS = ROOT / "docs" / "results"
CALIBRATE = ROOT.parent / "shared" / "tools" / "calibrate.py"


def load(path: Path = SUITES) -> dict:
    suites = yaml.safe_load(path.read_text())["suites"]
    for name, s in suites.items():
        if s.get("kind") not in ("eval", "script"):
            raise ValueError(f"{path}: suite {name} needs kind eval or script")
        if s["kind"] == "eval" and not s.get("configs"):
            raise ValueError(f"{path}: eval suite {name} has no configs")
    return suites


def targets(suites: dict, names: list[str]) -> list[tuple[str, str | None]]:
    """``SUITE`` or ``SUITE:CONFIG`` names as (suite, config) pairs; an unknown one is an error naming it."""
    out = []
    for name in names:
        suite, _, config = name.partition(":")
        if suite not in suites:
            raise SystemExit(f"unknown suite {suite!r}; known: {', '.join(suites)}")
        s = suites[suite]
        if s["kind"] == "script":
            out.append((suite, None))
            continue
        for c in [config] if config else list(s["configs"]):
            if c not in s["configs"]:
                raise SystemExit(f"{suite} has no configuration {c!r}; it has {', '.join(s['configs'])}")
            out.append((suite, c))
    return out


def command(suite: str, s: dict, config: str | None) -> list[str]:
    py = sys.executable
    if s["kind"] == "script":
        return [py, *s["command"]]
    out = RESULTS / suite / config
    cmd = [py, "-m", "duckask.utils.app.cli", "eval", s["questions"]]
    if s.get("ids"):
        cmd += ["--ids", s["ids"]]
    if s.get("db"):
        cmd += ["--db", s["db"]]
    return cmd + list(s.get("options", [])) + list(s["configs"][config]) + [
        "--out", str(out.relative_to(ROOT)) + ".jsonl", "--report", str(out.relative_to(ROOT))]


def calibrate() -> float | None:
    if not CALIBRATE.exists():
        print(f"bench: no {CALIBRATE}: CAL not measured", file=sys.stderr)
        return None
    code = (f"import sys; sys.path.insert(0, {str(CALIBRATE.parent)!r}); "
            "from calibrate import calibrate; print(calibrate())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    try:
        return round(float(done.stdout.strip().splitlines()[-1]), 2)
    except (ValueError, IndexError):
        print(f"bench: calibration failed: {done.stderr[-500:]}", file=sys.stderr)
        return None


def commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    # docs/results is left out: a run of several suites writes the first one's records before the next starts
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!docs/results"],
                           capture_output=True, text=True, cwd=ROOT).stdout.strip()
    return done.stdout.strip() + ("+changes" if dirty else "")


def now() -> str:
    return datetime.datetime.now().isoformat(timespec="seconds")


def run_one(suite: str, s: dict, config: str | None, resume: bool) -> int:
    if s.get("prepare") and not Path(s.get("creates", "/nonexistent")).exists():
        print(f"== {suite}: preparing", file=sys.stderr)
        subprocess.run([sys.executable, *s["prepare"]], cwd=ROOT, check=True)
    cmd = command(suite, s, config)
    label = f"{suite}:{config}" if config else suite
    meta = {"suite": suite, "config": config, "command": " ".join(c if c else '""' for c in cmd[1:]),
            "commit": commit(), "cores": os.cpu_count()}
    if s["kind"] == "eval":
        (RESULTS / suite).mkdir(parents=True, exist_ok=True)
        records = RESULTS / suite / f"{config}.jsonl"
        if not resume and records.exists():
            records.unlink()
    if s["kind"] == "eval" or s.get("timed"):
        meta["cal_s"] = calibrate()
    print(f"== {label}: {meta['command']}", file=sys.stderr)
    meta["started"] = now()
    rc = subprocess.run(cmd, cwd=ROOT).returncode
    meta.update(finished=now(), exit_code=rc)
    where = RESULTS / suite / f"{config}.run.json" if config else RESULTS / f"{suite}.run.json"
    where.write_text(json.dumps(meta, indent=1) + "\n")
    return rc


def figure(suite: str, config: str) -> dict | None:
    """The figures of one eval configuration's latest report and run, or None when it has not been run."""
    report, run = RESULTS / suite / f"{config}.json", RESULTS / suite / f"{config}.run.json"
    if not report.exists():
        return None
    p = json.loads(report.read_text()).get("pipeline", {})
    meta = json.loads(run.read_text()) if run.exists() else {}
    cal = meta.get("cal_s")
    median = p.get("median_s")
    return {"n": json.loads(report.read_text()).get("questions"), "ex": p.get("ex"), "holds": p.get("holds"),
            "median_s": median,
            "x_cal": round(median / cal, 2) if cal and median is not None else None, "cal_s": cal,
            "date": (meta.get("started") or "")[:10], "commit": meta.get("commit", ""),
            "prompt_tokens": p.get("prompt_tokens_per_q"), "reused": reused_share(RESULTS / suite / f"{config}.jsonl")}


def reused_share(records: Path) -> float | None:
    """The share of prompt tokens the embedded model took from a saved prompt state (the schema's prefix on
    disk from an earlier run) instead of reading them: a run with warm states answers several times faster than
    a cold one, so a median is read with it. None when the records do not say."""
    if not records.exists():
        return None
    prompt = reused = 0
    for line in records.read_text().splitlines():
        r = json.loads(line) if line.strip() else {}
        if r.get("reused_tokens") is None:
            continue
        prompt, reused = prompt + (r.get("prompt_tokens") or 0), reused + r["reused_tokens"]
    return round(100 * reused / prompt) if prompt else None


def trust(records: Path) -> str:
    """How far the run's confidence can be trusted (issue 64): ``high`` answers and how many of them were right, and
    the share of wrong answers labelled ``low``, as the run labelled them (the user's ruler where it was scored)."""
    if not records.exists():
        return " | "
    rows = [json.loads(line) for line in records.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if isinstance(r.get("confidence"), dict) and not r.get("gold_error")]
    right = [bool(r["holds"]) if r.get("holds") is not None else bool(r.get("correct")) for r in rows]
    high = [ok for r, ok in zip(rows, right) if r["confidence"].get("level") == "high"]
    wrong_low = [r["confidence"].get("level") == "low" for r, ok in zip(rows, right) if not ok]
    high_cell = f"{len(high)} ({round(100 * sum(high) / len(high))} %)" if high else "0"
    low_cell = f"{round(100 * sum(wrong_low) / len(wrong_low))}" if wrong_low else ""
    return f"{high_cell} | {low_cell}"


def table(suites: dict) -> str:
    rows = ["| suite | configuration | questions | EX % | holds % | high: n (right) | wrong → low % | "
            "median s (x CAL) | prompt tokens/q | reused % | run on (commit) |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for suite, s in suites.items():
        if s["kind"] != "eval":
            continue
        for config in s["configs"]:
            f = figure(suite, config)
            if f is None:
                rows.append(f"| {suite} | {config} | | not run | | | | | | | |")
                continue
            speed = f"{f['median_s']}" + (f" ({f['x_cal']}x)" if f["x_cal"] is not None else "")
            tokens = f"{f['prompt_tokens']:,.0f}" if f["prompt_tokens"] else ""
            reused = "" if f["reused"] is None else f"{f['reused']}"
            holds = "" if f["holds"] is None else f"{f['holds']}"
            rows.append(f"| {suite} | {config} | {f['n']} | {f['ex']} | {holds} | "
                        f"{trust(RESULTS / suite / f'{config}.jsonl')} | {speed} | {tokens} | {reused} | "
                        f"{f['date']} ({f['commit']}) |")
    return "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Run the living benchmarks of bench/suites.yaml.")
    sub = ap.add_subparsers(dest="what", required=True)
    sub.add_parser("list", help="the suites and their configurations")
    for name in ("run", "show"):
        p = sub.add_parser(name, help="run SUITE[:CONFIG] ..." if name == "run" else "print the commands only")
        p.add_argument("names", nargs="+", metavar="SUITE[:CONFIG]")
        p.add_argument("--resume", action="store_true", help="keep the records already written")
    p = sub.add_parser("rescore", help="score the records of eval SUITE[:CONFIG] ... again as a user reads them "
                       "(answer_columns), asking nothing")
    p.add_argument("names", nargs="+", metavar="SUITE[:CONFIG]")
    sub.add_parser("table", help="the current figure of each eval suite, as markdown")
    a = ap.parse_args(argv)
    suites = load()
    if a.what == "list":
        for name, s in suites.items():
            configs = ", ".join(s.get("configs", {})) or "-"
            print(f"{name:20s} {s['kind']:6s} {configs:40s} {s.get('about', '')}")
    elif a.what == "table":
        print(table(suites), end="")
    elif a.what == "rescore":
        for suite, config in targets(suites, a.names):
            records = RESULTS / suite / f"{config}.jsonl"
            if suites[suite]["kind"] != "eval" or not records.exists():
                print(f"bench: {suite}:{config}: no records to score again", file=sys.stderr)
                continue
            s = suites[suite]
            if s.get("prepare") and not Path(s.get("creates", "/nonexistent")).exists():
                subprocess.run([sys.executable, *s["prepare"]], cwd=ROOT, check=True)
            cmd = command(suite, s, config) + ["--rescore"]
            print(f"== {suite}:{config}: rescore", file=sys.stderr)
            if subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL).returncode:
                return 1
    elif a.what == "show":
        for suite, config in targets(suites, a.names):
            print(" ".join(command(suite, suites[suite], config)))
    else:
        failed = [f"{s}:{c}" for s, c in targets(suites, a.names) if run_one(s, suites[s], c, a.resume)]
        if failed:
            print(f"bench: failed: {', '.join(failed)}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
