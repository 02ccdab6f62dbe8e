"""LLM faults over real HTTP: an OpenAI-compatible server on 127.0.0.1 that misbehaves at a set rate.

Faults (``openai_stub.FAULT_KINDS``): 429 with Retry-After, 500, 503, connection resets, answers
slower than the client timeout, a body that is not JSON, empty content, nonsense, invalid YAML, SQL
wrapped in prose, SQL cut in half, and endless repetition up to max_tokens. At each rate, ``ask`` and
``duckask eval`` (8 workers) must end every question with an answer or a clear error status, never
raise, keep every call's HTTP attempts within ``max_http_retries`` and every graph loop within its budget,
and leave a results file of valid JSONL, one record per question. An answer given is the right one.
"""
from __future__ import annotations

import json

import pytest
from openai_stub import QUESTION, ROWS, Faults, StubOpenAI, attempts_per_call, make_cities_db, smart_responder

import duckask
from duckask.utils.app.cli import main as cli_main

pytestmark = pytest.mark.slow        # fault-injecting servers and retries: not in the fast set (pytest -m "" runs it)

BUDGET = dict(max_http_retries=3, max_fix_retries=2, max_grader_rounds=1, resample_drafts=2,
              request_timeout_s=0.4)
STATUSES = {"answered", "error", "needs_clarification", "no_sql"}


@pytest.fixture
def cities(tmp_path):
    return str(make_cities_db(tmp_path / "cities.duckdb"))


@pytest.mark.parametrize("rate", [0.1, 0.3, 0.6])
def test_ask_keeps_going_and_keeps_its_budgets(cities, isolated_env, rate):
    faults = Faults(smart_responder, rate, seed=int(rate * 100), slow_s=0.8)
    outcomes = []
    with StubOpenAI(faults) as stub:
        for _ in range(12):
            start = len(stub.requests)
            r = duckask.ask(QUESTION, db=cities, base_url=stub.base_url, api_key="k", model="m", **BUDGET)
            outcomes.append(r.status)
            assert r.status in STATUSES
            if r.ok:
                assert r.df.values.tolist() == ROWS
            else:
                assert r.answer.strip(), "a failure must say what went wrong"
            # Budgets: each logical call makes at most max_http_retries HTTP attempts ...
            assert max(attempts_per_call(stub.requests[start:])) <= BUDGET["max_http_retries"]
            # ... and the graph's own loops stay bounded.
            assert r.to_dict()["llm"]["calls"] <= 1 + BUDGET["resample_drafts"] + BUDGET["max_fix_retries"] + 2 * (
                1 + BUDGET["max_grader_rounds"])
    assert sum(faults.injected.values()) > 0
    if rate <= 0.3:
        assert outcomes.count("answered") >= 6, outcomes


@pytest.mark.parametrize("rate", [0.3, 0.6])
def test_eval_with_8_workers_writes_one_valid_record_per_question(cities, isolated_env, tmp_path, capsys, rate):
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(json.dumps({"id": f"q{i}", "question": QUESTION, "gold_sql":
                                             "SELECT name, population FROM cities WHERE country = 'France'"}) + "\n"
                                 for i in range(16)))
    out = tmp_path / "out.jsonl"
    config = tmp_path / "config.yaml"
    config.write_text("".join(f"{k}: {v}\n" for k, v in BUDGET.items()))
    faults = Faults(smart_responder, rate, seed=7, slow_s=0.8)
    with StubOpenAI(faults) as stub:
        code = cli_main(["eval", str(questions), "--db", cities, "--out", str(out), "--workers", "8",
                         "--base-url", stub.base_url, "--config", str(config)])
    assert sum(faults.injected.values()) > 0
    capsys.readouterr()
    assert code in (0, 1)
    lines = out.read_text().splitlines()
    records = [json.loads(line) for line in lines]            # every line is whole JSON
    assert sorted(r["id"] for r in records) == sorted(f"q{i}" for i in range(16))
    for r in records:
        assert r["status"] in STATUSES
        assert r["correct"] == (r["status"] == "answered")    # an answer given is the right one


@pytest.mark.parametrize("kind", ["500", "reset", "slow", "garbage", "nonsense", "repetition"])
def test_an_endpoint_that_always_fails_gives_a_clear_error_in_bounded_requests(cities, isolated_env, kind):
    faults = Faults(smart_responder, 1.0, kinds=[kind], slow_s=0.8)
    with StubOpenAI(faults) as stub:
        r = duckask.ask(QUESTION, db=cities, base_url=stub.base_url, api_key="k", model="m", **BUDGET)
        requests = len(stub.requests)
    assert r.status in {"error", "no_sql"} and r.df is None
    assert r.answer.strip()
    calls = 1 + BUDGET["resample_drafts"] + BUDGET["max_fix_retries"]
    assert requests <= calls * BUDGET["max_http_retries"]
