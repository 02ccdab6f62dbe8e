"""The OpenAI-compatible endpoint path, continued (the stub server and its fixtures: http_support.py): the
settings that select the endpoint, and ask() end to end through it."""
# ruff: noqa: F811  (pytest fixtures are imported from http_support and used as parameters by name)
from __future__ import annotations

import pytest
from http_support import MESSAGES, backend, http_env, stub  # noqa: F401 (fixtures are used by name)
from openai_stub import (
    ANSWER,
    QUESTION,
    SQL,
    error_body,
    make_cities_db,
    node_of,
    smart_responder,
)

import duckask
from duckask.utils.config import load_settings
from duckask.utils.llm import LLMError, OpenAIBackend, get_llm

pytestmark = pytest.mark.slow        # a local OpenAI-compatible server: not in the fast set (pytest -m "" runs it)


# --------------------------------------------------------------------------- 8. settings select the endpoint
def test_env_vars_select_the_endpoint(stub, monkeypatch):
    monkeypatch.setenv("DUCKASK_BASE_URL", stub.base_url)
    monkeypatch.setenv("DUCKASK_MODEL", "env-model")
    monkeypatch.setenv("DUCKASK_API_KEY", "env-key")
    settings = load_settings()
    assert (settings.base_url, settings.model, settings.api_key) == (stub.base_url, "env-model", "env-key")
    assert settings.uses_endpoint
    be = get_llm(settings)
    assert isinstance(be, OpenAIBackend) and be.is_endpoint and be.name == "env-model"
    assert get_llm(settings) is be  # one instance per configuration

    stub.push("from env")
    assert be.complete(MESSAGES, node="x").text == "from env"
    assert stub.bodies[0]["model"] == "env-model"
    assert stub.requests[0]["headers"]["authorization"] == "Bearer env-key"


def test_openai_env_vars_are_read_and_duckask_ones_win(stub, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "openai-key")
    assert load_settings().base_url == "http://127.0.0.1:9/v1"
    assert load_settings().uses_endpoint
    monkeypatch.setenv("DUCKASK_BASE_URL", stub.base_url)
    s = load_settings()
    assert (s.base_url, s.api_key) == (stub.base_url, "openai-key")


def test_yaml_config_selects_the_endpoint(stub, tmp_path):
    cfg = tmp_path / "duckask.yaml"
    cfg.write_text(
        f"base_url: {stub.base_url}\n"
        "api_key: yaml-key\n"
        "model: yaml-model\n"
        "max_http_retries: 3\n"
        "request_timeout_s: 7\n"
        "nodes:\n"
        "  SQLGenerator: {model: yaml-big, temperature: 0.2}\n")
    settings = load_settings(cfg)
    assert settings.uses_endpoint
    assert (settings.model, settings.api_key, settings.max_http_retries) == ("yaml-model", "yaml-key", 3)
    assert settings.request_timeout_s == 7.0 and isinstance(settings.request_timeout_s, float)
    be = get_llm(settings)
    assert isinstance(be, OpenAIBackend)

    stub.push((503, None), "yaml sql", "yaml other")
    assert be.complete(MESSAGES, node="SQLGenerator").text == "yaml sql"
    assert be.complete(MESSAGES, node="DataAnalyzer").text == "yaml other"
    assert [(b["model"], b["temperature"]) for b in stub.bodies] == [
        ("yaml-big", 0.2), ("yaml-big", 0.2), ("yaml-model", 0)]
    assert stub.requests[0]["headers"]["authorization"] == "Bearer yaml-key"


def test_yaml_config_via_env_and_precedence(stub, tmp_path, monkeypatch):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"base_url: {stub.base_url}\nmodel: yaml-model\n")
    monkeypatch.setenv("DUCKASK_CONFIG", str(cfg))
    assert load_settings().model == "yaml-model"
    monkeypatch.setenv("DUCKASK_MODEL", "env-model")
    assert load_settings().model == "env-model"                       # env beats YAML
    assert load_settings(model="kw-model").model == "kw-model"        # keyword beats env
    assert load_settings().base_url == stub.base_url


