"""What test_http.py and test_http_settings.py share: the question set, the scripted models, the fixtures."""
from __future__ import annotations

import pytest
from openai_stub import (
    StubOpenAI,
)

from duckask.utils import llm as llm_mod
from duckask.utils.config import ENV_VARS, load_settings
from duckask.utils.llm import OpenAIBackend

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
