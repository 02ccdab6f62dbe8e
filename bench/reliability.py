"""The figures of docs/reliability.md (no model: an OpenAI-compatible stub on 127.0.0.1).

1. Fault rates vs outcomes: ``ask`` N times through a stub that answers each request, with probability
   ``rate``, with one of 12 faults (tests/openai_stub.py FAULT_KINDS: 429 + Retry-After, 500, 503,
   connection reset, slower than the client timeout, non-JSON body, empty, nonsense, invalid YAML,
   SQL in prose, SQL cut in half, repetition to max_tokens). Per rate: answered (and right), ended with
   an error status, crashed (must be 0), wrong answers (must be 0), requests and the most HTTP attempts
   any one call made (grouped by its Idempotency-Key; must stay within max_http_retries).
2. Kill/resume trials: ``duckask eval`` killed with SIGKILL at random points until it finishes, the
   records compared with a clean run's (tests/kill_resume.py).

    .venv/bin/python bench/reliability.py --out docs/results/reliability.json
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from kill_resume import slow, trial
from openai_stub import QUESTION, ROWS, Faults, StubOpenAI, attempts_per_call, make_cities_db, smart_responder

import duckask

BUDGET = dict(max_http_retries=3, max_fix_retries=2, max_grader_rounds=1, resample_drafts=2, request_timeout_s=0.4)


def fault_rates(rates: list[float], n: int, work: Path) -> list[dict]:
    db = str(make_cities_db(work / "cities.duckdb"))
    rows = []
    for rate in rates:
        faults = Faults(smart_responder, rate, seed=int(rate * 1000), slow_s=0.8)
        outcome: Counter = Counter()
        seconds, longest = [], 0
        with StubOpenAI(faults) as stub:
            for _ in range(n):
                start, t0 = len(stub.requests), time.perf_counter()
                try:
                    r = duckask.ask(QUESTION, db=db, base_url=stub.base_url, api_key="k", model="m",
                                    cache_dir=str(work / "cache"), **BUDGET)
                    outcome["answered" if r.ok else r.status] += 1
                    outcome["wrong answer"] += r.ok and r.df.values.tolist() != ROWS
                except Exception:
                    outcome["crashed"] += 1
                seconds.append(time.perf_counter() - t0)
                longest = max(longest, *attempts_per_call(stub.requests[start:]))
            requests = len(stub.requests)
        rows.append({"rate": rate, "questions": n, "requests": requests, "faults_injected": dict(faults.injected),
                     "outcomes": dict(outcome), "max_attempts_per_call": longest,
                     "median_s": round(statistics.median(seconds), 3), "max_s": round(max(seconds), 3)})
        print(f"rate {rate:.0%}: {dict(outcome)}; {sum(faults.injected.values())} faults in {requests} requests; "
              f"most attempts for one call {longest} (budget {BUDGET['max_http_retries']}); "
              f"median {rows[-1]['median_s']} s")
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out")
    ap.add_argument("--rates", default="0.1,0.3,0.6,0.9")
    ap.add_argument("-n", type=int, default=40, help="questions per rate")
    ap.add_argument("--trials", type=int, default=5, help="kill/resume trials")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="duckask-reliability-"))
    rates = fault_rates([float(r) for r in args.rates.split(",")], args.n, work)
    trials = []
    with StubOpenAI(slow) as stub:
        for k in range(args.trials):
            trials.append(trial(work / f"trial{k}", stub.base_url, n=24, seed=k))
            print(f"kill/resume trial {k}: {trials[-1]}")
    if args.out:
        Path(args.out).write_text(json.dumps({
            "date": time.strftime("%Y-%m-%d"), "machine": f"{platform.machine()}, {os.cpu_count()} cores",
            "budget": BUDGET, "fault_rates": rates, "kill_resume": trials}, indent=1))
    bad = sum(r["outcomes"].get("crashed", 0) + r["outcomes"].get("wrong answer", 0) for r in rates)
    return 0 if bad == 0 and all(t["equal_to_clean_run"] for t in trials) else 1


if __name__ == "__main__":
    raise SystemExit(main())
