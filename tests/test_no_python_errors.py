"""No question ends in a Python error (issue 63, item 6): odd result types through every check and both analyzers,
odd questions through the whole graph, and a node that raises: each ends in an answer or a typed "could not answer",
with the turn's query and attempts kept."""
from __future__ import annotations

import random

import pytest
from conftest import ask_with_drafts

from duckask.utils.api import ask
from duckask.utils.llm import ScriptedLLM

# Every kind of value DuckDB hands back that is not a plain scalar, or is an edge of one.
ODD_RESULTS = [
    "SELECT [4, 5, 6] AS l", "SELECT [[1, 2], [3]] AS l", "SELECT [NULL, 1] AS l", "SELECT [] AS l",
    "SELECT list_value(1, 2) AS x, 3 AS y", "SELECT [1, 2]::INTEGER[2] AS a", "SELECT {'a': 1, 'b': [1, 2]} AS s",
    "SELECT {'a': NULL} AS s", "SELECT MAP {'k': 1} AS m", "SELECT union_value(k := 1) AS u", "SELECT NULL AS n",
    "SELECT 'nan'::DOUBLE AS x", "SELECT 'inf'::DOUBLE AS x", "SELECT INTERVAL 3 DAY AS i",
    "SELECT 170141183460469231731687303715884105727::HUGEINT AS h", "SELECT gen_random_uuid() AS u",
    "SELECT '\\x00'::BLOB AS b", "SELECT BIT '101' AS b", "SELECT TIMESTAMPTZ '2020-01-01 00:00:00+00' AS t",
    "SELECT TIME '10:00' AS t", "SELECT 1.5::DECIMAL(38, 10) AS d", "SELECT 'infinity'::DATE AS d",
    "SELECT range(3) AS r, [{'x': [1]}] AS deep", "SELECT name, [points, points] AS both FROM players",
    "SELECT team_id, list(name) AS names FROM players GROUP BY team_id",
]


@pytest.mark.parametrize("sql", ODD_RESULTS)
@pytest.mark.parametrize("analyzer", ["rules", "llm"])
def test_an_odd_result_type_is_answered_not_raised(small_db, sql, analyzer):
    """The list-literal crash ("make a list holding 4, 5 and 6": the truth value of an array) and its kin."""
    llm = ScriptedLLM({"SQLGenerator": [sql], "DataAnalyzer": ["Here it is: [4, 5, 6]."], "ResponseGrader": ["PASS"]})
    r = ask("make a list holding 4, 5 and 6", db=str(small_db), llm=llm, clarify="off", router="rules",
            analyzer=analyzer, grader="llm")
    assert r.status == "answered", (r.status, r.answer)
    assert r.sql and r.df is not None and len(r.df) >= 1
    r.to_dict(), repr(r), r._repr_html_()        # every way a surface shows it


def _odd_questions(n: int, seed: int = 63) -> list[str]:
    """``n`` questions no one would type, from a fixed seed: control characters, scripts, quotes, SQL, numbers."""
    pieces = ["how many", "players", "SELECT * FROM", "'; DROP TABLE teams; --", "\u202e", "\x00", "\t", "🦆",
              "الفرق", "队伍", "Ω≈ç√", "\\", '"', "%", "_", "{{x}}", "${HOME}", "1e309", "-0", "NaN", "NULL",
              "list [1,2,3]", "struct {'a': 1}", "\u200b", "ü" * 40, "?" * 5]
    rng = random.Random(seed)
    return [" ".join(rng.choice(pieces) for _ in range(rng.randint(1, 6))) for _ in range(n)]


@pytest.mark.parametrize("question", _odd_questions(24))
def test_an_odd_question_is_answered_or_refused_in_words(small_db, question):
    r, _ = ask_with_drafts(small_db, question, ["SELECT count(*) AS n FROM players"])
    assert r.status in {"answered", "unsure", "error", "needs_clarification", "unanswerable"}, r.status
    assert r.answer and "Traceback" not in r.answer
    r.to_dict(), repr(r)


@pytest.mark.parametrize("node", ["DataAnalyzer", "ResponseGrader", "SQLGenerator"])
def test_a_node_that_raises_ends_in_a_typed_could_not_answer_and_loses_nothing(small_db, node, monkeypatch):
    """Whatever raises inside the graph (a bug, an odd value no check foresaw) is the turn's answer: "could not
    answer: ... (TheError)", status ``error``, and the query and attempts made so far are still on the Result."""
    from duckask import nodes

    cls = getattr(nodes, node)

    def broken(self, shared):
        raise ArithmeticError("a value no check foresaw")

    monkeypatch.setattr(cls, "prep", broken)
    r, _ = ask_with_drafts(small_db, "how many players are there?", ["SELECT count(*) AS n FROM players"])
    assert r.status == "error"
    assert r.answer == "could not answer: a value no check foresaw (ArithmeticError)"
    if node != "SQLGenerator":       # it ran before the node that raised: the query and its attempt are kept
        assert r.sql == "SELECT count(*) AS n FROM players" and r.attempts
    r.to_dict(), repr(r)


def test_what_a_surface_must_report_is_passed_on_not_answered(small_db, monkeypatch):
    """The records a turn must keep out of reach (the audit log, the shared state, the kept pairs' store) are not a
    "could not answer": they go on to the surface, which says so (the server: 503)."""
    from duckask import nodes
    from duckask.utils.writes.audit import AuditError

    def down(self, shared):
        raise AuditError("the audit log is out of reach")

    monkeypatch.setattr(nodes.DataAnalyzer, "prep", down)
    with pytest.raises(AuditError):
        ask_with_drafts(small_db, "how many players are there?", ["SELECT count(*) AS n FROM players"])
