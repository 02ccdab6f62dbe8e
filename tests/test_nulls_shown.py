"""NULL is shown as NULL, never NaN, on every surface (issue 36): text, rich, HTML, JSON, the SQL runner's table
and email; a missing number, text, date and double alike."""
from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from duckask.utils.api import ask, present
from duckask.utils.llm.scripted import ScriptedLLM

SQL = ("SELECT 'x' AS t, NULL::VARCHAR AS a, NULL::INT AS b, NULL::DOUBLE AS d, NULL::DATE AS day "
       "UNION ALL SELECT 'y', 'z', 2, 1.5, DATE '2024-01-02' ORDER BY t")


@pytest.fixture
def result(small_db, isolated_env):
    return ask(sql=SQL, db=str(small_db), llm=ScriptedLLM({}))


def test_text_rich_and_html_show_null(result):
    shown = present.text(result)
    assert "NaN" not in shown and "NaT" not in shown and "None" not in shown and shown.count("NULL") >= 4
    console = Console(file=io.StringIO(), width=200)
    for line in present.rich_lines(result):
        console.print(line)
    rich = console.file.getvalue()
    assert "NaN" not in rich and "NaT" not in rich and rich.count("NULL") >= 4
    page = present.html(result)
    assert "NaN" not in page and "NaT" not in page and page.count("<td>NULL</td>") >= 4


def test_json_holds_null(result):
    rows = json.loads(json.dumps(present.as_json(result)))["rows"]
    assert rows[0][1:] == [None, None, None, None] and rows[1][1] == "z"


def test_the_email_body_shows_null(result):
    from duckask.utils.delivery.mail import build_message

    msg = build_message(to=["ann@example.com"], sender="duckask@example.com", subject="s", question="q",
                        answer="a", sql=SQL, df=result.df)
    body = msg.get_body(("plain",)).get_content()
    assert "NaN" not in body and "NULL" in body
