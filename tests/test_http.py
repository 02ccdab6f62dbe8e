"""The endpoint backend over real HTTP: duckask's OpenAIBackend and the real ``openai`` client
against a scriptable OpenAI-compatible stub server on 127.0.0.1 (tests/openai_stub.py).

Covers the retry policy (429/5xx/timeouts/connection errors retried up to ``max_http_retries``
attempts, other 4xx never), what goes over the wire (model, temperature, messages, stop, per-node
overrides), settings from env/YAML selecting the endpoint, and ``duckask.ask`` end to end.
"""
from __future__ import annotations

import openai
import pytest
from openai_stub import (
    ANSWER,
    QUESTION,
    SQL,
    StubOpenAI,
    error_body,
    free_port,
    make_cities_db,
    node_of,
    smart_responder,
)

import duckask
from duckask.utils import llm as llm_mod
from duckask.utils.config import ENV_VARS, load_settings
from duckask.utils.llm import LLMError, OpenAIBackend, get_llm
from duckask.utils.sql.extract import extract_sql

pytestmark = pytest.mark.slow        # a local OpenAI-compatible server: not in the fast set (pytest -m "" runs it)

MESSAGES = [{"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Say hello to the tests"}]


# --------------------------------------------------------------------------- fixtures
@pytest.fixture(autouse=True)
def http_env(monkeypatch, tmp_path):
    """No user config, no real endpoint or key from the environment, no proxy for 127.0.0.1, and a
    fresh backend cache."""
    for var in list(ENV_VARS) + ["DUCKASK_CONFIG"]:
        monkeypatch.delenv(var, raising=False)
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.setattr(llm_mod, "_BACKENDS", {})


@pytest.fixture
def stub():
    server = StubOpenAI().start()
    try:
        yield server
    finally:
        server.stop(timeout=5)


def backend(stub: StubOpenAI, **overrides) -> OpenAIBackend:
    opts = dict(base_url=stub.base_url, api_key="test", model="stub-model", max_http_retries=4,
                request_timeout_s=5)
    opts.update(overrides)
    return OpenAIBackend(load_settings(None, **opts))


def _usage(stub: StubOpenAI, i: int) -> dict:
    assert stub.responses[i]["status"] == 200
    return stub.responses[i]["body"]["usage"]


# --------------------------------------------------------------------------- the stub itself
def test_stub_serves_a_proper_chat_completion(stub):
    stub.push("hi there")
    be = backend(stub)
    raw = be.client.chat.completions.create(model="m1", messages=MESSAGES)
    assert raw.object == "chat.completion"
    assert raw.id == "chatcmpl-stub1"
    assert raw.model == "m1"
    assert raw.choices[0].message.role == "assistant"
    assert raw.choices[0].message.content == "hi there"
    assert raw.choices[0].finish_reason == "stop"
    # prompt: (3 + 3) + (5 + 3) words + per-message overhead; completion: 2 words + 1
    assert (raw.usage.prompt_tokens, raw.usage.completion_tokens, raw.usage.total_tokens) == (14, 3, 17)
    assert stub.port > 0 and stub.base_url.startswith("http://127.0.0.1:")
    assert stub.requests[0]["path"] == "/v1/chat/completions"


# --------------------------------------------------------------------------- 1. plain success
def test_plain_success_records_text_usage_model_and_request(stub):
    stub.push("Hello, tests!")
    reply = backend(stub).complete(MESSAGES, node="DataAnalyzer", max_tokens=64)

    assert reply.text == "Hello, tests!"
    assert reply.node == "DataAnalyzer"
    assert reply.model == "stub-model"
    usage = _usage(stub, 0)
    assert (reply.prompt_tokens, reply.completion_tokens) == (usage["prompt_tokens"], usage["completion_tokens"])
    assert (reply.prompt_tokens, reply.completion_tokens) == (14, 3)
    assert reply.ms > 0

    assert len(stub.requests) == 1
    req = stub.requests[0]
    assert req["path"] == "/v1/chat/completions"
    assert req["headers"].get("authorization") == "Bearer test"
    body = req["body"]
    assert body["model"] == "stub-model"
    assert body["temperature"] == 0
    assert body["max_tokens"] == 64
    assert body["messages"] == MESSAGES
    assert not body.get("stop") and "seed" not in body


