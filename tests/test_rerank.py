"""Drafts chosen by what the question asks (issue 63, item 2): ``rerank: reviewer`` orders the groups of results by the
reviewer's log-probability of the question given each group's query and result, plus the log of its votes; off, the
vote alone decides. The reviewer is scripted here; bench/rerank.py measures the embedded model's."""
from __future__ import annotations

import math

import pandas as pd
from conftest import ask_with_drafts

from duckask.utils.db.outcome import QueryOutcome
from duckask.utils.sql.voting import REVIEWER, rerank, reviewer_messages, vote


def _out(sql, rows):
    return QueryOutcome(sql, "ok", pd.DataFrame({"x": rows}))


def test_rerank_puts_the_group_that_reads_back_best_first_with_votes_as_a_prior():
    outs = [_out("SELECT 1", [1]), _out("SELECT 1 + 0", [1]), _out("SELECT 2", [2]), _out("SELECT NULL", [None])]
    v = vote(outs, [1, 1, 1, 1])
    assert v.groups[0] == [0, 1]                                  # the vote: two drafts agree on 1
    told = {}

    def score(messages, question):
        told[messages[1]["content"]] = question
        return -1.0 if "SELECT 2" in messages[1]["content"] else -3.0

    ranked, scores = rerank(v, outs, [1, 1, 1, 1], "what is two?", score)
    assert ranked.groups == [[2], [0, 1], [3]] and ranked.chosen == 2      # -1 + log 1 > -3 + log 2
    assert scores == [-1.0, round(-3.0 + math.log(2), 3), None]           # the all-NULL group is not scored
    assert all(q == " what is two?" for q in told.values()) and len(told) == 2
    close, _ = rerank(v, outs, [1, 1, 1, 1], "q", lambda m, q: -1.0)      # a tie: the votes decide
    assert close.groups[0] == [0, 1]


def test_the_reviewer_sees_the_query_and_its_first_rows():
    messages = reviewer_messages("SELECT  name\nFROM t", pd.DataFrame({"name": ["a", "b", "c", "d"]}))
    assert messages[0]["content"] == REVIEWER
    assert messages[1]["content"] == "SQL: SELECT name FROM t\nResult:\nname\na\nb\nc\n\nThe question:"


def test_the_executor_serves_the_reviewers_choice_only_when_asked(small_db):
    drafts = ["SELECT name FROM players WHERE points > 20", "SELECT name FROM players WHERE points > 24",
              "SELECT name FROM players WHERE points > 20"]
    reviewer = {"Reviewer": lambda messages, q: -0.5 if "> 24" in messages[1]["content"] else -4.0}
    question = "which players are the high scorers?"
    off, _ = ask_with_drafts(small_db, question, drafts, replies=reviewer, candidates=2)
    assert off.sql == drafts[0]                                   # the vote: two drafts of three
    on, llm = ask_with_drafts(small_db, question, drafts, replies=reviewer, candidates=2, rerank="reviewer")
    assert on.sql == drafts[1] and llm.count("Reviewer") == 2
    assert on.vote and next(b for b in on.vote if b["chosen"])["sql"] == drafts[1]