def test_backend_local_or_no_url_does_not_use_the_endpoint(stub):
    assert not load_settings().uses_endpoint
    assert not load_settings(base_url=stub.base_url, backend="local").uses_endpoint
    assert load_settings(backend="openai").uses_endpoint


def test_get_llm_honours_settings_that_differ_only_in_retries_or_nodes(stub):
    """Two configurations on the same endpoint and model must not share one backend when their
    retry budget or per-node overrides differ."""
    base = dict(base_url=stub.base_url, api_key="test", model="stub-model", request_timeout_s=5)
    a = get_llm(load_settings(None, max_http_retries=4, **base))
    b = get_llm(load_settings(None, max_http_retries=1, nodes={"SQLGenerator": {"model": "big"}}, **base))
    assert a is not b
    stub.push((429, None), "ok")
    with pytest.raises(LLMError):
        b.complete(MESSAGES, node="SQLGenerator")
    assert len(stub.requests) == 1 and stub.bodies[0]["model"] == "big"
    assert a.complete(MESSAGES, node="SQLGenerator").text == "ok"
    assert stub.bodies[1]["model"] == "stub-model"


# --------------------------------------------------------------------------- 9. ask() end to end
@pytest.fixture
def tiny_db(tmp_path):
    return str(make_cities_db(tmp_path / "tiny.duckdb"))




def _assert_answered(res, stub, cache_dir):
    assert res.status == "answered", res
    assert res.ok
    assert res.sql == SQL
    assert list(res.df.columns) == ["name", "population"]
    assert res.df.values.tolist() == [["Paris", 2100000], ["Lyon", 520000]]
    assert res.answer == ANSWER
    assert res.tables == ["cities"]
    assert res.grades and res.grades[-1]["verdict"] == "pass" and res.grades[-1]["by"] == "llm"
    assert (cache_dir / "catalogs").is_dir()

    ok = [i for i, r in enumerate(stub.responses) if r["status"] == 200]
    served = {node_of(stub.bodies[i]): stub.responses[i]["body"]["usage"] for i in ok}
    assert set(served) == {"SQLGenerator", "DataAnalyzer", "ResponseGrader"}
    assert len(ok) == 3

    # each LLM node made one call whose tokens are the server's usage
    by_node = {t["node"]: t for t in res.trace}
    for node, usage in served.items():
        t = by_node[node]
        assert t["llm_calls"] == 1
        assert (t["prompt_tokens"], t["completion_tokens"]) == (usage["prompt_tokens"], usage["completion_tokens"])
    for node in ("ClarifyQuery", "TableSelector", "SchemaLookup", "SQLExecutor"):
        assert by_node[node]["llm_calls"] == 0
    calls = {c["node"]: c for c in res.llm_calls}
    assert set(calls) == set(served) and len(res.llm_calls) == 3
    for node, usage in served.items():
        assert calls[node]["prompt_tokens"] == usage["prompt_tokens"]
        assert calls[node]["completion_tokens"] == usage["completion_tokens"]
        assert calls[node]["model"] == "stub-model"
    totals = res.to_dict()["llm"]
    assert totals == {"calls": 3, "prompt_tokens": sum(u["prompt_tokens"] for u in served.values()),
                      "completion_tokens": sum(u["completion_tokens"] for u in served.values()),
                      "reused_tokens": 0}   # an endpoint reports no prompt-state reuse


