"""What one wide result costs a server (issue 62). The probe of the fourth review, ``SELECT repeat(chr(120), 5000000)
FROM generate_series(1, N)``, is refused now (a maker's count is bounded: DuckDB made every row's 5 MB before the
first was fetched); the same width from data (one 5 MB string made once, then a value of every row) is sent to a
real ``duckask serve`` through ``POST /api/sql``, with the byte budget as
shipped (``result_bytes`` 16 MB, ``cell_bytes`` 1 MB) and with it lifted (4 GB and 1 GB: what a row cap alone
allowed). For each: the reply's bytes and seconds, and the server process's peak resident memory (``VmHWM``) before
and after, read from /proc. No LLM runs (the server's model is never asked: ``/api/sql`` runs SQL only).

    .venv/bin/python bench/byte_budget.py [--rows 40] [--out docs/results/byte-budget.json]
    .venv/bin/python bench/byte_budget.py --rows 1000 --shipped-only    # the row cap's worth: 5 GB asked
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from openai_stub import free_port

DUCKASK = Path(sys.executable).parent / "duckask"
PROBE = "SELECT repeat(chr(120), 5000000) AS s FROM generate_series(1, {rows})"       # refused since issue 62
#: The same width from data: one 5 MB string made once, then a value of every row.
WIDE = "SELECT (SELECT string_agg('x', '') FROM range(5000000)) AS s FROM generate_series(1, {rows})"
BUDGETS = {"shipped (16 MB a result, 1 MB a value)": {},
           "lifted (a row cap alone)": {"result_bytes": 4_000_000_000, "cell_bytes": 1_000_000_000}}


def peak_mib(pid: int) -> float:
    """The process's peak resident set (VmHWM), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc status")


def measure(name: str, options: dict, rows: int, work: Path) -> dict:
    db = work / "probe.duckdb"
    if not db.exists():
        duckdb.connect(str(db)).execute("CREATE TABLE t AS SELECT 1 AS i").close()
    config = work / f"config-{len(options)}.yaml"
    config.write_text("".join(f"{k}: {v}\n" for k, v in options.items()))
    port, key = free_port(), "bench-key"
    env = {**os.environ, "DUCKASK_CONFIG": str(config), "DUCKASK_CACHE_DIR": str(work / "cache"),
           "DUCKASK_BACKEND": "openai", "DUCKASK_BASE_URL": "http://127.0.0.1:9/v1", "DUCKASK_API_KEY": "none"}
    proc = subprocess.Popen([str(DUCKASK), "serve", "--db", str(db), "--port", str(port), "--api-key", key],
                            env=env, stdout=subprocess.DEVNULL, stderr=open(work / f"serve-{port}.log", "w"))
    url = f"http://127.0.0.1:{port}"
    try:
        until = time.monotonic() + 180
        while True:
            try:
                if httpx.get(f"{url}/api/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > until:
                raise RuntimeError(f"the server did not start: {(work / f'serve-{port}.log').read_text()[-2000:]}")
            time.sleep(0.2)
        before = peak_mib(proc.pid)
        t0 = time.perf_counter()
        r = httpx.post(f"{url}/api/sql", json={"sql": WIDE.format(rows=rows)},
                       headers={"Authorization": f"Bearer {key}"}, timeout=600)
        seconds = time.perf_counter() - t0
        body = r.json() if r.status_code == 200 else {}
        probe = httpx.post(f"{url}/api/sql", json={"sql": PROBE.format(rows=rows)},
                           headers={"Authorization": f"Bearer {key}"}, timeout=600)
        return {"budget": name, "probe_status": probe.status_code, "probe_error": probe.json().get("error"),
                "status": r.status_code, "reply_mb": round(len(r.content) / 1e6, 2),
                "rows_returned": len(body.get("rows") or []), "truncated": body.get("truncated"),
                "cut": body.get("cut"), "seconds": round(seconds, 2), "peak_mib_before": round(before),
                "peak_mib_after": round(peak_mib(proc.pid))}
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=40, help="rows of 5 MB the probe asks for (default 40: 200 MB)")
    ap.add_argument("--shipped-only", action="store_true", help="only the shipped budget (a large --rows would need "
                    "about 5 MB a row of memory without it)")
    ap.add_argument("--out", help="write the records as JSON here")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="duckask-bytes-") as tmp:
        records = [measure(name, options, args.rows, Path(tmp)) for name, options in BUDGETS.items()
                   if not args.shipped_only or not options]
    print(f"{dt.date.today()}: the probe asks for {args.rows} rows of 5,000,000 bytes")
    print(f"the probe itself (repeat): HTTP {records[0]['probe_status']}: {records[0]['probe_error']}")
    print("| budget | HTTP | reply MB | rows | truncated | seconds | server peak MiB before -> after |")
    print("|---|---:|---:|---:|---|---:|---|")
    for r in records:
        print(f"| {r['budget']} | {r['status']} | {r['reply_mb']} | {r['rows_returned']} | {r['truncated']} | "
              f"{r['seconds']} | {r['peak_mib_before']} -> {r['peak_mib_after']} |")
    if args.out:
        Path(args.out).write_text(json.dumps({"date": str(dt.date.today()), "rows": args.rows, "records": records},
                                             indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
