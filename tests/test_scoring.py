"""Execution-accuracy scoring (``results_match``) against hand-made DataFrames.

Spider semantics (default): rows are a multiset, order matters only when asked, any consistent column
permutation is accepted, numbers are compared rounded, NULL equals NULL. BIRD semantics: sets of rows.
"""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import duckdb
import numpy as np
import pandas as pd
import pytest

from duckask.utils.sql.compare import results_match


def df(rows: list[list], cols: list[str] | None = None) -> pd.DataFrame:
    if cols is None:
        cols = [f"c{i}" for i in range(len(rows[0]))] if rows else ["c0"]
    return pd.DataFrame(rows, columns=cols)


def col(values: list, name: str = "x") -> pd.DataFrame:
    return pd.DataFrame({name: values})


# --------------------------------------------------------------------------- row order
def test_row_order_ignored_by_default():
    gold = df([[1, "a"], [2, "b"], [3, "c"]])
    pred = df([[3, "c"], [1, "a"], [2, "b"]])
    assert results_match(pred, gold) is True
    assert results_match(pred, gold, mode="bird") is True


def test_order_matters_catches_a_different_order():
    gold = df([[1, "a"], [2, "b"], [3, "c"]])
    assert results_match(df([[1, "a"], [2, "b"], [3, "c"]]), gold, order_matters=True) is True
    assert results_match(df([[3, "c"], [1, "a"], [2, "b"]]), gold, order_matters=True) is False
    assert results_match(df([[2, "b"], [1, "a"], [3, "c"]]), gold, order_matters=True) is False


def test_order_matters_still_compares_values():
    gold = df([[1, "a"], [2, "b"]])
    assert results_match(df([[1, "a"], [2, "z"]]), gold, order_matters=True) is False


# --------------------------------------------------------------------------- duplicates
def test_spider_compares_multisets():
    assert results_match(col([1, 1, 2]), col([1, 2, 2])) is False
    assert results_match(col([1, 2]), col([1, 1, 2])) is False
    assert results_match(col([1, 1, 2]), col([1, 2])) is False
    assert results_match(col([2, 1, 1]), col([1, 1, 2])) is True


def test_bird_compares_sets():
    assert results_match(col([1, 1, 2]), col([1, 2]), mode="bird") is True
    assert results_match(col([1, 2]), col([1, 1, 2]), mode="bird") is True
    assert results_match(col([1, 1, 2]), col([1, 2, 2]), mode="bird") is True
    assert results_match(col([1, 2]), col([1, 2, 3]), mode="bird") is False
    assert results_match(col([1, 2, 3]), col([1, 2]), mode="bird") is False


# --------------------------------------------------------------------------- column permutation
def test_consistent_column_permutation_accepted():
    gold = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]})
    pred = pd.DataFrame({"b": ["x", "y", "z"], "a": [1, 2, 3]})
    assert results_match(pred, gold) is True
    assert results_match(pred, gold, order_matters=True) is True
    assert results_match(pred, gold, mode="bird") is True


def test_three_column_permutation_accepted():
    gold = df([[1, "x", 10.5], [2, "y", 20.5]], ["id", "name", "v"])
    pred = df([[20.5, 2, "y"], [10.5, 1, "x"]], ["v", "id", "name"])
    assert results_match(pred, gold) is True


def test_inconsistent_column_permutation_rejected():
    # Column a holds 1,2 and b holds 3,4 in gold; pred mixes them per row, so no single column
    # permutation turns pred into gold.
    gold = pd.DataFrame({"a": [1, 2], "b": [3, 4]})
    pred = pd.DataFrame({"x": [3, 2], "y": [1, 4]})
    assert results_match(pred, gold) is False
    assert results_match(pred, gold, mode="bird") is False


def test_column_names_do_not_matter():
    assert results_match(pd.DataFrame({"count_star()": [3]}), pd.DataFrame({"n": [3]})) is True


# --------------------------------------------------------------------------- numbers
def test_float_tolerance():
    assert 0.1 + 0.2 != 0.3
    assert results_match(col([0.1 + 0.2]), col([0.3])) is True
    assert results_match(col([4]), col([4.0])) is True
    assert results_match(col([4.0]), col([4])) is True
    assert results_match(col([Decimal("2.50")]), col([2.5])) is True
    assert results_match(col([Decimal("0.3")]), col([0.1 + 0.2])) is True
    assert results_match(col([np.int64(7)]), col([7.0])) is True


