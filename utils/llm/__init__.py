"""The one LLM entry point: ``get_llm(settings).complete(messages, node=...)``.

Backends:
- ``OpenAIBackend``: any OpenAI-compatible endpoint (OpenAI, Azure, Ollama, vLLM, llama.cpp server)
  through the ``openai`` package; tenacity retries transient errors (429, 5xx, timeouts, connection
  errors) and never 4xx client errors.
- ``LocalBackend``: the embedded Qwen2.5-Coder GGUF run in-process by llama-cpp-python, loaded once
  per process, temperature 0. The prompt is rendered with the model's ChatML template so that an
  answer prefix (e.g. "```sql\\nSELECT") can be forced and consecutive calls that share a prefix
  (system + schema) reuse llama.cpp's KV cache.
- ``ScriptedLLM``: a deterministic fake for tests and overhead benchmarks.

Where things are: ``base`` (LLMReply, the LLM protocol, LLMError, MeteredLLM), ``endpoint``
(OpenAIBackend), ``local`` (LocalBackend, the KV-cache fix), ``scripted`` (ScriptedLLM), ``cache``
(CachedLLM, the on-disk reply cache), ``model_store`` (assembling the embedded GGUF) and
``yaml_reply`` (parsing YAML out of a reply), ``prompt_cache`` (prompt states on disk), ``decode``
(prompt-state tiers and prompt-lookup greedy decoding for the embedded model) and ``batch`` (several sampled
replies decoded together in one batch: ``complete_many``'s embedded side).

Every call returns an ``LLMReply`` with node, model, prompt/completion tokens and milliseconds.

Run on its own::

    python -m duckask.utils.llm "Write SQL that returns 1"
"""
from __future__ import annotations

import argparse

from duckask.utils.config import Settings, load_settings
from duckask.utils.llm.base import LLM, LLMError, LLMReply, MeteredLLM, WrappedLLM
from duckask.utils.llm.endpoint import OpenAIBackend
from duckask.utils.llm.local import LocalBackend
from duckask.utils.llm.scripted import ScriptedLLM

__all__ = ["LLM", "LLMError", "LLMReply", "LocalBackend", "MeteredLLM", "OpenAIBackend", "ScriptedLLM",
           "WrappedLLM", "get_llm"]

_BACKENDS: dict[tuple, LLM] = {}


def get_llm(settings: Settings | None = None) -> LLM:
    """The backend the settings ask for; one instance per configuration and process."""
    settings = settings or load_settings()
    # Backends read their settings on every call (per-node model/temperature, retries, key, timeout),
    # so every setting is part of the key: configurations that differ never share a backend.
    key = (settings.uses_endpoint, repr(settings))
    if key not in _BACKENDS:
        _BACKENDS[key] = OpenAIBackend(settings) if settings.uses_endpoint else LocalBackend(settings)
    return _BACKENDS[key]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Send one prompt to the configured LLM.")
    ap.add_argument("prompt")
    ap.add_argument("--max-tokens", type=int, default=128)
    args = ap.parse_args(argv)
    reply = get_llm().complete([{"role": "user", "content": args.prompt}], node="cli",
                               max_tokens=args.max_tokens)
    print(reply.text)
    print({k: v for k, v in reply.as_dict().items() if k != "text"})
    return 0

