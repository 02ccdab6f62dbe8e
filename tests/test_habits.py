"""Other dialects' habits rewritten into DuckDB (``utils/sql/habits.py``): every case of
tests/fixtures/sql_rules/habits.sql gives exactly the expected query, the expected query runs in DuckDB, and
every rewrite gives the result the habit meant."""
from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from duckask.utils.sql.facts import SchemaFacts
from duckask.utils.sql.habits import RULES
from duckask.utils.sql.tidy import RULES as TIDY_RULES

FILE = Path(__file__).parent / "fixtures" / "sql_rules" / "habits.sql"
FACTS = SchemaFacts(columns={"t": {"s", "d", "ts", "te", "xs", "day"}})


def cases() -> list:
    lines = FILE.read_text().splitlines()
    return [pytest.param(lines[i + 1], lines[i + 2], "for the model to fix" not in line, id=line[3:].split(" | ")[0])
            for i, line in enumerate(lines) if line.startswith("-- habit-")]


@pytest.fixture(scope="module")
def con():
    c = duckdb.connect()
    c.execute("CREATE TABLE t (s VARCHAR, d DATE, ts TIMESTAMP, te TIMESTAMP, xs INTEGER[], day INTEGER)")
    c.execute("INSERT INTO t VALUES ('ann@mail.com', DATE '2024-01-05', TIMESTAMP '2024-01-05 10:00', "
              "TIMESTAMP '2024-01-05 12:45', [10, 20, 30], 3)")
    yield c
    c.close()


@pytest.mark.parametrize("written, expected, runs", cases())
def test_each_habit_case(con, written, expected, runs):
    out = written
    for rule in RULES:
        out = rule(out, FACTS)
    assert out == expected
    if runs:
        con.execute(expected).fetchall()      # the rewrite runs in DuckDB
    else:
        with pytest.raises(duckdb.Error):     # left alone: DuckDB's error goes on to the repairs and the model
            con.execute(expected)


def test_the_habits_run_first_in_tidy():
    assert TIDY_RULES[:len(RULES)] == RULES


@pytest.mark.parametrize("written, value", [
    ("SELECT TIMESTAMPDIFF(MINUTE, ts, te) FROM t", 165),
    ("SELECT DATEDIFF(d, DATE '2024-01-01') FROM t", 4),
    ("SELECT xs[0] FROM t", 10),
    ("SELECT SUBSTRING_INDEX(s, '@', -1) FROM t", "mail.com"),
    ("SELECT CHARINDEX('@', s) FROM t", 4),
])
def test_a_rewrite_gives_what_the_habit_meant(con, written, value):
    out = written
    for rule in RULES:
        out = rule(out, FACTS)
    assert con.execute(out).fetchone()[0] == value
