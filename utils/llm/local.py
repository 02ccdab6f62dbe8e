"""``LocalBackend``: the embedded Qwen2.5-Coder GGUF run in-process by llama-cpp-python, loaded once
per process, temperature 0 unless a call asks otherwise. The prompt is rendered with the model's
ChatML template so that an answer prefix (e.g. "```sql\\nSELECT") can be forced, and consecutive calls
that share a prefix (system + schema) reuse llama.cpp's KV cache (a RAM cache of recent prompt states).
"""
from __future__ import annotations

import atexit
import threading
import time
from collections.abc import Iterable
from typing import Any

from duckask.utils.config import Settings
from duckask.utils.llm.base import LLMError, LLMReply

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
        from duckask.utils.llm.model_store import model_path

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

    def complete(self, messages, *, node, prefix="", stop=None, max_tokens=256, temperature=None, seed=None,
                 on_text=None):
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
            args = dict(max_tokens=max_tokens, temperature=float(opts.get("temperature") or 0.0),
                        top_k=1 if not opts.get("temperature") else 40, seed=seed,
                        stop=list(stop or []) + ["<|im_end|>", "<|endoftext|>"])
            if on_text is None:
                out = llama.create_completion(tokens, **args)
                text, usage = out["choices"][0]["text"], out.get("usage", {})
            else:
                pieces = []
                for chunk in llama.create_completion(tokens, stream=True, **args):
                    piece = chunk["choices"][0]["text"]
                    pieces.append(piece)
                    if piece:
                        on_text(piece)
                text = "".join(pieces)
                usage = {"prompt_tokens": len(tokens),
                         "completion_tokens": len(llama.tokenize(text.encode("utf-8"), add_bos=False)) if text else 0}
            ms = (time.perf_counter() - t0) * 1000
        return LLMReply(text=prefix + text, node=node, model=self.name,
                        prompt_tokens=usage.get("prompt_tokens", len(tokens)),
                        completion_tokens=usage.get("completion_tokens", 0), ms=ms, reused_tokens=reused)