def test_ask_end_to_end_against_the_stub(stub, tiny_db, tmp_path):
    stub.responder = smart_responder
    cache = tmp_path / "cache"
    res = duckask.ask(QUESTION, db=tiny_db, base_url=stub.base_url, api_key="test", model="stub-model",
                      cache_dir=str(cache), grader="llm")      # the LLM grader on the wire too (off by default)
    _assert_answered(res, stub, cache)
    assert len(stub.requests) == 3
    assert [node_of(b) for b in stub.bodies] == ["SQLGenerator", "DataAnalyzer", "ResponseGrader"]
    sql_req = stub.bodies[0]
    assert sql_req["model"] == "stub-model" and sql_req["temperature"] == 0
    assert "cities" in sql_req["messages"][1]["content"] and QUESTION in sql_req["messages"][1]["content"]
    # the analyzer saw the executed rows
    assert "Paris,2100000" in stub.bodies[1]["messages"][-1]["content"]


def test_retries_of_one_call_share_an_idempotency_key(stub):
    stub.push((503, None), (429, None), "ok", "second call")
    b = backend(stub)
    assert b.complete(MESSAGES, node="SQLGenerator").text == "ok"
    assert b.complete(MESSAGES, node="SQLGenerator").text == "second call"
    keys = [r["headers"]["idempotency-key"] for r in stub.requests]
    assert keys[0] == keys[1] == keys[2] != keys[3] and keys[0].startswith("duckask-")


def test_ask_end_to_end_survives_a_429(stub, tiny_db, tmp_path):
    stub.responder = smart_responder
    stub.push((429, error_body(429, "Rate limit reached")))
    cache = tmp_path / "cache"
    res = duckask.ask(QUESTION, db=tiny_db, base_url=stub.base_url, api_key="test", model="stub-model",
                      cache_dir=str(cache), grader="llm")
    _assert_answered(res, stub, cache)
    assert [r["status"] for r in stub.responses] == [429, 200, 200, 200]
    assert stub.bodies[0] == stub.bodies[1]  # the SQL request, retried as is
    assert [node_of(b) for b in stub.bodies] == ["SQLGenerator", "SQLGenerator", "DataAnalyzer", "ResponseGrader"]


def test_ask_options_reach_the_wire(stub, tiny_db, tmp_path):
    """Per-node overrides and max_http_retries given to ask() are what the endpoint sees."""
    stub.responder = smart_responder
    stub.push((429, None))  # with max_http_retries=1 the SQL call fails at once ...
    res = duckask.ask(QUESTION, db=tiny_db, base_url=stub.base_url, api_key="test", model="stub-model",
                      cache_dir=str(tmp_path / "cache"), max_http_retries=1,
                      nodes={"DataAnalyzer": {"model": "writer", "temperature": 0.4}})
    # ... the failed generation goes back through ErrorFixer, and the next one succeeds
    assert res.status == "answered", res
    assert res.df.values.tolist() == [["Paris", 2100000], ["Lyon", 520000]]
    assert res.answer == ANSWER
    assert res.attempts[0]["status"] == "error" and "RateLimitError" in res.attempts[0]["error"]
    assert [r["status"] for r in stub.responses] == [429, 200, 200]     # SQL, SQL again, the sentence
    analyzer = [b for b in stub.bodies if node_of(b) == "DataAnalyzer"]
    assert [(b["model"], b["temperature"]) for b in analyzer] == [("writer", 0.4)]
    assert {b["model"] for b in stub.bodies if node_of(b) != "DataAnalyzer"} == {"stub-model"}
    assert {c["model"] for c in res.llm_calls if c["node"] == "DataAnalyzer"} == {"writer"}


def test_ask_reports_an_error_when_the_endpoint_rejects_the_key(stub, tiny_db, tmp_path):
    stub.responder = lambda body: (401, error_body(401, "Incorrect API key provided"))
    res = duckask.ask(QUESTION, db=tiny_db, base_url=stub.base_url, api_key="bad", model="stub-model",
                      cache_dir=str(tmp_path / "cache"), max_fix_retries=1)
    assert res.status == "error"
    assert res.df is None
    assert all(r["status"] == 401 for r in stub.responses)
    # 401 is never retried: one HTTP request per generation attempt (first try + 1 fix retry)
    assert len(stub.requests) == 2
    assert any("AuthenticationError" in (a.get("error") or "") for a in res.attempts)
