"""Several sampled replies to one prompt in one llama.cpp batch (the embedded model's candidates).

The prompt is processed once, on sequence 0 (where the prompt-state tiers keep it). Its KV cells are
shared with sequences 1..n (``llama_memory_seq_cp`` copies no data in a unified KV cache), and every
step decodes one token of each unfinished sequence together, in one ``llama_decode`` call: on a CPU the
weights are read once a step for all of them, which is where a decode's time goes. Each sequence samples
from its own logits row with its own seeded generator (temperature, then the ``top_k`` most likely
tokens), ends at an end-of-turn token, a stop string or ``max_tokens``, and is then removed from the KV
cache, so the context afterwards holds exactly the prompt, as after any other call.

The context must allow several sequences over one shared cache (``n_seq_max`` above 1, ``kv_unified``);
``widen_context`` rebuilds a loaded ``Llama``'s context that way (``LocalBackend`` does it at load time).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from duckask.utils.llm.decode import _Text

#: Sequences one context allows: 0 (the prompt) and up to 8 drafts beside it.
MAX_SEQUENCES = 9
TOP_K = 40


@dataclass
class Draft:
    text: str
    tokens: int
    mean_logprob: float | None      # under the model's own (untempered) distribution: ties go to the likelier


def widen_context(llama) -> None:
    """Rebuild ``llama``'s context with room for ``MAX_SEQUENCES`` sequences over one KV cache of the same
    size (nothing else changes: the greedy text is the same; ``tests/test_llm_batch.py`` holds it)."""
    from llama_cpp import _internals

    params = llama.context_params
    if params.n_seq_max >= MAX_SEQUENCES and params.kv_unified:
        return
    params.n_seq_max, params.kv_unified = MAX_SEQUENCES, True
    old = llama._ctx
    llama._ctx = _internals.LlamaContext(model=llama._model, params=params, verbose=False)
    old.close()
    llama.n_tokens = 0
    llama._requires_eval = True


def _sample(row: np.ndarray, temperature: float, rng: np.random.Generator) -> tuple[int, float]:
    """A token drawn from the ``TOP_K`` most likely of one logits row at ``temperature``, with its
    log-probability under the untempered distribution."""
    top = np.argpartition(row, -TOP_K)[-TOP_K:]
    z = row[top] / max(temperature, 1e-4)
    p = np.exp(z - z.max())
    tok = int(top[rng.choice(len(top), p=p / p.sum())])
    m = float(row.max())
    return tok, float(row[tok]) - m - math.log(float(np.exp(row - m).sum()))


def sample_batch(llama, tokens: Sequence[int], start: int, n: int, *, max_tokens: int, temperature: float,
                 seeds: Sequence[int], stops: list[str]) -> list[Draft]:
    """``n`` sampled continuations of ``tokens`` (the context holds ``tokens[:start]``), decoded together.
    Each draft gets at most its share of the free context (``max_tokens`` or less)."""
    import llama_cpp

    n = min(n, MAX_SEQUENCES - 1, llama.context_params.n_seq_max - 1)
    if n < 1:
        return []
    start = min(start, len(tokens) - 1)     # the last prompt token is always processed: its logits start every draft
    if llama.n_tokens > start:
        llama._ctx.kv_cache_seq_rm(-1, start, -1)
        llama.n_tokens = start
    llama.eval(list(tokens[start:]))
    n_past = llama.n_tokens
    room = (llama.n_ctx() - n_past - 1) // n
    limit = min(max_tokens, room)
    if limit < 1:
        return []
    vocab, n_vocab = llama._model.vocab, llama.n_vocab()
    last = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llama._ctx.ctx, -1), shape=(n_vocab,)).copy()
    mem = llama._ctx.memory
    rngs = [np.random.default_rng(int(s)) for s in seeds[:n]]
    texts = [_Text(llama, stops, None) for _ in range(n)]
    counts, logps = [0] * n, [0.0] * n
    nxt = []
    for i in range(n):
        llama_cpp.llama_memory_seq_cp(mem, 0, i + 1, 0, n_past)
        nxt.append(_sample(last, temperature, rngs[i]))
    active = list(range(n))
    batch = llama_cpp.llama_batch_init(n, 0, 1)
    try:
        while True:
            still = []
            for i in active:            # take each sequence's sampled token; the unfinished go on
                tok, lp = nxt[i]
                if llama_cpp.llama_vocab_is_eog(vocab, tok):
                    continue
                counts[i] += 1
                logps[i] += lp
                if not texts[i].add(tok) and counts[i] < limit:
                    still.append(i)
            active = still
            if not active:
                break
            batch.n_tokens = len(active)
            for j, i in enumerate(active):
                batch.token[j] = nxt[i][0]
                batch.pos[j] = n_past + counts[i] - 1
                batch.n_seq_id[j] = 1
                batch.seq_id[j][0] = i + 1
                batch.logits[j] = 1
            if llama_cpp.llama_decode(llama._ctx.ctx, batch) != 0:
                break                   # no room left in the cache: the drafts end here
            for j, i in enumerate(active):
                row = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llama._ctx.ctx, j), shape=(n_vocab,))
                nxt[i] = _sample(row, temperature, rngs[i])
    finally:
        llama_cpp.llama_batch_free(batch)
        for i in range(n):
            llama_cpp.llama_memory_seq_rm(mem, i + 1, -1, -1)
        llama._requires_eval = True
    return [Draft(t.finish(), c, round(lp / c, 4) if c else None) for t, c, lp in zip(texts, counts, logps)]
