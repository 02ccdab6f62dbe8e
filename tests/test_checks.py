"""ResponseGrader's rules (``utils/sql/checks.py``): each fixture case of tests/fixtures/grain_checks.yaml gets
exactly the check it names (or passes), and the grader sends a grain mistake back with its reason."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from duckask.utils.schema.terms import split_ident
from duckask.utils.sql import checks

CASES = yaml.safe_load((Path(__file__).parent / "fixtures" / "grain_checks.yaml").read_text())
NAMES = {w for n in ["zone", "fare", "trip", "order", "total", "avg_points", "customer", "city"]
         for w in split_ident(n)}


@pytest.mark.parametrize("case", CASES, ids=[f"{c['check']}-{c['question'][:40]}" for c in CASES])
def test_each_case_gets_the_check_it_names(case):
    df = pd.DataFrame({"v": range(case["rows"])})
    fired = next((c.__name__ for c in checks.CHECKS if c(case["question"], case["sql"], df, NAMES)), None)
    assert fired == case["check"]


def test_every_check_says_what_it_catches():
    for check in checks.CHECKS:
        assert check.__doc__ and len(check.__doc__.split()) >= 8, check.__name__


def test_the_grader_sends_a_grain_mistake_back(small_db, isolated_env):
    from duckask.utils.app.api import ask
    from duckask.utils.llm import ScriptedLLM

    llm = ScriptedLLM({"SQLGenerator": ["SELECT avg(points) FROM players",
                                        "SELECT team_id, avg(points) FROM players GROUP BY team_id"]})
    r = ask("What is the average points for each team?", db=str(small_db), llm=llm, router="rules",
            analyzer="template", clarify="off")
    assert r.ok and len(r.df) == 3
    assert r.grades[0]["verdict"] == "fail" and "for each team" in r.grades[0]["critique"]
    second = llm.calls[1]["messages"][-1]["content"]
    assert "GROUP BY the team column" in second
