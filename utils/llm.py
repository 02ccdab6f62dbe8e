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

Every call returns an ``LLMReply`` with node, model, prompt/completion tokens and milliseconds.

Run on its own::

    python -m duckask.utils.llm "Write SQL that returns 1"
"""
from __future__ import annotations

import argparse
import atexit
import threading
import time
from dataclasses import dataclass, asdict
from typing import Any, Callable, Iterable, Protocol

from tenacity import retry, retry_if_exception, stop_after_attempt, wait_exponential

from duckask.utils.config import Settings, load_settings


@dataclass
class LLMReply:
    text: str
    node: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    ms: float
    reused_tokens: int = 0     # prompt tokens served from the KV cache (embedded model only)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class LLM(Protocol):
    name: str
    is_endpoint: bool

    def complete(self, messages: list[dict[str, str]], *, node: str, prefix: str = "",
                 stop: list[str] | None = None, max_tokens: int = 256,
                 temperature: float | None = None, seed: int | None = None) -> LLMReply: ...


class LLMError(RuntimeError):
    """An LLM call failed for good (after retries, or a client error that is not retried)."""


# --------------------------------------------------------------------------- OpenAI-compatible
def _is_transient(exc: BaseException) -> bool:
    import openai

    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError, openai.RateLimitError)):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    return False


class OpenAIBackend:
    is_endpoint = True

    def __init__(self, settings: Settings):
        import openai

        self.settings = settings
        self.name = settings.model or "gpt-4o-mini"
        # The openai client's own retries are off: tenacity owns the retry policy.
        self.client = openai.OpenAI(
            base_url=settings.base_url or None,
            api_key=settings.api_key or "not-needed",
            timeout=settings.request_timeout_s,
            max_retries=0,
        )
        self._create = retry(
            retry=retry_if_exception(_is_transient),
            stop=stop_after_attempt(max(1, settings.max_http_retries)),
            wait=wait_exponential(multiplier=0.5, min=0.2, max=8),
            reraise=True,
        )(self.client.chat.completions.create)

    def complete(self, messages, *, node, prefix="", stop=None, max_tokens=256, temperature=None, seed=None):
        opts = self.settings.node_options(node)
        if temperature is not None:
            opts["temperature"] = temperature
        model = opts.get("model") or self.name
        msgs = list(messages)
        if prefix:
            # Chat endpoints cannot be pre-filled portably: ask for the prefix instead.
            msgs[-1] = {**msgs[-1], "content": msgs[-1]["content"] + f"\nStart your answer with: {prefix.strip()}"}
            # The reply now begins with the prefix itself, so a stop sequence inside it (``` in
            # "```sql") would end the reply at once: drop those.
            stop = [s for s in (stop or []) if s not in prefix]
        t0 = time.perf_counter()
        try:
            extra = {"seed": seed} if seed is not None else {}
            resp = self._create(model=model, messages=msgs, temperature=float(opts.get("temperature") or 0.0),
                                max_tokens=max_tokens, stop=stop or None, **extra)
        except Exception as e:  # noqa: BLE001 - re-raised with context
            raise LLMError(f"{node}: LLM endpoint call failed: {type(e).__name__}: {e}") from e
        ms = (time.perf_counter() - t0) * 1000
        text = (resp.choices[0].message.content or "") if resp.choices else ""
        usage = getattr(resp, "usage", None)
        return LLMReply(text=text, node=node, model=resp.model or model,
                        prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                        completion_tokens=getattr(usage, "completion_tokens", 0) or 0, ms=ms)


# --------------------------------------------------------------------------- embedded model
_LOCAL_MODELS: dict[str, Any] = {}
_LOCAL_LOCK = threading.Lock()


def _close_local_models() -> None:
    # Free llama.cpp models before interpreter shutdown tears down the library they need.
    for m in _LOCAL_MODELS.values():
        close = getattr(m, "close", None)
        if close:
            close()
    _LOCAL_MODELS.clear()


atexit.register(_close_local_models)


def render_chatml(messages: Iterable[dict[str, str]], prefix: str = "") -> str:
    """Qwen2.5's chat template, rendered by hand so the answer can be pre-filled."""
    out = []
    for m in messages:
        out.append(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n")
    out.append("<|im_start|>assistant\n" + prefix)
    return "".join(out)


def _reusable_prefix(llama, tokens: list[int]) -> int:
    """Prompt tokens llama.cpp will not have to process: the longest prefix shared with the tokens in
    the context now, or with a state in its RAM cache."""
    from llama_cpp import Llama

    best = Llama.longest_token_prefix(llama._input_ids[: llama.n_tokens].tolist(), tokens) if llama.n_tokens else 0
    cache = getattr(llama, "cache", None)
    if cache is not None and hasattr(cache, "cache_state"):
        for key in cache.cache_state:
            best = max(best, Llama.longest_token_prefix(key, tokens))
    return best


def compact_ram_cache(capacity_bytes: int):
    """llama.cpp's RAM prompt cache, without its hidden cost.

    llama-cpp-python's ``save_state`` copies the logits buffer with every state (n_batch x vocabulary
    floats: 311 MB for this model) although, without ``logits_all``, nothing reads it back, and
    ``LlamaRAMCache`` counts only the KV bytes against its capacity. A 1 GB cache of ~30 MB prompt
    states thus held over 10 GB, and 5 drafts a question filled 24 GB within 20 questions. Here a
    state keeps one logits row (``load_state`` broadcasts it into the buffer, whose rows are
    rewritten before they are used) and every byte it keeps counts against the capacity.
    """
    from llama_cpp import LlamaRAMCache

    class CompactRAMCache(LlamaRAMCache):
        @property
        def cache_size(self):
            return sum(s.llama_state_size + s.scores.nbytes + s.input_ids.nbytes for s in self.cache_state.values())

        def __setitem__(self, key, value):
            value.scores = value.scores[-1:].copy() if len(value.scores) else value.scores
            super().__setitem__(key, value)

    return CompactRAMCache(capacity_bytes=capacity_bytes)


class LocalBackend:
    is_endpoint = False

    def __init__(self, settings: Settings):
        from duckask.utils.model_store import model_path

        self.settings = settings
        self.path = str(model_path(settings))
        self.name = "embedded:" + self.path.rsplit("/", 1)[-1]
        self.llama = self._load(self.path, settings)

    @staticmethod
    def _load(path: str, settings: Settings):
        with _LOCAL_LOCK:
            if path not in _LOCAL_MODELS:
                try:
                    from llama_cpp import Llama
                except ImportError as e:
                    raise LLMError(
                        "the embedded model needs llama-cpp-python: install duckask[local] "
                        "(see README for the portable build flags), or set DUCKASK_BASE_URL to use an "
                        "OpenAI-compatible endpoint"
                    ) from e
                import os

                threads = settings.n_threads or max(1, min(os.cpu_count() or 1, 8))
                llama = Llama(model_path=path, n_ctx=settings.n_ctx, n_threads=threads,
                              n_threads_batch=threads, n_batch=512, verbose=False, seed=0)
                if settings.kv_cache_mb > 0:
                    # Keep the KV state of recent prompts in RAM (about 28 KB a token for this model), so
                    # that a prompt sharing a prefix with any recent one, not just the last, skips
                    # re-processing it: e.g. the next question's SQLGenerator prompt after a
                    # TableSelector call, or the schema shared by every question on one database.
                    llama.set_cache(compact_ram_cache(settings.kv_cache_mb << 20))
                _LOCAL_MODELS[path] = llama
            return _LOCAL_MODELS[path]

    def complete(self, messages, *, node, prefix="", stop=None, max_tokens=256, temperature=None, seed=None):
        opts = self.settings.node_options(node)
        if temperature is not None:
            opts["temperature"] = temperature
        prompt = render_chatml(messages, prefix)
        with _LOCAL_LOCK:  # one generation at a time: llama.cpp state is not thread-safe
            llama = self.llama
            tokens = llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
            if len(tokens) + max_tokens > llama.n_ctx():
                raise LLMError(f"{node}: prompt of {len(tokens)} tokens does not fit the context "
                               f"({llama.n_ctx()}); select fewer tables or raise n_ctx")
            reused = _reusable_prefix(llama, tokens)
            t0 = time.perf_counter()
            out = llama.create_completion(tokens, max_tokens=max_tokens,
                                          temperature=float(opts.get("temperature") or 0.0),
                                          top_k=1 if not opts.get("temperature") else 40,
                                          seed=seed,
                                          stop=list(stop or []) + ["<|im_end|>", "<|endoftext|>"])
            ms = (time.perf_counter() - t0) * 1000
        usage = out.get("usage", {})
        return LLMReply(text=prefix + out["choices"][0]["text"], node=node, model=self.name,
                        prompt_tokens=usage.get("prompt_tokens", len(tokens)),
                        completion_tokens=usage.get("completion_tokens", 0), ms=ms, reused_tokens=reused)


# --------------------------------------------------------------------------- scripted fake
class ScriptedLLM:
    """A fake LLM: answers from a script, per node, and records every call.

    ``script`` maps a node name to a list of replies (consumed in order; the last one repeats) or to a
    callable ``(messages) -> str``. Replies may be exceptions, which are raised.
    """

    is_endpoint = False

    def __init__(self, script: dict[str, Any] | None = None, name: str = "scripted"):
        self.script = {k: (list(v) if isinstance(v, (list, tuple)) else v) for k, v in (script or {}).items()}
        self.name = name
        self.calls: list[dict[str, Any]] = []

    def complete(self, messages, *, node, prefix="", stop=None, max_tokens=256, temperature=None, seed=None):
        self.calls.append({"node": node, "messages": messages, "prefix": prefix, "temperature": temperature,
                           "seed": seed})
        entry = self.script.get(node)
        if entry is None:
            raise LLMError(f"ScriptedLLM has no reply for node {node}")
        if callable(entry):
            reply = entry(messages)
        else:
            reply = entry.pop(0) if len(entry) > 1 else entry[0]
        if isinstance(reply, BaseException):
            raise reply
        text = str(reply)
        if prefix and not text.startswith(prefix):
            text = prefix + text
        words = sum(len(m["content"].split()) for m in messages)
        return LLMReply(text=text, node=node, model=self.name, prompt_tokens=words,
                        completion_tokens=len(text.split()), ms=0.0)

    def count(self, node: str | None = None) -> int:
        return sum(1 for c in self.calls if node is None or c["node"] == node)


# --------------------------------------------------------------------------- accounting
class WrappedLLM:
    """Base of backends that wrap another one: name, kind and settings are the wrapped backend's."""

    def __init__(self, llm: LLM):
        self.llm = llm

    @property
    def name(self) -> str:
        return self.llm.name

    @property
    def is_endpoint(self) -> bool:
        return self.llm.is_endpoint

    @property
    def settings(self):
        return getattr(self.llm, "settings", None)


class MeteredLLM(WrappedLLM):
    """Wraps a backend for one question and keeps every reply (node, tokens, ms) in ``calls``."""

    def __init__(self, llm: LLM):
        super().__init__(llm)
        self.calls: list[LLMReply] = []

    def complete(self, messages, **kw) -> LLMReply:
        reply = self.llm.complete(messages, **kw)
        self.calls.append(reply)
        return reply


# --------------------------------------------------------------------------- factory
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


LLMFactory = Callable[[Settings], LLM]


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


if __name__ == "__main__":
    raise SystemExit(main())