def test_different_numbers_do_not_match():
    assert results_match(col([0.3]), col([0.31])) is False
    assert results_match(col([4]), col([5])) is False
    assert results_match(col([Decimal("2.5")]), col([2.6])) is False


def test_numbers_and_text_differ():
    assert results_match(col(["4"]), col([4])) is False


def test_strings_are_compared_trimmed_and_case_sensitive():
    assert results_match(col([" Boston "]), col(["Boston"])) is True
    assert results_match(col(["boston"]), col(["Boston"])) is False


# --------------------------------------------------------------------------- NULLs
def test_null_nan_none_equal_each_other():
    assert results_match(col([None], "x").astype(object), col([float("nan")])) is True
    assert results_match(col([float("nan")]), col([None]).astype(object)) is True
    assert results_match(col([np.nan, 1.0]), pd.DataFrame({"x": [None, 1]}, dtype=object)) is True
    assert results_match(col([pd.NaT]), col([None]).astype(object)) is True


def test_null_differs_from_zero_and_empty_string():
    null = pd.DataFrame({"x": [None]}, dtype=object)
    assert results_match(col([0]), null) is False
    assert results_match(null, col([0])) is False
    assert results_match(col([""]), null) is False
    assert results_match(null, col([""])) is False
    assert results_match(col([float("nan")]), col([0.0])) is False


def test_duckdb_null_integer_equals_expected_none():
    # DuckDB hands a NULL in an INTEGER column back as pd.NA (nullable Int32), not NaN.
    gold = duckdb.sql("SELECT * FROM (VALUES (1, 10), (2, NULL)) t(id, v)").df()
    assert gold["v"].isna().sum() == 1
    assert results_match(gold, pd.DataFrame([[1, 10], [2, None]])) is True
    assert results_match(pd.DataFrame([[1, 10], [2, None]]), gold) is True
    assert results_match(gold, pd.DataFrame([[1, 10], [2, 0]])) is False


def test_dates_match_their_iso_text():
    gold = duckdb.sql("SELECT DATE '2020-01-31' AS d, TIMESTAMP '2020-01-31 10:30:00' AS ts").df()
    assert results_match(gold, pd.DataFrame([["2020-01-31", "2020-01-31 10:30:00"]])) is True
    assert results_match(pd.DataFrame([[dt.date(2020, 1, 31), dt.datetime(2020, 1, 31, 10, 30)]]), gold) is True
    assert results_match(gold, pd.DataFrame([["2020-02-01", "2020-01-31 10:30:00"]])) is False


# --------------------------------------------------------------------------- shapes
def test_empty_results():
    empty2 = pd.DataFrame({"a": [], "b": []})
    assert results_match(pd.DataFrame({"x": [], "y": []}), empty2) is True
    assert results_match(pd.DataFrame({"x": [], "y": []}), empty2, mode="bird") is True
    assert results_match(pd.DataFrame({"x": [], "y": []}), empty2, order_matters=True) is True
    assert results_match(pd.DataFrame({"x": []}), empty2) is False
    assert results_match(pd.DataFrame({"a": [1], "b": [2]}), empty2) is False
    assert results_match(empty2, pd.DataFrame({"a": [1], "b": [2]})) is False
    assert results_match(empty2, pd.DataFrame({"a": [1], "b": [2]}), mode="bird") is False
    assert results_match(pd.DataFrame({"a": [1], "b": [2]}), empty2, mode="bird") is False


@pytest.mark.parametrize("mode", ["spider", "bird"])
def test_different_column_counts_never_match(mode):
    gold = pd.DataFrame({"a": [1, 2]})
    assert results_match(pd.DataFrame({"a": [1, 2], "b": [1, 2]}), gold, mode=mode) is False
    assert results_match(gold, pd.DataFrame({"a": [1, 2], "b": [1, 2]}), mode=mode) is False
    # Even when one column of the wider result is exactly the gold column.
    assert results_match(pd.DataFrame({"a": [1, 2], "name": ["x", "y"]}), gold, mode=mode) is False


@pytest.mark.parametrize("mode", ["spider", "bird"])
def test_none_never_matches(mode):
    gold = col([1])
    assert results_match(None, gold, mode=mode) is False
    assert results_match(gold, None, mode=mode) is False
    assert results_match(None, None, mode=mode) is False


