"""``LocalBackend``: the embedded Qwen2.5-Coder GGUF run in-process by llama-cpp-python, loaded once
per process, temperature 0 unless a call asks otherwise. The prompt is rendered with the model's
ChatML template so that an answer prefix (e.g. "```sql\\nSELECT") can be forced.

A call starts from the longest prefix of its prompt already processed (``decode.PromptStates``: the
context, a RAM tier of recent prompts, and prompt states on disk that outlive the process); a call
that names a ``stable`` part of its last message (what most calls on one database share: the
instructions and the schema) has the state at that boundary written to disk, so the next process
starts there. Greedy calls decode with prompt-lookup speculation (``decode.greedy_generate``: the same
text, sooner); sampled calls go through llama-cpp-python's ``create_completion``.
"""
from __future__ import annotations

import atexit
import math
import threading
import time
from collections.abc import Iterable
from typing import Any

import numpy as np

from duckask.utils.config import Settings
from duckask.utils.llm.base import LLMError, LLMReply
from duckask.utils.llm.batch import MAX_SEQUENCES, sample_batch, widen_context
from duckask.utils.llm.decode import PromptStates, decode_all, greedy_generate
from duckask.utils.llm.prompt_cache import PromptStateStore, model_identity

#: A stable part shorter than this is not worth a file of its own (its processing takes under 2 s).
MIN_STABLE_TOKENS = 64

_LOCAL_MODELS: dict[str, Any] = {}
_LOCAL_LOCK = threading.Lock()


def _close_local_models() -> None:
    # Free llama.cpp models before interpreter shutdown tears down the library they need.
    for m, _states in _LOCAL_MODELS.values():
        close = getattr(m, "close", None)
        if close:
            close()
    _LOCAL_MODELS.clear()


atexit.register(_close_local_models)


def certainty(probs: list[float]) -> dict:
    """``min_prob`` and ``mean_logprob`` of a greedy reply's token probabilities (none: both None)."""
    if not probs:
        return {}
    return {"min_prob": round(min(probs), 4),
            "mean_logprob": round(sum(math.log(max(p, 1e-12)) for p in probs) / len(probs), 4)}


