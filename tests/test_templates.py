"""Templates from kept pairs (issue 45, ``utils/knowledge/templates.py``): the fixture's pairs and questions, each
with the SQL the template gives or none (a near-miss goes the normal way)."""
from __future__ import annotations

from pathlib import Path

import pytest
import sqlglot
import yaml

from duckask.utils.knowledge.examples import Example
from duckask.utils.knowledge.templates import match

FIXTURE = yaml.safe_load((Path(__file__).parent / "fixtures" / "templates.yaml").read_text())


class FixtureIndex:
    """The fixture's tables as a value index (``columns`` and ``values``, as ``ValueIndex`` answers them)."""

    def __init__(self, tables: dict):
        self.tables = {t.lower(): {c.lower(): v for c, v in cols.items()} for t, cols in tables.items()}

    def columns(self, table: str) -> set[str]:
        return set(self.tables.get(table.lower(), {}))

    def values(self, table: str, column: str):
        return self.tables.get(table.lower(), {}).get(column.lower())


def _same(a: str, b: str) -> bool:
    return sqlglot.parse_one(a, read="duckdb").sql("duckdb") == sqlglot.parse_one(b, read="duckdb").sql("duckdb")


@pytest.mark.parametrize("case", FIXTURE["cases"], ids=[f"{c['pair']}: {c['question']}" for c in FIXTURE["cases"]])
def test_a_kept_pair_answers_its_question_with_other_literals_and_nothing_else(case):
    pair = FIXTURE["pairs"][case["pair"]]
    got = match(case["question"], Example(pair["question"], pair["sql"], id=case["pair"]),
                FixtureIndex(FIXTURE["tables"]))
    if case["sql"] is None:
        assert got is None, got
        return
    assert got is not None and _same(got.sql, case["sql"]), got
    assert got.example_id == case["pair"] and got.exact == (case["question"].lower().strip("?") ==
                                                            pair["question"].lower().strip("?"))


def test_without_a_value_index_only_numbers_are_put_in():
    pair = FIXTURE["pairs"]["yankees"]
    ex = Example(pair["question"], pair["sql"], id="y")
    assert match("What was the New York Yankees' total payroll in 2016?", ex, None).slots == [("2015", "2016")]
    assert match("What was the Boston Red Sox' total payroll in 2015?", ex, None) is None
