"""Execution-guided voting (duckask.utils.sql.voting) on hand-made outcomes."""
from __future__ import annotations

import pandas as pd

from duckask.utils.db.database import QueryOutcome
from duckask.utils.sql.voting import main, vote


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


def test_runs_on_its_own(small_db, capsys):
    assert main(["--db", str(small_db), "SELECT name FROM teams ORDER BY name", "SELECT nope FROM teams",
                 "SELECT name FROM teams"]) == 0
    out = capsys.readouterr().out
    assert "* [0] ok" in out and "[1] error" in out and "groups: [[0, 2]]" in out


