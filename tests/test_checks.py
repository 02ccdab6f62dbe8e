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
    fired = next((c.__name__ for c in checks.CHECKS if c(case["question"], case["sql"], df, checks.Facts(NAMES))), None)
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


ANSWER_CASES = yaml.safe_load((Path(__file__).parent / "fixtures" / "answer_checks.yaml").read_text())


@pytest.mark.parametrize("case", ANSWER_CASES, ids=[f"{c['check']}-{c['question'][:40]}" for c in ANSWER_CASES])
def test_each_answer_check_case(case):
    """The answer checks (utils/sql/answer_checks.py): the named check fires first of them, or none does."""
    from duckask.utils.sql.answer_checks import ANSWER_CHECKS

    df = pd.DataFrame(case["rows"], columns=case["columns"])
    facts = checks.Facts(set(), case.get("given", ""))
    fired = next((c.__name__ for c in ANSWER_CHECKS if c(case["question"], case["sql"], df, facts)), None)
    assert fired == case["check"]
    name, critique = checks.failed_check(case["question"], df, case["sql"], given=case.get("given", ""))
    if case["check"]:       # the grader's list fails it (an earlier shape rule may be the one that says why)
        assert name is not None and len(critique.split()) > 8
    else:
        assert name is None, critique


def test_the_checks_page_names_every_check():
    page = (Path(__file__).resolve().parents[1] / "docs" / "checks.md").read_text()
    missing = [c.__name__ for c in checks.CHECKS if f"`{c.__name__}`" not in page]
    assert not missing, f"docs/checks.md does not describe {missing}"
