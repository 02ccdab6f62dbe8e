"""What test_graph.py and test_graph_selection.py share: the question set, the scripted models, the fixtures."""
from __future__ import annotations

import builtins
import sys

import pytest

from duckask.utils.api import Result, ask
from duckask.utils.llm import ScriptedLLM

LAKERS_Q = "What are the points of Lakers players?"
LAKERS_SQL = ("SELECT p.name, p.points FROM players p JOIN teams t ON p.team_id = t.id "
              "WHERE t.name = 'Lakers' ORDER BY p.points DESC")
LAKERS_ROWS = [["LeBron James", 30], ["Anthony Davis", 25], ["Austin Reaves", 15]]
# Same shape, but a team the data does not hold (nothing near it either, so literal_not_a_value stays silent): 0 rows.
EMPTY_SQL = LAKERS_SQL.replace("'Lakers'", "'Knicks'")
ALL_POINTS_SQL = "SELECT name, points FROM players ORDER BY points DESC"

HAPPY_PATH = [("ClarifyQuery", "clear"), ("CheckAnswerable", "answerable"), ("MatchTemplate", "none"),
              ("PlanQuery", "sql"), ("TableSelector", "default"), ("SchemaLookup", "default"),
              ("SQLGenerator", "default"), ("SQLExecutor", "success"),
              ("DataAnalyzer", "default"), ("ResponseGrader", "pass"), ("AssessConfidence", "default")]


ROUTED = [("IntentRouter", "data"), ("ResolveFollowUp", "default")]


def path(r: Result) -> list[tuple[str, str]]:
    """The node path after the routing every data question starts with (IntentRouter, then
    ResolveFollowUp; their own paths are tested in test_conversation.py)."""
    p = [(t["node"], t["action"]) for t in r.trace]
    assert p[:2] == ROUTED, p[:2]
    return p[2:]


def rows(r: Result) -> list[list]:
    return r.df.values.tolist()


def user_prompt(llm: ScriptedLLM, node: str, i: int) -> str:
    """The user message of the i-th call (0-based) made by ``node``."""
    calls = [c for c in llm.calls if c["node"] == node]
    return calls[i]["messages"][-1]["content"]


@pytest.fixture
def run(small_db, isolated_env):
    """ask() on the small DB with the cache isolated; options go through load_settings."""
    def _run(question: str, llm: ScriptedLLM, **options) -> Result:
        # Resampling after a failed first query is off unless a test asks for it, so that each test
        # drives one path; the resample tests are at the end. Likewise the answer is the template and
        # the router decides by rules alone unless a test asks (their tests: test_conversation.py).
        return ask(question, db=str(small_db), llm=llm,
                   **{"resample_drafts": 0, "analyzer": "rules", "router": "rules", **options})
    return _run


@pytest.fixture
def no_stdin(monkeypatch):
    """Fail the test if anything tries to read from the terminal."""
    def boom(*a, **k):
        raise AssertionError("the flow read from stdin")

    class NoStdin:
        read = readline = readlines = boom

        def isatty(self):
            return False

    monkeypatch.setattr(builtins, "input", boom)
    monkeypatch.setattr(sys, "stdin", NoStdin())