def test_identical_results_match_in_every_mode():
    gold = df([[1, "LeBron James", 30.0], [2, "Anthony Davis", None]])
    for mode in ("spider", "bird"):
        for ordered in (False, True):
            assert results_match(gold.copy(), gold, order_matters=ordered, mode=mode) is True


# -- the ruler a user reads (issue 53): the question's answer columns row for row, extra columns allowed --------------
def P(cols: list[str], rows: list[list]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=cols)


GOLD_TEAM = P(["player_name", "team_city", "team_name"], [["LeBron James", "Cleveland", "Cavaliers"]])


@pytest.mark.parametrize("pred, asked, holds", [
    (P(["name"], [["LeBron James"]]), [["player_name"]], True),                       # the player, no context
    (P(["n", "pick"], [["LeBron James", 1]]), [["player_name"]], True),               # extra columns allowed
    (P(["first", "last"], [["LeBron", "James"]]), [["player_name"]], True),          # a name given apart
    (P(["name"], [["Carmelo Anthony"]]), [["player_name"]], False),                  # another player
    (P(["name"], [["LeBron James"], ["Darko Milicic"]]), [["player_name"]], False),  # more rows than asked
    (P(["name"], [["LeBron James"]]), None, False),                                  # None: every gold column
    (P(["a", "b", "c"], [["Cavaliers", "LeBron James", "Cleveland"]]), None, True),  # every column, any order
])
def test_an_answer_holds_what_was_asked(pred, asked, holds):
    from duckask.utils.sql.compare import answer_holds

    assert answer_holds(pred, GOLD_TEAM, asked) is holds


def test_a_first_and_last_name_may_be_answered_joined_row_for_row():
    from duckask.utils.sql.compare import answer_holds

    gold = P(["first_name", "last_name", "games"], [["Scott", "Foster", 80], ["Tony", "Brothers", 78]])
    asked = [["first_name", "last_name"]]
    assert answer_holds(P(["referee"], [["Tony Brothers"], ["Scott Foster"]]), gold, asked)
    assert answer_holds(P(["f", "l"], [["Scott", "Foster"], ["Tony", "Brothers"]]), gold, asked)
    assert not answer_holds(P(["referee"], [["Scott Foster"], ["Tony Foster"]]), gold, asked)
    # in order when the gold's ORDER BY makes it matter
    assert answer_holds(P(["r"], [["Scott Foster"], ["Tony Brothers"]]), gold, asked, order_matters=True)
    assert not answer_holds(P(["r"], [["Tony Brothers"], ["Scott Foster"]]), gold, asked, order_matters=True)


def test_values_pair_up_by_row_not_column_by_column():
    from duckask.utils.sql.compare import answer_holds

    gold = P(["team", "wins"], [["Bulls", 72], ["Jazz", 64]])
    assert answer_holds(P(["t", "w"], [["Jazz", 64], ["Bulls", 72]]), gold, [["team"], ["wins"]])
    assert not answer_holds(P(["t", "w"], [["Jazz", 72], ["Bulls", 64]]), gold, [["team"], ["wins"]])


@pytest.mark.parametrize("value, error", [
    ("all", None), ([["first_name", "last_name"], "games"], None), ("a; b", None),
    ([], "answer_columns must be"), ([3], "answer_columns must be"), ({"a": 1}, "answer_columns must be"),
])
def test_a_question_files_answer_columns_are_read_or_refused_saying_why(value, error):
    from duckask.utils.eval.questions import _answer_columns

    if error:
        with pytest.raises(ValueError, match=error):
            _answer_columns(value, "row 3")
    else:
        got = _answer_columns(value, "row 3")
        assert got == "all" or all(isinstance(e, list) for e in got)


def test_every_annotated_set_names_gold_columns_that_exist():
    """Each annotated question file (bench/): every question says what it asks for, and a named column is one its
    gold SQL returns."""
    from pathlib import Path

    import sqlglot

    from duckask.utils.eval.questions import load_questions

    root = Path(__file__).resolve().parents[1] / "bench"
    for name in ("nba_questions", "nba_questions_heldout", "lahman_questions", "idioms_dev", "idioms_heldout",
                 "dialect_questions"):
        qs, _ = load_questions(root / f"{name}.yaml")
        for q in qs:
            assert q.answer_columns is not None, (name, q.id)
            if q.answer_columns != "all":
                names = sqlglot.parse_one(q.gold_sql, read="duckdb").named_selects
                assert all(c in names for e in q.answer_columns for c in e), (name, q.id)
