"""One presentation of a Result (``utils/api/present.py``), one settings check (``utils/config.py``), one exit-code
map: the same Result shows the same facts through every surface; a bad option is a clear error everywhere."""
from __future__ import annotations

import html
import io
import json
import re

import pytest

import duckask
from duckask.utils.api import present
from duckask.utils.config import SettingError, check_setting, load_settings, with_options
from duckask.utils.llm import ScriptedLLM

SQL = ("SELECT p.name, p.points FROM players p JOIN teams t ON p.team_id = t.id "
       "WHERE t.name = 'Lakers' ORDER BY p.points DESC")
ROWS = [["LeBron James", 30], ["Anthony Davis", 25], ["Austin Reaves", 15]]


@pytest.fixture
def result(small_db, settings):
    llm = ScriptedLLM({"SQLGenerator": [SQL]})
    return duckask.ask("What are the points of Lakers players?", db=str(small_db), llm=llm, settings=settings,
                       analyzer="rules", grader="rules")


def _rich(r) -> str:
    from rich.console import Console

    buf = io.StringIO()
    console = Console(file=buf, width=200, color_system=None, highlight=False)
    for part in present.rich_lines(r, 20):
        console.print(part)
    return buf.getvalue()


def _squash(s: str) -> str:
    """Text without tags, entities or line breaks."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", s)).split())


def test_the_same_result_shows_the_same_facts_on_every_surface(result):
    r = result
    assert r.ok and r.df.values.tolist() == ROWS
    data = present.as_json(r, 20)
    agent = present.for_agent(r, 20)
    shown = {"text": present.text(r, 20), "repr": repr(r), "rich": _rich(r), "html": present.html(r),
             "json": json.dumps(data), "agent": json.dumps(agent)}
    for surface, out in shown.items():
        assert r.answer.split(":")[0] in out, surface                    # the answer sentence
        assert "LeBron James" in out and "Austin Reaves" in out, surface  # every row
        flat = _squash(out)
        assert "Lakers" in flat, surface                                  # the SQL's filter
    for surface in ("text", "repr", "rich", "html"):
        assert r.derivation in _squash(shown[surface]), surface
    for surface, out in shown.items():                                    # the confidence and its first reason
        assert r.confidence["level"] in out and r.confidence["reasons"][0] in out, surface
    # JSON and the agent's reply carry the same values (the agent gets a subset of the keys).
    assert data["rows"] == agent["rows"] == ROWS and data["sql"] == agent["sql"] == SQL
    assert {k: data[k] for k in agent if k in data} == agent
    assert data == r.to_dict(20)


def test_rows_become_json_in_one_place():
    import datetime

    import pandas as pd

    df = pd.DataFrame({"d": [datetime.date(2024, 1, 2)], "x": [1.5], "n": [None]})
    assert present.rows_json(df) == [["2024-01-02T00:00:00.000", 1.5, None]]
    assert present.rows_json(None) == [] and present.rows_json(pd.concat([df] * 5), 2) == present.rows_json(df) * 2


@pytest.mark.parametrize("status, detail, code", [
    ("answered", None, 0), ("declined", None, 0), ("written", None, 0), ("rejected", None, 0),
    ("rejected", "no approval: stdin is not a terminal, and a write needs a typed yes", 3),
    ("needs_clarification", None, 3), ("pending", None, 3),
    ("blocked", None, 1), ("rolled_back", None, 1), ("error", None, 1), ("something new", None, 1),
])
def test_one_map_from_status_to_exit_code(status, detail, code):
    assert present.exit_code(status, detail) == code


def test_the_exit_code_table_follows_the_map():
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text()
    table = page.split("## Exit codes", 1)[1].split("\n#", 1)[0]
    for status, code in present.EXIT_CODES.items():
        rows = [line for line in table.splitlines() if f"`{status}`" in line]
        assert rows and any(row.strip("| ").startswith(str(code)) for row in rows), (status, code, rows)


# --------------------------------------------------------------------------- one check of settings
@pytest.mark.parametrize("name, value, expected", [
    ("resample_drafts", "3", 3), ("resample_drafts", 0, 0), ("row_cap", "1000", 1000), ("timeout_s", "2.5", 2.5),
    ("allow_writes", "yes", True), ("allow_writes", False, False), ("grader", "llm", "llm"),
    ("table_sure_band", 0, 0.0), ("n_threads", None, None),
])
def test_good_values_are_taken(name, value, expected):
    assert check_setting(name, value) == expected


@pytest.mark.parametrize("name, value, says", [
    ("resample_drafts", "lots", "resample_drafts takes a whole number from 0 to 8, not 'lots'"),
    ("resample_drafts", 10000, "from 0 to 8"),
    ("resample_drafts", True, "a whole number"),
    ("resample_drafts", 2.5, "a whole number"),
    ("max_fix_retries", -1, "from 0 to 5"),
    ("row_cap", 0, "from 1 to 1000000"),
    ("timeout_s", "forever", "a number from 0.01 to 3600"),
    ("grader", "maybe", "grader takes one of auto, rules, llm, off"),
    ("allow_writes", "perhaps", "true or false"),
    ("model", 42, "text"),
    ("no_such_setting", 1, "unknown setting"),
])
def test_bad_values_say_what_the_setting_takes(name, value, says):
    with pytest.raises(SettingError, match=re.escape(says)):
        check_setting(name, value)


def test_every_route_in_uses_the_same_check(settings, monkeypatch, tmp_path, small_db):
    with pytest.raises(SettingError, match="resample_drafts"):
        with_options(settings, resample_drafts="lots")
    with pytest.raises(SettingError, match="resample_drafts"):
        load_settings(resample_drafts=10000)
    monkeypatch.setenv("DUCKASK_THREADS", "many")
    with pytest.raises(SettingError, match="n_threads takes a whole number from 1 to 256, not 'many'"):
        load_settings()
    monkeypatch.delenv("DUCKASK_THREADS")
    cfg = tmp_path / "c.yaml"
    cfg.write_text("max_grader_rounds: 99\n")
    with pytest.raises(SettingError, match="max_grader_rounds"):
        load_settings(str(cfg))
    # ask(settings=..., **options) and Conversation(**options) were not checked before
    with pytest.raises(SettingError, match="resample_drafts"):
        duckask.ask("q", db=str(small_db), llm=ScriptedLLM({}), settings=settings, resample_drafts="lots")
    with pytest.raises(SettingError, match="max_fix_retries"):
        duckask.Conversation(str(small_db), llm=ScriptedLLM({}), settings=settings, max_fix_retries=1000)
