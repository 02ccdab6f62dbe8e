"""Durability of ``duckask eval``: killed with SIGKILL at random points, several times, then resumed,
the final records equal a clean run's: no lost ids, no duplicates, no torn lines.

The eval runs as a real process (the console script) against an OpenAI-compatible stub on 127.0.0.1
that answers like a cooperative model, a little slowly, so that kills land mid-run (between records,
mid-question, mid-write).
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

import pytest
from openai_stub import SQL, StubOpenAI, make_cities_db, smart_responder

DUCKASK = Path(sys.executable).with_name("duckask")
N = 24


def _questions(path: Path) -> Path:
    rows = [{"id": f"q{i:02d}", "question": f"What is the population of each city in France? ({i})",
             "gold_sql": SQL} for i in range(N)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _cmd(questions: Path, db: Path, out: Path, base_url: str) -> list[str]:
    return [str(DUCKASK), "eval", str(questions), "--db", str(db), "--out", str(out), "--base-url", base_url,
            "--workers", "2"]


def _env(cache: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DUCKASK_", "OPENAI_"))}
    env.update(DUCKASK_CACHE_DIR=str(cache), DUCKASK_API_KEY="k", DUCKASK_MODEL="m")
    return env


def _summary(path: Path) -> dict:
    lines = path.read_text().splitlines()
    records = [json.loads(line) for line in lines]          # a torn line would fail here
    ids = [r["id"] for r in records]
    assert len(ids) == len(set(ids)), "duplicate records"
    return {r["id"]: (r["status"], r["correct"], r["sql"]) for r in records}


def slow(body: dict):
    """The cooperative model's answer, 0.1 s late (so that a kill can land while a question runs)."""
    reply = smart_responder(body)
    return {"content": reply, "delay": 0.1} if isinstance(reply, str) else reply


def test_sigkill_and_resume_equals_a_clean_run(tmp_path):
    db = make_cities_db(tmp_path / "cities.duckdb")
    questions = _questions(tmp_path / "q.jsonl")
    rng = random.Random(2026)
    with StubOpenAI(slow) as stub:
        clean = tmp_path / "clean.jsonl"
        p = subprocess.run(_cmd(questions, db, clean, stub.base_url), env=_env(tmp_path / "cache"),
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr[-2000:]

        killed = tmp_path / "killed.jsonl"
        kills = 0
        for _ in range(12):
            proc = subprocess.Popen(_cmd(questions, db, killed, stub.base_url), env=_env(tmp_path / "cache"),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(1.5, 4.0))                # startup is about 1.5 s; then questions run
            if proc.poll() is not None:
                break
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
            kills += 1
        else:
            pytest.fail("the run never finished")
        assert proc.returncode == 0
        # Resuming a finished run asks nothing and changes nothing.
        before = killed.read_bytes()
        subprocess.run(_cmd(questions, db, killed, stub.base_url), env=_env(tmp_path / "cache"),
                       capture_output=True, timeout=120, check=True)
        assert killed.read_bytes() == before
    assert kills >= 3, f"only {kills} kills landed mid-run"
    assert _summary(killed) == _summary(clean)
    assert len(_summary(clean)) == N