def test_sampled_draft_sends_temperature_and_seed(stub):
    stub.push("SELECT 1")
    backend(stub).complete(MESSAGES, node="SQLGenerator", max_tokens=64, temperature=0.7, seed=3)
    body = stub.requests[0]["body"]
    assert (body["temperature"], body["seed"]) == (0.7, 3)


def test_reply_model_and_usage_come_from_the_server(stub):
    stub.push({"content": "ok", "model": "stub-model-2024-07-18",
               "usage": {"prompt_tokens": 1234, "completion_tokens": 56}})
    reply = backend(stub).complete(MESSAGES, node="x")
    assert reply.model == "stub-model-2024-07-18"
    assert (reply.prompt_tokens, reply.completion_tokens) == (1234, 56)
    assert _usage(stub, 0)["total_tokens"] == 1290


def test_stop_sequences_are_sent_and_honoured(stub):
    stub.push("SELECT 1;\n\nAnd here is why...")
    reply = backend(stub).complete(MESSAGES, node="x", stop=["\n\n"])
    assert stub.bodies[0]["stop"] == ["\n\n"]
    assert reply.text == "SELECT 1;"


def test_sql_prefix_on_an_endpoint_keeps_the_fenced_sql(stub):
    """SQLGenerator asks for prefix "```sql\\n" and stop ["```"]: an endpoint cannot pre-fill, so the
    model is asked to start with the fence. A stop sequence inside the requested prefix would cut the
    reply at its very first characters, leaving no SQL."""
    stub.push("```sql\nSELECT name FROM cities\n```\nThis lists the cities.")
    reply = backend(stub).complete(MESSAGES, node="SQLGenerator", prefix="```sql\n", stop=["```"])
    body = stub.bodies[0]
    assert body["messages"][0] == MESSAGES[0]
    assert body["messages"][1]["content"] == MESSAGES[1]["content"] + "\nStart your answer with: ```sql"
    assert "```" not in (body.get("stop") or [])
    assert extract_sql(reply.text) == "SELECT name FROM cities"


# --------------------------------------------------------------------------- 2./3. transient errors
def test_429_then_success_is_retried(stub):
    stub.push((429, error_body(429, "Rate limit reached for requests")), "after the rate limit")
    reply = backend(stub).complete(MESSAGES, node="SQLGenerator")
    assert reply.text == "after the rate limit"
    assert [r["status"] for r in stub.responses] == [429, 200]
    assert len(stub.requests) == 2
    assert stub.bodies[0] == stub.bodies[1]
    # tenacity waited before the retry (wait_exponential, min 0.2 s)
    assert stub.requests[1]["time"] - stub.requests[0]["time"] >= 0.2
    assert reply.prompt_tokens == _usage(stub, 1)["prompt_tokens"]


def test_500_then_503_then_success_is_retried(stub):
    stub.push((500, None), (503, error_body(503, "overloaded")), "third time lucky")
    reply = backend(stub).complete(MESSAGES, node="SQLGenerator")
    assert reply.text == "third time lucky"
    assert [r["status"] for r in stub.responses] == [500, 503, 200]
    assert len(stub.requests) == 3


def test_timeout_is_retried(stub):
    stub.push({"content": "too late", "delay": 1.5}, "in time")
    reply = backend(stub, request_timeout_s=0.3).complete(MESSAGES, node="SQLGenerator")
    assert reply.text == "in time"
    assert len(stub.requests) == 2


def test_connection_error_is_retried_then_raises():
    port = free_port()  # nothing listens there
    be = OpenAIBackend(load_settings(None, base_url=f"http://127.0.0.1:{port}/v1", api_key="test",
                                     model="stub-model", max_http_retries=2, request_timeout_s=2))
    with pytest.raises(LLMError, match="APIConnectionError") as ei:
        be.complete(MESSAGES, node="SQLGenerator")
    assert isinstance(ei.value.__cause__, openai.APIConnectionError)
    assert be._create.statistics["attempt_number"] == 2