def render_chatml(messages: Iterable[dict[str, str]], prefix: str = "") -> str:
    """Qwen2.5's chat template, rendered by hand so the answer can be pre-filled."""
    out = []
    for m in messages:
        out.append(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n")
    out.append("<|im_start|>assistant\n" + prefix)
    return "".join(out)


_GRAMMARS: dict[str, object] = {}


def _grammar(text: str):
    """llama-cpp-python's compiled grammar for a GBNF text (compiled once a text)."""
    if text not in _GRAMMARS:
        from llama_cpp import LlamaGrammar

        _GRAMMARS[text] = LlamaGrammar.from_string(text, verbose=False)
    return _GRAMMARS[text]


class LocalBackend:
    is_endpoint = False

    def __init__(self, settings: Settings):
        from duckask.utils.llm.model_store import model_path

        self.settings = settings
        self.path = str(model_path(settings))
        self.name = "embedded:" + self.path.rsplit("/", 1)[-1]
        self.llama, self.states = self._load(self.path, settings)

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
                widen_context(llama)     # room for a batch of sampled drafts beside the prompt (llm.batch)
                disk = None
                if settings.prompt_cache_mb > 0:
                    disk = PromptStateStore(settings.resolved_cache_dir / "prompt-states",
                                            model_identity(path, settings.n_ctx) + f":seqs {MAX_SEQUENCES}",
                                            settings.prompt_cache_mb << 20)
                # RAM: the full prompt of recent calls (~28 KB a token), so that a prompt sharing a prefix
                # with any recent one, not just the last, skips re-processing it (a resample's drafts, the
                # next question on the same tables). Disk: stable boundaries, across processes.
                _LOCAL_MODELS[path] = (llama, PromptStates(llama, settings.kv_cache_mb << 20, disk))
            return _LOCAL_MODELS[path]

    def _stable_tokens(self, messages: list[dict[str, str]], stable: str, tokens: list[int]) -> int:
        """Where the stable part of the last message ends, in prompt tokens (0: none to keep)."""
        last = messages[-1]
        if not stable or not last["content"].startswith(stable) or self.states.disk is None:
            return 0
        head = render_chatml(messages[:-1], "").rsplit("<|im_start|>assistant\n", 1)[0]
        head += f"<|im_start|>{last['role']}\n{stable}"
        head_tokens = self.llama.tokenize(head.encode("utf-8"), add_bos=False, special=True)
        n = 0
        for a, b in zip(head_tokens, tokens):   # the tokenizer may merge across the boundary: stop before
            if a != b:
                break
            n += 1
        return n if n >= MIN_STABLE_TOKENS and n < len(tokens) else 0

    def prefill(self, messages: list[dict[str, str]], *, stable: str) -> dict:
        """Process the stable part of a prompt and keep its state on disk, without generating
        (``duckask warm``). Returns {tokens, reused, ms, stored}."""
        with _LOCAL_LOCK:
            tokens = self.llama.tokenize(render_chatml(messages).encode("utf-8"), add_bos=False, special=True)
            boundary = self._stable_tokens(messages, stable, tokens)
            if not boundary:
                return {"tokens": 0, "reused": 0, "ms": 0.0, "stored": False}
            t0 = time.perf_counter()
            reused = min(self.states.restore(tokens[:boundary + 1]), boundary)
            if reused < boundary:
                self.llama.eval(tokens[reused:boundary])
            stored = self.states.persist()
            return {"tokens": boundary, "reused": reused, "ms": (time.perf_counter() - t0) * 1000, "stored": stored}

    def complete(self, messages, *, node, prefix="", stop=None, max_tokens=256, temperature=None, seed=None,
                 on_text=None, stable="", grammar=None):
        opts = self.settings.node_options(node)
        if temperature is not None:
            opts["temperature"] = temperature
        temp = float(opts.get("temperature") or 0.0)
        prompt = render_chatml(messages, prefix)
        stops = list(stop or []) + ["<|im_end|>", "<|endoftext|>"]
        with _LOCAL_LOCK:  # one generation at a time: llama.cpp state is not thread-safe
            llama = self.llama
            tokens = llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
            if len(tokens) + max_tokens > llama.n_ctx():
                raise LLMError(f"{node}: prompt of {len(tokens)} tokens does not fit the context "
                               f"({llama.n_ctx()}); select fewer tables or raise n_ctx")
            t0 = time.perf_counter()
            probs: list[float] = []
            reused, start = self._restore(messages, stable, tokens)
            if grammar:      # held to a grammar (llama.cpp's sampler): greedy within what it allows
                if start < len(tokens) - 1:
                    llama.eval(tokens[start:-1])
                prompt_ms = (time.perf_counter() - t0) * 1000
                text, generated = self._sample(tokens, max_tokens, temp, seed, stops, on_text, grammar)
            elif temp == 0.0:
                before = (time.perf_counter() - t0) * 1000
                text, generated, prompt_ms = greedy_generate(
                    llama, tokens, start, max_tokens=max_tokens, stops=stops, on_text=on_text,
                    draft=self.settings.draft_tokens, probs=probs)
                prompt_ms += before
            else:
                if start < len(tokens) - 1:    # the prompt but its last token, timed apart from sampling
                    llama.eval(tokens[start:-1])
                prompt_ms = (time.perf_counter() - t0) * 1000
                text, generated = self._sample(tokens, max_tokens, temp, seed, stops, on_text)
            ms = (time.perf_counter() - t0) * 1000
            self.states.remember()
        return LLMReply(text=prefix + text, node=node, model=self.name, prompt_tokens=len(tokens),
                        completion_tokens=generated, ms=ms, reused_tokens=reused,
                        gen_ms=ms - prompt_ms, **certainty(probs))

    def _restore(self, messages, stable: str, tokens: list[int]) -> tuple[int, int]:
        """Load the longest stored prefix of ``tokens``; process up to the stable boundary and keep its state
        once. Returns (tokens reused, tokens the context now holds)."""
        reused = start = self.states.restore(tokens)
        boundary = self._stable_tokens(messages, stable, tokens)
        if boundary > start and not self.states.disk.has(tokens[:boundary]):
            self.llama.eval(tokens[start:boundary])      # stop at the stable boundary once, to keep its state
            self.states.persist()
            start = boundary
        return reused, start

    def score(self, messages, continuation: str, *, node: str) -> LLMReply:
        """How likely the model finds ``continuation`` as the start of its reply to ``messages``: one forward pass
        over the continuation's tokens (the prompt's longest stored prefix reused), no generation. The reply's
        ``mean_logprob`` is the mean log-probability per token of ``continuation``, ``completion_tokens`` their
        number (the sum is the product of both): a reviewer's score, p(x | y) in Zhang et al.'s Coder-Reviewer
        reranking (2022)."""
        with _LOCAL_LOCK:
            llama = self.llama
            head = llama.tokenize(render_chatml(messages).encode("utf-8"), add_bos=False, special=True)
            tail = llama.tokenize(continuation.encode("utf-8"), add_bos=False, special=False)
            tokens = head + tail
            if not tail or len(tokens) + 1 > llama.n_ctx() or len(tail) >= 512:
                raise LLMError(f"{node}: nothing to score, or {len(tokens)} tokens do not fit the context")
            t0 = time.perf_counter()
            reused = min(self.states.restore(head), len(head) - 1)
            if llama.n_tokens > reused:
                llama._ctx.kv_cache_seq_rm(-1, reused, -1)
                llama.n_tokens = reused
            if reused < len(head) - 1:
                llama.eval(head[reused:-1])
            rows = decode_all(llama, tokens[len(head) - 1:])    # the prompt's last token predicts tail's first
            top = rows.max(axis=1, keepdims=True)
            logz = (top[:, 0] + np.log(np.exp(rows - top).sum(axis=1)))[: len(tail)]
            logps = rows[np.arange(len(tail)), tail] - logz
            llama._requires_eval = True
            self.states.remember()
            ms = (time.perf_counter() - t0) * 1000
        return LLMReply(text=continuation, node=node, model=self.name, prompt_tokens=len(head),
                        completion_tokens=len(tail), ms=ms, reused_tokens=reused,
                        mean_logprob=round(float(logps.mean()), 4))

    def complete_many(self, messages, *, node, n, prefix="", stop=None, max_tokens=256, temperature=None, seed=0,
                      stable=""):
        """``n`` sampled replies (seeds ``seed``..``seed+n-1``) decoded together in one batch over the shared
        prompt (``llm.batch``); one call's time, split evenly among them."""
        temp = float(temperature if temperature is not None else self.settings.resample_temperature)
        prompt = render_chatml(messages, prefix)
        stops = list(stop or []) + ["<|im_end|>", "<|endoftext|>"]
        with _LOCAL_LOCK:
            tokens = self.llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
            if len(tokens) + max_tokens > self.llama.n_ctx():
                raise LLMError(f"{node}: prompt of {len(tokens)} tokens does not fit the context "
                               f"({self.llama.n_ctx()}); select fewer tables or raise n_ctx")
            t0 = time.perf_counter()
            reused, start = self._restore(messages, stable, tokens)
            drafts = sample_batch(self.llama, tokens, start, n, max_tokens=max_tokens, temperature=temp,
                                  seeds=[seed + i for i in range(n)], stops=stops)
            ms = (time.perf_counter() - t0) * 1000
            self.states.remember()
        replies = [LLMReply(text=prefix + d.text, node=node, model=self.name, prompt_tokens=len(tokens),
                            completion_tokens=d.tokens, ms=ms / max(len(drafts), 1),
                            reused_tokens=reused if i == 0 else len(tokens), mean_logprob=d.mean_logprob)
                   for i, d in enumerate(drafts)]
        # A context too full for a batch: the rest one at a time.
        return replies + [self.complete(messages, node=node, prefix=prefix, stop=stop, max_tokens=max_tokens,
                                        temperature=temp, seed=seed + i, stable=stable)
                          for i in range(len(drafts), n)]

    def _sample(self, tokens, max_tokens, temp, seed, stops, on_text, grammar=None) -> tuple[str, int]:
        """A sampled reply (a resample's drafts; a grammar's reply, greedy at temperature 0): llama-cpp-python's
        sampler, from the restored prefix."""
        args = dict(max_tokens=max_tokens, temperature=temp, top_k=40, seed=seed, stop=stops)
        if grammar:
            args["grammar"] = _grammar(grammar)
        if on_text is None:
            out = self.llama.create_completion(tokens, **args)
            return out["choices"][0]["text"], out.get("usage", {}).get("completion_tokens", 0)
        pieces = []
        for chunk in self.llama.create_completion(tokens, stream=True, **args):
            piece = chunk["choices"][0]["text"]
            pieces.append(piece)
            if piece:
                on_text(piece)
        text = "".join(pieces)
        return text, len(self.llama.tokenize(text.encode("utf-8"), add_bos=False)) if text else 0
