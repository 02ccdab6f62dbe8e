"""The HTTP API under load, with the embedded model: time to the first progress event and to the
answer for the demo question, then N concurrent streamed requests (the embedded backend answers one
at a time; the others must queue, be told their position, and all finish without error).

    .venv/bin/python bench/server_load.py [-n 20] [--out docs/results/server_load.json]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
QUESTION = "Who hit the most home runs in 2019?"


def stream(url: str, question: str) -> dict:
    t0 = time.perf_counter()
    rec: dict = {"first_event_s": None, "queued_positions": [], "nodes": 0}
    with httpx.stream("POST", f"{url}/api/ask/stream", json={"question": question}, timeout=3600) as resp:
        rec["http"] = resp.status_code
        buf = ""
        for chunk in resp.iter_text():
            buf += chunk
            while "\n\n" in buf:
                block, buf = buf.split("\n\n", 1)
                lines = dict(line.split(": ", 1) for line in block.splitlines())
                kind, data = lines["event"], json.loads(lines["data"])
                rec["first_event_s"] = rec["first_event_s"] or round(time.perf_counter() - t0, 2)
                if kind == "queued":
                    rec["queued_positions"].append(data["position"])
                elif kind == "node":
                    rec["nodes"] += 1
                elif kind in ("result", "error"):
                    rec.update(kind=kind, status=data.get("status"), answer=data.get("answer") or data.get("error"),
                               seconds=round(time.perf_counter() - t0, 2))
    return rec


def main(argv: list[str] | None = None) -> int:
    import live_server

    from duckask.data.lahman import demo_db_path
    from duckask.utils.app.server import create_app

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=20)
    ap.add_argument("--out", default=str(ROOT / "docs" / "results" / "server_load.json"))
    args = ap.parse_args(argv)
    url, server = live_server.start(create_app(str(demo_db_path())))      # the demo database, the embedded model
    solo = stream(url, QUESTION)
    print(f"solo: first event {solo['first_event_s']} s, answer {solo['seconds']} s: {solo['answer']}", flush=True)
    recs: list[dict] = [None] * args.n  # type: ignore[list-item]

    def one(i: int) -> None:
        recs[i] = stream(url, QUESTION)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(args.n)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    ok = [r for r in recs if r.get("kind") == "result" and r.get("status") == "answered"]
    summary = {"date": time.strftime("%Y-%m-%d"), "question": QUESTION, "solo": solo, "concurrent": args.n,
               "answered": len(ok), "errors": [r for r in recs if r.get("kind") != "result"],
               "queued_requests": sum(1 for r in recs if r["queued_positions"]),
               "max_position": max((max(r["queued_positions"]) for r in recs if r["queued_positions"]), default=0),
               "first_event_s_median": statistics.median(r["first_event_s"] for r in recs),
               "answer_s_median": statistics.median(r["seconds"] for r in recs),
               "answer_s_max": max(r["seconds"] for r in recs), "wall_s": round(wall, 1), "records": recs}
    Path(args.out).write_text(json.dumps(summary, indent=1, default=str))
    print(f"{args.n} concurrent: {len(ok)} answered, {len(summary['errors'])} errors, "
          f"{summary['queued_requests']} queued (deepest position {summary['max_position']}); "
          f"first event median {summary['first_event_s_median']} s; answer median {summary['answer_s_median']} s, "
          f"max {summary['answer_s_max']} s; wall {summary['wall_s']} s")
    server.should_exit = True
    return 0 if len(ok) == args.n else 1


if __name__ == "__main__":
    raise SystemExit(main())
