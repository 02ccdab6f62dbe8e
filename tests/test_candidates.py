"""Candidates (issue 32): drafts drawn beside the greedy one, chosen by their results, and the answer checks
moving to the next group; on the scripted LLM, every edge (the batch itself: tests/test_llm_batch.py)."""
from __future__ import annotations

import pytest

from duckask.utils.api import ask
from duckask.utils.llm import ScriptedLLM
from duckask.utils.llm.base import LLMReply, MeteredLLM, complete_many

OPTS = {"router": "rules", "analyzer": "rules", "clarify": "off"}
BOSTON = ["SELECT name FROM teams WHERE city = 'Boston'", "SELECT t.name FROM teams AS t WHERE t.city = 'Boston'"]


def test_the_result_most_candidates_give_wins(small_db, isolated_env):
    llm = ScriptedLLM({"SQLGenerator": ["SELECT name FROM teams WHERE id = 1", BOSTON[0], BOSTON[1], BOSTON[0]]})
    r = ask("Which team plays in Boston?", db=str(small_db), llm=llm, candidates=3, **OPTS)
    assert r.ok and r.df["name"].tolist() == ["Celtics"]
    assert llm.count("SQLGenerator") == 4 and [c["seed"] for c in llm.calls[1:4]] == [1, 2, 3]
    chosen = [b for b in r.vote if b["chosen"]]
    assert len(chosen) == 1 and "Boston" in chosen[0]["sql"]
    assert sum(b["drafts"] for b in r.vote if b["agrees"]) == 3 and sum(b["drafts"] for b in r.vote) == 4
    signals = r.confidence["signals"]
    assert (signals["drafts"], signals["agree"]) == (4, 3)


def test_without_candidates_one_draft_is_drawn(small_db, isolated_env):
    llm = ScriptedLLM({"SQLGenerator": [BOSTON[0]]})
    r = ask("Which team plays in Boston?", db=str(small_db), llm=llm, **OPTS)
    assert r.ok and llm.count("SQLGenerator") == 1 and r.vote == []


def test_a_failed_check_moves_to_the_next_group_without_an_llm_call(small_db, isolated_env):
    wrong = "SELECT p.name FROM players AS p JOIN teams AS t ON p.team_id = t.id WHERE t.name = 'Celtics' " \
            "AND p.name = 'Jayson Tatum'"
    right = "SELECT p.name FROM players AS p JOIN teams AS t ON p.team_id = t.id WHERE t.name = 'Celtics'"
    llm = ScriptedLLM({"SQLGenerator": [right, wrong, wrong + " ", wrong]})
    r = ask("Which players play for the Celtics?", db=str(small_db), llm=llm, candidates=3, **OPTS)
    assert r.ok and sorted(r.df["name"]) == ["Jaylen Brown", "Jayson Tatum"]
    assert llm.count() == 4                      # the greedy draft and the three candidates, nothing more
    assert r.grades[0]["verdict"] == "fail" and r.grades[0]["check"] == "unasked_literal"
    assert r.grades[-1]["verdict"] == "pass"
    assert r.candidate_moves and "'Jayson Tatum'" in r.candidate_moves[0]["why"]
    graded = [t for t in r.trace if t["node"] == "ResponseGrader"]
    assert [(t["action"], t["check"]) for t in graded] == [("next", "unasked_literal"), ("pass", None)]
    assert [t["node"] for t in r.trace].count("SQLExecutor") == 2     # the second serves the next group
    chosen = [b for b in r.vote if b["chosen"]]
    assert chosen[0]["sql"].strip() == right
    assert (r.confidence["signals"]["drafts"], r.confidence["signals"]["agree"]) == (4, 1)


def test_when_every_group_fails_the_critique_goes_back_to_the_model(small_db, isolated_env):
    wrong = "SELECT name FROM teams WHERE city = 'Boston' AND name = 'Bulls'"
    llm = ScriptedLLM({"SQLGenerator": [wrong, wrong, BOSTON[0]]})
    r = ask("Which team plays in Boston?", db=str(small_db), llm=llm, candidates=1, max_grader_rounds=1,
            resample_drafts=0, **OPTS)
    assert r.ok and r.df["name"].tolist() == ["Celtics"]
    assert llm.count("SQLGenerator") == 3 and "no rows" in llm.calls[2]["messages"][-1]["content"]


def test_ties_go_to_the_likelier_query():
    import pandas as pd

    from duckask.utils.db.database import QueryOutcome
    from duckask.utils.sql.voting import vote

    a = QueryOutcome(sql="a", status="ok", df=pd.DataFrame({"x": [1]}))
    b = QueryOutcome(sql="b", status="ok", df=pd.DataFrame({"x": [2]}))
    assert vote([a, b]).chosen == 0
    assert vote([a, b], scores=[-0.4, -0.1]).chosen == 1
    assert vote([a, b], weights=[2, 1], scores=[-0.4, -0.1]).chosen == 0     # votes first


