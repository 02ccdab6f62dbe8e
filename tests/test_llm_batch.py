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


@pytest.mark.model
def test_the_reviewer_scores_a_question_that_fits_the_query_above_one_that_does_not(backend):
    """``LocalBackend.score`` (the reranker's reviewer): one forward pass over the continuation, its mean
    log-probability; the same score twice (the prompt's state reused or not), higher for the question the query
    answers, and the context left holding exactly prompt plus continuation."""
    import pandas as pd

    from duckask.utils.sql.voting import reviewer_messages

    msgs = reviewer_messages("SELECT name, points FROM players ORDER BY points DESC LIMIT 1",
                             pd.DataFrame({"name": ["LeBron James"], "points": [30]}))
    fits = backend.score(msgs, " Who scored the most points?", node="Reviewer")
    again = backend.score(msgs, " Who scored the most points?", node="Reviewer")
    other = backend.score(msgs, " How many arenas hold more than 20,000 people?", node="Reviewer")
    assert fits.mean_logprob == pytest.approx(again.mean_logprob, abs=1e-3) and fits.completion_tokens >= 5
    assert fits.mean_logprob * fits.completion_tokens > other.mean_logprob * other.completion_tokens
    assert backend.llama.n_tokens == other.prompt_tokens + other.completion_tokens
