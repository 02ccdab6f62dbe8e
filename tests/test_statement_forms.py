"""DuckDB's own statement forms as answers (issue 31): SUMMARIZE, DESCRIBE, FROM-first, USING SAMPLE and PIVOT
are one read-only statement each (tier T0, through the safe executor), a PIVOT that lists no values gets them
(``utils/sql/pivot.py``), and the graph answers with them: the table and the sentence handle their results."""
from __future__ import annotations

import pytest

from duckask.utils.api import ask
from duckask.utils.db.database import open_database
from duckask.utils.llm import ScriptedLLM
from duckask.utils.sql.pivot import run_pivot, split_pivot, values_pivot
from duckask.utils.writes.tiers import classify

FORMS = [
    ("SUMMARIZE players", 4),                         # one row per column of players
    ("SUMMARIZE SELECT points FROM players", 1),
    ("DESCRIBE players", 4),
    ("FROM teams SELECT name, city", 3),
    ("FROM teams", 3),
    ("SELECT * FROM players USING SAMPLE 2 ROWS", 2),
    ("SELECT * EXCLUDE (team_id) FROM players", 6),
    ("SELECT max(COLUMNS('^(id|points)$')) FROM players", 1),
    ("PIVOT players ON team_id IN (1, 2, 3) USING sum(points)", 6),     # grouped by the other columns
    ("PIVOT (SELECT team_id, points FROM players) ON team_id IN (1, 2, 3) USING sum(points)", 1),
]


@pytest.mark.parametrize("sql, rows", FORMS, ids=[f[0][:40] for f in FORMS])
def test_each_form_is_a_read_that_runs(small_db, isolated_env, sql, rows):
    assert classify(sql).tier == 0
    out = open_database(small_db).run(sql)
    assert out.ok, out.error
    assert len(out.df) == rows


def test_a_pivot_without_its_values_is_refused_alone_and_runs_with_them_listed(small_db, isolated_env):
    db = open_database(small_db)
    sql = "PIVOT players ON team_id USING sum(points)"
    assert classify(sql).tier == 3 and "MULTI" in (db.run(sql).error or "")
    assert split_pivot(sql) == ("players", "team_id", "USING sum(points)")
    assert values_pivot(sql, db.run) == "PIVOT players ON team_id IN (1, 2, 3) USING sum(points)"
    out = run_pivot(db.run, sql)
    assert out.ok and out.sql.startswith("PIVOT players ON team_id IN (1, 2, 3)") and len(out.df) == 6


@pytest.mark.parametrize("sql", [
    "PIVOT players ON team_id IN (1, 2) USING sum(points)",     # already listed
    "PIVOT players ON team_id, name USING sum(points)",         # several columns: left to DuckDB's error
    "SELECT 'PIVOT t ON x USING sum(y)'",                       # not a PIVOT
])
def test_values_are_listed_only_for_a_pivot_that_lacks_them(sql):
    assert split_pivot(sql) is None


@pytest.mark.parametrize("sql, words", [
    ("SUMMARIZE players", ["column_name", "min", "max"]),
    ("DESCRIBE teams", ["column_name", "column_type"]),
    ("PIVOT players ON team_id USING sum(points)", ["1", "2", "3"]),
])
def test_the_graph_answers_with_each_form(small_db, isolated_env, sql, words):
    llm = ScriptedLLM({"SQLGenerator": [sql]})
    r = ask("Show me an overview of the players", db=str(small_db), llm=llm, router="rules", analyzer="rules",
            clarify="off", grader="rules")
    assert r.ok, r.answer
    assert all(w in [str(c) for c in r.df.columns] for w in words)
    assert r.answer and "Traceback" not in r.answer
    if sql.startswith("PIVOT"):
        assert "IN (1, 2, 3)" in r.sql