class _Batch:
    """A backend with its own batch call (as the embedded model and endpoints have)."""
    name, is_endpoint = "batch", False

    def complete_many(self, messages, *, node, n, seed=0, **kw):
        return [LLMReply(text=f"SELECT {seed + i}", node=node, model="batch", prompt_tokens=1, completion_tokens=1,
                         ms=1.0) for i in range(n)]


def test_complete_many_uses_a_backend_batch_and_the_meter_records_each_reply():
    metered = MeteredLLM(_Batch())
    replies = complete_many(metered, [{"role": "user", "content": "q"}], n=3, node="SQLGenerator", seed=5)
    assert [r.text for r in replies] == ["SELECT 5", "SELECT 6", "SELECT 7"] and len(metered.calls) == 3


def test_complete_many_is_cached_as_one_entry(tmp_path):
    from duckask.utils.llm.cache import CachedLLM

    inner = ScriptedLLM({"SQLGenerator": ["SELECT 1", "SELECT 2"]})
    cached = CachedLLM(inner, tmp_path / "replies.sqlite")
    msgs = [{"role": "user", "content": "q"}]
    first = complete_many(cached, msgs, n=2, node="SQLGenerator", temperature=0.7)
    again = complete_many(cached, msgs, n=2, node="SQLGenerator", temperature=0.7)
    assert [r.text for r in first] == [r.text for r in again] == ["SELECT 1", "SELECT 2"]
    assert inner.count() == 2 and cached.hits == 1


@pytest.mark.parametrize("bad", [-1, 9])
def test_candidates_out_of_range_is_a_clear_error(bad):
    from duckask.utils.config import SettingError, check_setting

    with pytest.raises(SettingError, match="candidates"):
        check_setting("candidates", bad)


def test_below_the_minimum_the_two_largest_candidate_groups_are_shown(small_db, isolated_env, monkeypatch):
    """--min-confidence with candidates: no further drafts; the answer's group and the largest other one."""
    from duckask.utils.trust import confidence as conf_mod

    monkeypatch.setattr(conf_mod, "load_weights", lambda path=None: {
        "features": [f.name for f in conf_mod.FEATURES], "coef": [0.0] * len(conf_mod.FEATURES),
        "intercept": 0.0, "means": [0.0] * len(conf_mod.FEATURES), "impute": {},
        "thresholds": {"high": 0.75, "low": 0.4}})
    lakers = "SELECT name FROM teams WHERE id = 1"
    llm = ScriptedLLM({"SQLGenerator": [BOSTON[0], lakers, BOSTON[1], lakers]})
    r = ask("Which team plays in Boston?", db=str(small_db), llm=llm, candidates=3, min_confidence="high", **OPTS)
    assert r.status == "unsure" and llm.count() == 4          # no draft drawn beyond the candidates
    assert [a["drafts"] for a in r.alternatives] == [2, 2]
    assert r.alternatives[0]["df"]["name"].tolist() == ["Celtics"]
    assert r.alternatives[1]["df"]["name"].tolist() == ["Lakers"]
    assert "2 of 4 drafts agree on the result" in r.confidence["reasons"]


@pytest.mark.parametrize("choices, requests", [(3, 1), (1, 3)])
def test_an_endpoint_is_asked_for_n_choices_in_one_request(choices, requests):
    """A server that gives n choices answers the batch in one request; one that ignores n (Ollama,
    llama.cpp's server) is asked again for the rest."""
    from openai_stub import StubOpenAI

    from duckask.utils.config import load_settings
    from duckask.utils.llm.endpoint import OpenAIBackend

    with StubOpenAI(lambda body: {"contents": [f"SELECT {i}" for i in range(choices)]}) as stub:
        backend = OpenAIBackend(load_settings(None, base_url=stub.base_url, api_key="k", model="m"))
        replies = complete_many(backend, [{"role": "user", "content": "q"}], n=3, node="SQLGenerator",
                                temperature=0.7, seed=1)
        assert len(replies) == 3 and len(stub.requests) == requests
        assert stub.requests[0]["body"]["n"] == 3 and stub.requests[0]["body"]["seed"] == 1
        assert [r["body"].get("n") for r in stub.requests[1:]] == [None] * (requests - 1)


def test_an_empty_group_is_not_moved_to(small_db, isolated_env):
    """Every candidate found nothing: no move between empty groups; the resample and critique go on as before."""
    empty = ["SELECT name FROM teams WHERE city = 'Toronto'", "SELECT t.name FROM teams AS t WHERE t.city = 'Paris'"]
    llm = ScriptedLLM({"SQLGenerator": [empty[0], empty[1], empty[0], BOSTON[0]]})
    r = ask("Which team plays in Boston?", db=str(small_db), llm=llm, candidates=2, resample_drafts=0, **OPTS)
    assert r.candidate_moves == [] and r.df["name"].tolist() == ["Celtics"]
    assert [t["action"] for t in r.trace if t["node"] == "ResponseGrader"] == ["fail", "pass"]
