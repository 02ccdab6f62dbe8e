"""How fast a reworded question reached from a kept pair comes back on the page (issue 65), warm, over HTTP.

Starts ``duckask serve`` on the demo (its taught pairs, ``data/lahman_examples.yaml``, are the kept pairs; a fresh
knowledge file, so no pair of this machine's), on 127.0.0.1, and posts each paraphrase of the development half of
``bench/paraphrase_pairs.yaml`` to ``/api/ask`` (what the page calls) twice: the first call warms what a first
question warms (the catalog, the value index), the second is timed. Reported: how each was answered (``path``,
``template.reach``), and the warm seconds of those answered from a kept pair (median, max), with CAL
(``../shared/tools/calibrate.py``) timed first in the same run.

    .venv/bin/python bench/reach_page.py [--out docs/results/paraphrase/page.json]
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
import urllib.request
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from peer import _free_port  # noqa: E402  (a port on 127.0.0.1 no one holds)


def _post(port: int, question: str) -> tuple[float, dict]:
    req = urllib.request.Request(f"http://127.0.0.1:{port}/api/ask", data=json.dumps({"question": question}).encode(),
                                 headers={"Content-Type": "application/json"})
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=600) as r:
        body = json.loads(r.read())
    return time.perf_counter() - t0, body


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path)
    a = ap.parse_args(argv)
    from speed import calibrate

    cal = calibrate()
    print(f"CAL {cal:.1f}s", flush=True)
    spec = yaml.safe_load((ROOT / "bench/paraphrase_pairs.yaml").read_text())
    questions = [p["question"] for pair in spec["halves"]["dev"] for p in pair["paraphrases"]]
    state = Path(tempfile.mkdtemp(prefix="duckask-page-"))
    port = _free_port()
    config = state / "config.yaml"
    config.write_text(yaml.safe_dump({"knowledge_file": str(state / "knowledge.duckdb"),
                                      "audit_file": str(state / "audit.duckdb")}))
    server = subprocess.Popen([str(Path(sys.executable).parent / "duckask"), "serve", "--port", str(port),
                               "--config", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows = []
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=2)
                break
            except OSError:
                time.sleep(1)
        for q in questions:
            _post(port, q)
            seconds, body = _post(port, q)
            rows.append({"question": q, "seconds": round(seconds, 3), "path": body.get("path"),
                         "reach": (body.get("template") or {}).get("reach"),
                         "level": (body.get("confidence") or {}).get("level")})
            print(f"  {seconds:6.2f}s {body.get('path') or '-':<8} {rows[-1]['reach'] or '-':<10} {q}", flush=True)
    finally:
        server.terminate()
        server.wait(timeout=30)
    reached = [r["seconds"] for r in rows if r["path"] == "template"]
    summary = {"benchmark": "reach-page", "date": dt.date.today().isoformat(), "cal_s": round(cal, 2),
               "command": "python bench/reach_page.py " + " ".join(argv if argv is not None else sys.argv[1:]),
               "questions": len(rows), "reached": len(reached),
               "reached_warm_median_s": round(statistics.median(reached), 3) if reached else None,
               "reached_warm_max_s": round(max(reached), 3) if reached else None, "rows": rows}
    print(json.dumps({k: v for k, v in summary.items() if k != "rows"}))
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
