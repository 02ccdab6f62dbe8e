"""Execution-guided voting (duckask.utils.sql.voting) on hand-made outcomes."""
from __future__ import annotations

import pandas as pd

from duckask.utils.db.database import QueryOutcome
from duckask.utils.sql.voting import vote


def ok(rows, cols=("a", "b")):
    return QueryOutcome(sql="x", status="ok", df=pd.DataFrame(rows, columns=list(cols)))


def err():
    return QueryOutcome(sql="x", status="error", error="Binder Error")


def test_majority_result_wins_over_the_greedy_draft():
    v = vote([ok([[1, 2]]), ok([[3, 4]]), ok([[3, 4]])])
    assert v.chosen == 1 and v.groups == [[1, 2], [0]]


def test_column_order_and_row_order_do_not_split_a_group():
    v = vote([ok([[1, 2]]), ok([[5, "x"], [6, "y"]]), ok([["y", 6], ["x", 5]], cols=("b", "a"))])
    assert v.chosen == 1 and v.groups[0] == [1, 2]


def test_drafts_that_fail_get_no_vote():
    v = vote([err(), err(), ok([[1, 2]])])
    assert v.chosen == 2 and v.groups == [[2]]


def test_no_draft_runs_chooses_the_first_with_no_groups():
    v = vote([err(), err()])
    assert v.chosen == 0 and v.groups == []


def test_tie_goes_to_the_earliest_draft():
    assert vote([ok([[1, 2]]), ok([[3, 4]])]).chosen == 0
    assert vote([ok([[1, 2]]), ok([[3, 4]])], weights=[1, 2]).chosen == 1


def test_empty_or_all_null_results_rank_below_a_real_answer():
    empty, nulls = ok([]), ok([[None, None]])
    v = vote([empty, nulls, empty, ok([[7, 8]])], weights=[1, 3, 1, 1])
    assert v.chosen == 3
    assert vote([empty, empty, nulls]).chosen == 0   # nothing better: the larger group


def test_real_queries_vote_on_their_results(small_db):
    """Run on a database: the same rows in another order agree, a failing query is in no group."""
    from duckask.utils.db.database import open_database

    db = open_database(small_db)
    outs = [db.run(s) for s in ("SELECT name FROM teams ORDER BY name", "SELECT nope FROM teams",
                                "SELECT name FROM teams")]
    v = vote(outs)
    assert v.chosen == 0 and outs[0].ok and outs[1].status == "error" and v.groups == [[0, 2]]


