"""Candidates in one batch with the embedded model (``utils/llm/batch.py``): the widened context writes the
same greedy text as a plain one; a batch gives k drafts, the same ones for the same seeds, and leaves the
context holding exactly the prompt."""
from __future__ import annotations

import pytest
from conftest import embedded_model_path
from test_prompt_cache import _prompts

STOPS = ["```", "<|im_end|>", "<|endoftext|>"]


@pytest.fixture(scope="module")
def backend(tmp_path_factory):
    from duckask.utils.config import load_settings
    from duckask.utils.llm.local import LocalBackend

    return LocalBackend(load_settings(model_path=embedded_model_path(),
                                      cache_dir=str(tmp_path_factory.mktemp("batch-cache"))))


def _tokens(llama, msgs):
    from duckask.utils.llm.local import render_chatml

    return llama.tokenize(render_chatml(msgs, "```sql\n").encode(), add_bos=False, special=True)


@pytest.mark.model
def test_the_widened_context_writes_the_same_greedy_text(backend):
    from llama_cpp import Llama

    from duckask.utils.llm.decode import greedy_generate

    assert backend.llama.context_params.n_seq_max > 1 and backend.llama.context_params.kv_unified
    plain = Llama(model_path=backend.path, n_ctx=backend.settings.n_ctx, n_batch=512, verbose=False, seed=0)
    try:
        assert plain.context_params.n_seq_max == 1
        for msgs in _prompts()[:1]:     # one prompt's 96 tokens show it (each more cost a minute of CI)
            texts = []
            for llama in (plain, backend.llama):
                llama.reset()
                texts.append(greedy_generate(llama, _tokens(llama, msgs), 0, max_tokens=96, stops=STOPS, draft=0)[0])
            assert texts[0] == texts[1] and "SELECT" in texts[0].upper()
    finally:
        plain.close()


@pytest.mark.model
def test_a_batch_gives_k_drafts_the_same_for_the_same_seeds(backend):
    from duckask.utils.llm.decode import greedy_generate

    llama = backend.llama
    msgs = _prompts()[0]
    tokens = _tokens(llama, msgs)
    llama.reset()
    greedy = greedy_generate(llama, tokens, 0, max_tokens=48, stops=STOPS, draft=0)[0]

    replies = backend.complete_many(msgs, node="SQLGenerator", n=4, prefix="```sql\n", stop=["```"],
                                    max_tokens=48, temperature=0.7, seed=1)
    again = backend.complete_many(msgs, node="SQLGenerator", n=4, prefix="```sql\n", stop=["```"],
                                  max_tokens=48, temperature=0.7, seed=1)
    texts = [r.text for r in replies]
    assert len(texts) == 4 and texts == [r.text for r in again]
    assert all("SELECT" in t.upper() for t in texts) and len(set(texts)) >= 2
    assert all(r.mean_logprob is not None and r.mean_logprob < 0 for r in replies)
    other = backend.complete_many(msgs, node="SQLGenerator", n=4, prefix="```sql\n", stop=["```"],
                                  max_tokens=48, temperature=0.7, seed=11)
    assert [r.text for r in other] != texts
    # the drafts left nothing behind: the context holds the prompt, and greedy decoding is unchanged
    assert llama.n_tokens == len(tokens)
    llama.reset()
    assert greedy_generate(llama, tokens, 0, max_tokens=48, stops=STOPS, draft=0)[0] == greedy
