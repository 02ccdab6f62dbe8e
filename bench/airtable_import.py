"""Airtable import and --refresh timing against the local Airtable-shaped server (issue 24's benchmark).

A youth football club base (tests/airtable_stub.py: Teams with a rollup, a count and a lookup; Players with
every other field type) of ``--players`` records is served on 127.0.0.1, optionally with a latency per
request (``--latency``: Airtable answers a page in a few hundred ms and allows 5 requests a second). Timed,
each ``--runs`` times (median reported): a full import (``duckask import airtable``'s ``import_base``,
semantic draft included), a ``--refresh`` after 10 players were edited, and a ``--refresh --full``. Also
counted: requests and records read. CAL (``../shared/tools/calibrate.py``) is timed in the same run.

    .venv/bin/python bench/airtable_import.py --players 3000 --latency 0 --out docs/results/airtable/lat0
    .venv/bin/python bench/airtable_import.py --players 3000 --latency 0.2 --out docs/results/airtable/lat200
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def main(argv: list[str] | None = None) -> int:
    from airtable_stub import BASE_ID, TOKEN, Stub, soccer_base

    from duckask.utils.semantic.airtable import import_base, refresh

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--players", type=int, default=3000)
    ap.add_argument("--latency", type=float, default=0.0, help="seconds the server waits before each answer")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--changed", type=int, default=10)
    ap.add_argument("--out", required=True, help="path stem: writes .json and .cal")
    ap.add_argument("--no-cal", action="store_true")
    args = ap.parse_args(argv)
    base = soccer_base(args.players)
    times: dict[str, list[float]] = {"import": [], "refresh": [], "refresh_full": []}
    requests: dict[str, int] = {}
    read: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp, Stub(base) as stub:
        out = Path(tmp) / "club.duckdb"
        stub.latency = args.latency
        for run in range(args.runs):
            for what in ("import", "refresh", "refresh_full"):
                if what == "refresh":
                    for i in range(args.changed):
                        n = (run * args.changed + i) % args.players
                        base.touch("tblPlayers", f"recP{n:05d}", {"fldPGoals": 50 + run})
                stub.log.clear()
                t0 = time.perf_counter()
                if what == "import":
                    done = import_base(BASE_ID, out, token=TOKEN, endpoint=stub.url, replace=True)
                else:
                    done = refresh(out, token=TOKEN, endpoint=stub.url, full=what == "refresh_full")
                times[what].append(time.perf_counter() - t0)
                requests[what], read[what] = len(stub.log), done.records
                print(f"run {run + 1} {what}: {times[what][-1]:.2f} s, {len(stub.log)} requests, "
                      f"{done.records} records read", file=sys.stderr)
    cal = None
    if not args.no_cal:
        sys.path.insert(0, str(ROOT.parent / "shared" / "tools"))
        from calibrate import calibrate

        cal = calibrate()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    med = {k: round(statistics.median(v), 3) for k, v in times.items()}
    summary = {"players": args.players, "teams": len(base.records["tblTeams"]), "latency_s": args.latency,
               "runs": args.runs, "changed": args.changed, "median_s": med,
               "all_s": {k: [round(x, 3) for x in v] for k, v in times.items()}, "requests": requests,
               "records_read": read, "refresh_vs_import": round(med["refresh"] / med["import"], 3),
               "cal_s": cal, "median_in_cal": {k: round(v / cal, 2) for k, v in med.items()} if cal else None,
               "date": time.strftime("%Y-%m-%d")}
    out.with_suffix(".json").write_text(json.dumps(summary, indent=2) + "\n")
    if cal:
        out.with_suffix(".cal").write_text(f"{cal:.3f}\n")
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
