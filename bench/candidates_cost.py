"""What do k candidates cost against one decode on this CPU? (The embedded model; run alone.)

For SQLGenerator prompts as the graph builds them (the demo database's tables and questions, and Spider
dev questions over their own tables), each prompt is processed once (its state kept, as the prompt-state
cache keeps it between questions), then timed: the greedy decode (temperature 0, as the first draft), and
a batch of k sampled drafts (``LocalBackend.complete_many``, one ``llama_decode`` a step for all of them),
for each k. Reported: the median over prompts of (batch seconds / greedy seconds) and of the tokens each
wrote; the default ``candidates`` is the largest k whose batch costs at most ``--budget`` (1.6) greedy
decodes. CAL (``../shared/tools/calibrate.py``) is timed in the same run.

    .venv/bin/python bench/candidates_cost.py --out docs/results/candidates/cost.json
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = [(["people", "batting"], "Who hit the most home runs in 2019?"),
             (["teams"], "How many teams played in the 2019 season?"),
             (["people", "hall_of_fame"], "Which players were inducted into the Hall of Fame in 1936?"),
             (["teams"], "Which team won the World Series in 2016?"),
             (["people", "salaries"], "Who had the highest salary in 2015, and how much was it?"),
             (["pitching", "people"], "Which pitcher had the most strikeouts in 2019?")]


def prompts() -> list[list[dict]]:
    from duckask.nodes.sql_generator import build_messages
    from duckask.utils.app.api import prepare
    from duckask.utils.schema.ddl import render_schema

    prep = prepare(None, llm=object())
    return [build_messages(render_schema(prep.catalog, [t for t in tables if t in prep.catalog.tables]), q, [], None)
            for tables, q in QUESTIONS]


def main(argv: list[str] | None = None) -> int:
    from duckask.utils.config import load_settings
    from duckask.utils.llm.local import LocalBackend

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ks", default="1,2,3,4,5,6")
    ap.add_argument("--budget", type=float, default=1.6)
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT.parent / "shared" / "tools"))
    from calibrate import calibrate

    cal = calibrate()
    backend = LocalBackend(load_settings())
    fence = {"prefix": "```sql\n", "stop": ["```"], "max_tokens": 256}
    ks = [int(k) for k in a.ks.split(",")]
    ratios: dict[int, list[float]] = {k: [] for k in ks}
    tokens: dict[int, list[int]] = {k: [] for k in ks}
    greedy_s, greedy_tokens = [], []
    for msgs in prompts():
        backend.complete(msgs, node="SQLGenerator", max_tokens=1)          # the prompt, processed once
        t0 = time.perf_counter()
        g = backend.complete(msgs, node="SQLGenerator", temperature=0.0, **fence)
        one = time.perf_counter() - t0
        greedy_s.append(one)
        greedy_tokens.append(g.completion_tokens)
        for k in ks:
            t0 = time.perf_counter()
            replies = backend.complete_many(msgs, node="SQLGenerator", n=k, temperature=0.7, seed=1, **fence)
            ratios[k].append((time.perf_counter() - t0) / one)
            tokens[k].append(max(r.completion_tokens for r in replies))
    out = {"date": dt.date.today().isoformat(), "cal_s": cal, "prompts": len(greedy_s),
           "greedy": {"median_s": round(statistics.median(greedy_s), 3),
                      "median_tokens": statistics.median(greedy_tokens)},
           "batch": {k: {"median_x_greedy": round(statistics.median(ratios[k]), 3),
                         "max_x_greedy": round(max(ratios[k]), 3),
                         "median_longest_tokens": statistics.median(tokens[k])} for k in ks},
           "budget": a.budget}
    out["chosen_k"] = max([k for k in ks if out["batch"][k]["median_x_greedy"] <= a.budget], default=0)
    print(f"CAL {cal:.1f} s; greedy decode: median {out['greedy']['median_s']} s, "
          f"{out['greedy']['median_tokens']} tokens ({len(greedy_s)} prompts)")
    print("| k | batch / greedy (median) | worst | longest draft (tokens, median) |\n|---:|---:|---:|---:|")
    for k in ks:
        b = out["batch"][k]
        print(f"| {k} | {b['median_x_greedy']:.2f}x | {b['max_x_greedy']:.2f}x | {b['median_longest_tokens']} |")
    print(f"largest k within {a.budget}x: {out['chosen_k']}")
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
