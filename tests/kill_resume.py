"""Kill ``duckask eval`` with SIGKILL at random points until it finishes, then compare with a clean run.

Shared by tests/test_durability.py and bench/reliability.py (docs/reliability.md).
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from openai_stub import SQL, make_cities_db, smart_responder

DUCKASK = Path(sys.executable).with_name("duckask")


def slow(body: dict):
    """The cooperative model's answer, 0.1 s late (so that a kill can land while a question runs)."""
    reply = smart_responder(body)
    return {"content": reply, "delay": 0.1} if isinstance(reply, str) else reply


def write_questions(path: Path, n: int) -> Path:
    rows = [{"id": f"q{i:02d}", "question": f"What is the population of each city in France? ({i})",
             "gold_sql": SQL} for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def summary(path: Path) -> dict:
    """{id: (status, correct, sql)}; fails on a torn line or a duplicate id."""
    records = [json.loads(line) for line in path.read_text().splitlines()]
    ids = [r["id"] for r in records]
    assert len(ids) == len(set(ids)), "duplicate records"
    return {r["id"]: (r["status"], r["correct"], r["sql"]) for r in records}


def _lines(path: Path) -> int:
    return len(path.read_bytes().splitlines()) if path.exists() else 0


def trial(work: Path, base_url: str, n: int = 24, seed: int = 0, kills: int = 4) -> dict:
    """One trial: a clean run, then a run of the same questions killed ``kills`` times and resumed each time.

    The kill points are drawn as record counts (0 = during start-up or the first questions), and each kill
    waits a random 0-0.3 s past its count, so kills land mid-question and mid-write whatever the host's
    speed (kills timed by the clock alone landed after the run had ended on a faster build). Returns the
    kills that landed mid-run, the records on disk at each, and whether the two record sets are equal."""
    work.mkdir(parents=True, exist_ok=True)
    db = make_cities_db(work / "cities.duckdb")
    questions = write_questions(work / "q.jsonl", n)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DUCKASK_", "OPENAI_"))}
    env.update(DUCKASK_CACHE_DIR=str(work / "cache"), DUCKASK_API_KEY="k", DUCKASK_MODEL="m")

    def cmd(out: Path) -> list[str]:
        return [str(DUCKASK), "eval", str(questions), "--db", str(db), "--out", str(out), "--base-url", base_url,
                "--workers", "2"]

    clean, killed = work / "clean.jsonl", work / "killed.jsonl"
    subprocess.run(cmd(clean), env=env, capture_output=True, timeout=300, check=True)
    rng, landed, records_at_kill = random.Random(seed), 0, []
    for target in sorted(rng.sample(range(n - 2), kills)):
        proc = subprocess.Popen(cmd(killed), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while _lines(killed) < target and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(rng.uniform(0.0, 0.3))
        if proc.poll() is not None:
            continue
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        landed += 1
        records_at_kill.append(_lines(killed))
    done = subprocess.run(cmd(killed), env=env, capture_output=True, timeout=300)
    before = killed.read_bytes()
    subprocess.run(cmd(killed), env=env, capture_output=True, timeout=120, check=True)
    return {"questions": n, "kills": landed, "lines_at_each_kill": records_at_kill,
            "finished": done.returncode == 0,
            "resume_of_finished_run_changed_nothing": killed.read_bytes() == before,
            "equal_to_clean_run": summary(killed) == summary(clean), "records": len(summary(killed))}
