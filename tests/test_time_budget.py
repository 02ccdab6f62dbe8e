"""The time budget per question (issue 33): past ``time_budget_s`` no retry, resample or second path starts;
the best answer so far is given with its confidence, or the report says what was tried and why it stopped."""
from __future__ import annotations

from conftest import demo_db

from duckask.utils.api import ask
from duckask.utils.llm import ScriptedLLM

OPTS = {"router": "rules", "analyzer": "rules", "clarify": "off"}
NOTHING = "SELECT name FROM teams WHERE city = 'Atlantis'"   # runs, finds nothing: the rules object
RIGHT = "SELECT name FROM teams WHERE city = 'Boston'"


def test_past_the_budget_an_error_is_reported_without_another_draft(small_db, isolated_env):
    llm = ScriptedLLM({"SQLGenerator": ["SELECT FROM WHERE", RIGHT]})
    r = ask("Which team plays in Boston?", db=str(small_db), llm=llm, time_budget_s=1e-6, **OPTS)
    assert r.status == "error" and llm.count("SQLGenerator") == 1
    assert r.budget_stop["node"] == "ErrorFixer" and "resample or retry" in r.budget_stop["instead_of"]
    assert "Stopped at the time budget after" in r.answer and "time_budget_s" in r.answer
    assert r.confidence["level"] == "low"


def test_past_the_budget_the_answer_so_far_stands_with_the_objection(small_db, isolated_env):
    llm = ScriptedLLM({"SQLGenerator": [NOTHING, RIGHT]})
    r = ask("Which team plays in Boston?", db=str(small_db), llm=llm, time_budget_s=1e-6, **OPTS)
    assert llm.count("SQLGenerator") == 1 and r.grade_status == "fail"
    assert r.budget_stop["node"] == "ResponseGrader" and "time budget ran out" in r.warning
    assert r.confidence["level"] != "high"


def test_within_the_budget_the_same_question_tries_again(small_db, isolated_env):
    llm = ScriptedLLM({"SQLGenerator": [NOTHING, RIGHT]})
    r = ask("Which team plays in Boston?", db=str(small_db), llm=llm, time_budget_s=600, **OPTS)
    assert r.ok and r.df["name"].tolist() == ["Celtics"] and llm.count("SQLGenerator") > 1
    assert r.budget_stop is None
    r0 = ask("Which team plays in Boston?", db=str(small_db), llm=ScriptedLLM({"SQLGenerator": [NOTHING, RIGHT]}),
             time_budget_s=0, **OPTS)
    assert r0.ok and r0.budget_stop is None          # 0: no budget


def test_the_budget_is_a_checked_setting(isolated_env):
    import pytest

    from duckask.utils.config import SettingError, load_settings

    assert load_settings(None).time_budget_s == 180
    with pytest.raises(SettingError, match="time_budget_s"):
        load_settings(None, time_budget_s=-1)


def test_past_the_budget_a_plan_that_found_nothing_takes_no_second_path(isolated_env):
    llm = ScriptedLLM({"PlanQuery": ["home_runs]\ngroup_by: [team_name]\nwhere: [full_name = Nobody At All, "
                                     "year = 2019]"],
                       "SQLGenerator": [AssertionError("no SQL path past the budget")]})
    r = ask("How many home runs did Nobody At All hit for each team in 2019?", demo_db(), llm=llm, analyzer="rules",
            time_budget_s=1e-6)
    assert r.status == "error" and r.budget_stop["node"] == "SQLExecutor"
    assert "found nothing" in r.answer and not [c for c in llm.calls if c["node"] == "SQLGenerator"]