# --------------------------------------------------------------------------- 4./5. client errors
def test_400_is_not_retried_and_raises_a_clear_llm_error(stub):
    stub.push((400, error_body(400, "max_tokens is too large for this model")), "never sent")
    with pytest.raises(LLMError) as ei:
        backend(stub).complete(MESSAGES, node="SQLGenerator")
    assert len(stub.requests) == 1
    msg = str(ei.value)
    assert msg.startswith("SQLGenerator: LLM endpoint call failed: BadRequestError")
    assert "400" in msg and "max_tokens is too large for this model" in msg
    assert isinstance(ei.value.__cause__, openai.BadRequestError)
    assert ei.value.__cause__.status_code == 400


@pytest.mark.parametrize("status, exc", [(401, openai.AuthenticationError), (403, openai.PermissionDeniedError),
                                         (404, openai.NotFoundError), (422, openai.UnprocessableEntityError)])
def test_other_client_errors_are_not_retried(stub, status, exc):
    stub.push((status, error_body(status, f"client error {status}")), "never sent")
    with pytest.raises(LLMError, match=exc.__name__) as ei:
        backend(stub).complete(MESSAGES, node="DataAnalyzer")
    assert len(stub.requests) == 1
    assert isinstance(ei.value.__cause__, exc)
    assert ei.value.__cause__.status_code == status
    assert f"client error {status}" in str(ei.value)
    assert len(stub.queue) == 1  # the success was never fetched


def test_wrong_path_is_a_404_and_not_retried(stub):
    be = OpenAIBackend(load_settings(None, base_url=f"http://127.0.0.1:{stub.port}/nope", api_key="test",
                                     model="stub-model", max_http_retries=4))
    with pytest.raises(LLMError, match="NotFoundError"):
        be.complete(MESSAGES, node="x")
    assert [r["path"] for r in stub.requests] == ["/nope/chat/completions"]


# --------------------------------------------------------------------------- 6. retries run out
@pytest.mark.parametrize("retries", [2, 4])
def test_persistent_429_stops_after_max_http_retries(stub, retries):
    stub.push(*[(429, error_body(429, "slow down"))] * 10)
    with pytest.raises(LLMError, match="RateLimitError") as ei:
        backend(stub, max_http_retries=retries).complete(MESSAGES, node="SQLGenerator")
    assert len(stub.requests) == retries
    assert "slow down" in str(ei.value)
    assert isinstance(ei.value.__cause__, openai.RateLimitError)


def test_persistent_5xx_stops_after_max_http_retries(stub):
    stub.push(*[(502, None)] * 10)
    with pytest.raises(LLMError, match="InternalServerError"):
        backend(stub, max_http_retries=2).complete(MESSAGES, node="SQLGenerator")
    assert len(stub.requests) == 2


def test_max_http_retries_one_means_a_single_attempt(stub):
    stub.push((429, None), "not reached")
    with pytest.raises(LLMError, match="RateLimitError"):
        backend(stub, max_http_retries=1).complete(MESSAGES, node="SQLGenerator")
    assert len(stub.requests) == 1


# --------------------------------------------------------------------------- 7. per-node overrides
def test_per_node_model_and_temperature(stub):
    stub.push("sql reply", "analysis reply", "grade reply")
    be = backend(stub, nodes={"SQLGenerator": {"model": "big", "temperature": 0.3},
                              "ResponseGrader": {"temperature": 0.7}})
    r1 = be.complete(MESSAGES, node="SQLGenerator")
    r2 = be.complete(MESSAGES, node="DataAnalyzer")
    r3 = be.complete(MESSAGES, node="ResponseGrader")
    assert [(b["model"], b["temperature"]) for b in stub.bodies] == \
        [("big", 0.3), ("stub-model", 0), ("stub-model", 0.7)]
    assert (r1.text, r1.model) == ("sql reply", "big")
    assert (r2.text, r2.model) == ("analysis reply", "stub-model")
    assert r3.model == "stub-model"


def test_global_temperature_applies_to_nodes_without_override(stub):
    stub.push("a", "b")
    be = backend(stub, temperature=0.5, nodes={"SQLGenerator": {"temperature": 0.0}})
    be.complete(MESSAGES, node="SQLGenerator")
    be.complete(MESSAGES, node="DataAnalyzer")
    assert [b["temperature"] for b in stub.bodies] == [0.0, 0.5]


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
