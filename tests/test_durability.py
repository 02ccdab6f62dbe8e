"""Durability of ``duckask eval``: killed with SIGKILL at random points, several times, then resumed,
the final records equal a clean run's: no lost ids, no duplicates, no torn lines.

The eval runs as a real process (the console script) against an OpenAI-compatible stub on 127.0.0.1
that answers like a cooperative model, a little slowly, so that kills land mid-run (between records,
mid-question, mid-write). More trials, with figures: bench/reliability.py.
"""
from __future__ import annotations

import pytest
from kill_resume import slow, trial
from openai_stub import StubOpenAI

pytestmark = pytest.mark.slow        # a killed subprocess: not in the fast set (pytest -m "" runs it)


def test_sigkill_and_resume_equals_a_clean_run(tmp_path):
    with StubOpenAI(slow) as stub:
        got = trial(tmp_path, stub.base_url, n=24, seed=2026)
    assert got["finished"] and got["kills"] >= 3, got
    assert got["equal_to_clean_run"] and got["records"] == 24, got
    assert got["resume_of_finished_run_changed_nothing"], got
