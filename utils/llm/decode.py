"""What the embedded backend does inside llama.cpp: reuse prompt states, and decode faster.

``PromptStates`` finds, for a prompt, the longest prefix already processed: in the context now, in a
RAM tier of recent prompt states (``kv_cache_mb``: the full prompt of each recent call, so the drafts
of a resample and the next question on the same tables skip what they share), or on disk
(``prompt_cache.PromptStateStore``: states at a prompt's *stable* boundary, which outlive the
process). It loads the best one and trims the context to the shared prefix; the caller processes only
the rest. A state keeps one logits row, not llama-cpp-python's ``save_state`` copy of the whole
logits buffer (311 MB for this model, which nothing reads back without ``logits_all``).

``greedy_generate`` is greedy decoding with prompt-lookup speculation: SQL copies table and column
names, literals and whole clauses from its prompt, so the tokens that followed the last few tokens
somewhere earlier in the prompt are a good guess of what comes next. Each step feeds the next token
plus up to ``draft`` guessed tokens as one batch (logits for every position of that batch only), keeps
the guesses the model agrees with (its argmax at each position), and drops the rest from the KV cache.
The output is the model's own greedy choice at every position, so the text is the same as plain
greedy decoding (``draft=0``), only sooner; ``tests/test_prompt_cache.py`` holds that on recorded
prompts against llama-cpp-python's own ``create_completion``.
"""
from __future__ import annotations

import codecs
import ctypes
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

from duckask.utils.llm.prompt_cache import PromptStateStore, common_prefix


# --------------------------------------------------------------------------- prompt states
def _state_bytes(llama) -> bytes:
    import llama_cpp

    ctx = llama._ctx.ctx
    size = llama_cpp.llama_state_get_size(ctx)
    buf = (ctypes.c_uint8 * size)()
    n = llama_cpp.llama_state_get_data(ctx, buf, size)
    return ctypes.string_at(buf, n)


def _load_state(llama, tokens: np.ndarray, state: bytes) -> bool:
    import llama_cpp

    buf = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
    if llama_cpp.llama_state_set_data(llama._ctx.ctx, buf, len(state)) != len(state):
        llama.reset()
        return False
    llama.input_ids[: len(tokens)] = tokens
    llama.n_tokens = len(tokens)
    llama._requires_eval = True
    return True


class PromptStates:
    """The prompt states one llama.cpp context can start from: the context itself, RAM, disk."""

    def __init__(self, llama, ram_bytes: int, disk: PromptStateStore | None):
        self.llama = llama
        self.ram_bytes = ram_bytes
        self.ram: OrderedDict[bytes, tuple[np.ndarray, bytes]] = OrderedDict()
        self.disk = disk

    def _context_tokens(self) -> np.ndarray:
        return np.asarray(self.llama.input_ids[: self.llama.n_tokens], dtype=np.int32)

    def restore(self, tokens: Sequence[int]) -> int:
        """Start the context from the longest stored prefix of ``tokens``; returns how many tokens
        are in place (at most all but one: the last is always processed, for its logits)."""
        toks = np.asarray(tokens, dtype=np.int32)
        here = common_prefix(self._context_tokens(), toks)
        ram_key, ram_n = None, 0
        for key, (t, _) in self.ram.items():
            n = common_prefix(t, toks)
            if n > ram_n:
                ram_key, ram_n = key, n
        disk_n, entry = self.disk.longest(toks) if self.disk is not None else (0, None)
        if disk_n > max(here, ram_n) and entry is not None and self.disk is not None:     # an entry: from disk
            got = self.disk.read(entry)
            if got is not None and _load_state(self.llama, *got):
                here = disk_n
            else:                       # unreadable: it was removed; fall back to what the context has
                here = common_prefix(self._context_tokens(), toks)
        if ram_n > here and ram_key is not None:
            t, state = self.ram[ram_key]
            self.ram.move_to_end(ram_key)
            if _load_state(self.llama, t, state):
                here = ram_n
            else:
                here = 0
        keep = min(here, len(toks) - 1)
        if keep < self.llama.n_tokens:
            if not self.llama._ctx.kv_cache_seq_rm(-1, keep, -1):
                self.llama.reset()
                keep = 0
            self.llama.n_tokens = keep
        return keep

    def remember(self) -> None:
        """Keep the context's state in the RAM tier (least recently used go past ``ram_bytes``)."""
        if self.ram_bytes <= 0 or not self.llama.n_tokens:
            return
        toks = self._context_tokens()
        state = _state_bytes(self.llama)
        key = toks.tobytes()
        self.ram.pop(key, None)
        self.ram[key] = (toks.copy(), state)
        total = sum(len(s) + t.nbytes for t, s in self.ram.values())
        while total > self.ram_bytes and len(self.ram) > 1:
            _, (t, s) = self.ram.popitem(last=False)
            total -= len(s) + t.nbytes
        if total > self.ram_bytes:
            self.ram.clear()

    def persist(self) -> bool:
        """Write the context's state to disk (the caller stopped processing at a stable boundary)."""
        if self.disk is None or not self.llama.n_tokens:
            return False
        toks = self._context_tokens()
        if self.disk.has(toks):
            return False
        return self.disk.write(toks, _state_bytes(self.llama)) is not None


