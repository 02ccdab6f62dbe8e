"""The endpoint backend over real HTTP: duckask's OpenAIBackend and the real ``openai`` client
against a scriptable OpenAI-compatible stub server on 127.0.0.1 (tests/openai_stub.py).

Covers the retry policy (429/5xx/timeouts/connection errors retried up to ``max_http_retries``
attempts, other 4xx never), what goes over the wire (model, temperature, messages, stop, per-node
overrides), settings from env/YAML selecting the endpoint, and ``duckask.ask`` end to end.
"""
# ruff: noqa: F811  (pytest fixtures are imported from http_support and used as parameters by name)
from __future__ import annotations

import openai
import pytest
from http_support import MESSAGES, _usage, backend, http_env, stub  # noqa: F401 (fixtures are used by name)
from openai_stub import (
    error_body,
    free_port,
)

from duckask.utils.config import load_settings
from duckask.utils.llm import LLMError, OpenAIBackend
from duckask.utils.sql.extract import extract_sql

pytestmark = pytest.mark.slow        # a local OpenAI-compatible server: not in the fast set (pytest -m "" runs it)




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