# --------------------------------------------------------------------------- decoding
def lookup_draft(history: np.ndarray, k: int, max_ngram: int = 3, min_ngram: int = 2) -> list[int]:
    """Up to ``k`` tokens that followed the most recent earlier occurrence of the last n tokens
    (n from ``max_ngram`` down to ``min_ngram``) in ``history``: prompt-lookup decoding's guess."""
    n = len(history)
    if k <= 0:
        return []
    for size in range(min(max_ngram, n - 1), min_ngram - 1, -1):
        tail = history[n - size:]
        windows = np.lib.stride_tricks.sliding_window_view(history[: n - 1], size)
        hits = np.flatnonzero((windows == tail).all(axis=1))
        for idx in hits[::-1]:
            cont = history[idx + size: idx + size + k]
            if len(cont):
                return cont.tolist()
    return []


class _Text:
    """The reply's text as tokens arrive: stop strings cut it; ``on_text`` gets only text that can no
    longer turn out to be the start of a stop string."""

    def __init__(self, llama, stops: list[str], on_text: Callable[[str], None] | None):
        self.llama, self.stops, self.on_text = llama, [s for s in stops if s], on_text
        self.hold = max((len(s) for s in self.stops), default=1) - 1
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="ignore")
        self.text, self.sent, self.done = "", 0, False

    def add(self, token: int) -> bool:
        """Append a token's text; True when a stop string has appeared (the text is then cut)."""
        self.text += self.decoder.decode(self.llama.detokenize([token]))
        cut = min((i for i in (self.text.find(s) for s in self.stops) if i >= 0), default=-1)
        if cut >= 0:
            self.text, self.done = self.text[:cut], True
        elif self.on_text and len(self.text) - self.hold > self.sent:
            self.on_text(self.text[self.sent: len(self.text) - self.hold])
            self.sent = len(self.text) - self.hold
        return self.done

    def finish(self) -> str:
        if not self.done:
            self.text += self.decoder.decode(b"", final=True)
        if self.on_text and len(self.text) > self.sent:
            self.on_text(self.text[self.sent:])
        return self.text


def token_prob(row: np.ndarray, tok: int) -> float:
    """The probability the model gave ``tok``: softmax of one logits row at that token."""
    top = float(row.max())
    return float(np.exp(float(row[tok]) - top) / np.exp(row - top).sum())


def decode_all(llama, batch: Sequence[int]) -> np.ndarray:
    """Append ``batch`` to the context in one decode and return the logits of every one of its positions (row i
    predicts the token after ``batch[i]``)."""
    n_past = llama.n_tokens
    llama._batch.set_batch(batch=list(batch), n_past=n_past, logits_all=True)
    llama._ctx.decode(llama._batch)
    llama.input_ids[n_past: n_past + len(batch)] = batch
    llama.n_tokens = n_past + len(batch)
    return np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(len(batch), llama.n_vocab()))


def greedy_generate(llama, tokens: Sequence[int], start: int, *, max_tokens: int, stops: list[str],
                    draft: int = 8, on_text: Callable[[str], None] | None = None,
                    probs: list[float] | None = None) -> tuple[str, int, float]:
    """Process ``tokens[start:]`` (the context holds ``tokens[:start]``), then decode greedily with
    prompt-lookup drafts of up to ``draft`` tokens. Returns (text, tokens generated, ms spent on
    the prompt). ``probs``, when given, receives the probability of every generated token (how sure
    the model was of each greedy choice: a confidence signal that costs no extra call)."""
    import llama_cpp

    t0 = time.perf_counter()
    vocab = llama._model.vocab
    n_vocab = llama.n_vocab()
    n_ctx = llama.n_ctx()
    llama.eval(list(tokens[start:]))
    prompt_ms = (time.perf_counter() - t0) * 1000
    row = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llama._ctx.ctx, -1), shape=(n_vocab,))
    nxt = int(np.argmax(row))
    p_nxt = token_prob(row, nxt) if probs is not None else 0.0
    history = np.zeros(len(tokens) + max_tokens + draft + 1, dtype=np.int32)
    history[: len(tokens)] = tokens
    h = len(tokens)
    text = _Text(llama, stops, on_text)
    generated = 0

    def take(tok: int, p: float) -> bool:
        """Emit one token; True when generation ends with it (end of turn, a stop string, the limit)."""
        nonlocal h, generated
        if llama_cpp.llama_vocab_is_eog(vocab, tok):
            return True
        if probs is not None:
            probs.append(p)
        generated += 1
        history[h] = tok
        h += 1
        return text.add(tok) or generated >= max_tokens

    while not take(nxt, p_nxt):
        guess = lookup_draft(history[:h], draft)[: max(0, min(max_tokens - generated, n_ctx - llama.n_tokens - 1))]
        batch = [nxt] + guess
        n_past = llama.n_tokens
        rows = decode_all(llama, batch)
        preds = rows.argmax(axis=1)
        i, ended = 0, False
        while i < len(guess) and preds[i] == guess[i]:
            i += 1
            if take(guess[i - 1], token_prob(rows[i - 1], guess[i - 1]) if probs is not None else 0.0):
                ended = True
                break
        if n_past + 1 + i < llama.n_tokens:   # drop the guesses the model did not make
            llama._ctx.kv_cache_seq_rm(-1, n_past + 1 + i, -1)
            llama.n_tokens = n_past + 1 + i
        if ended:
            break
        nxt = int(preds[i])
        p_nxt = token_prob(rows[i], nxt) if probs is not None else 0.0
    llama._requires_eval = True
    return text.finish(), generated, prompt_ms
