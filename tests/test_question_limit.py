"""One question-size limit on every surface (issue 30, finding 10): ``config.MAX_QUESTION``, checked where every
turn starts (``api.new_shared``). An over-long question is refused with both numbers before any LLM call, on
the Python API, ``duckask ask``, ``duckask chat``, the MCP ``ask`` and ``propose_write`` tools and the HTTP
server; the user's own SQL is not a question and has no such limit."""
from __future__ import annotations

import asyncio
import io
import json

import pytest
from conftest import PLAYERS

import duckask.utils.api as api
from duckask.utils.api import QuestionTooLong, new_shared
from duckask.utils.app.cli import EXIT_USAGE, main
from duckask.utils.config import MAX_QUESTION
from duckask.utils.llm import ScriptedLLM

LONG = "How many players scored more than " + "9" * MAX_QUESTION + " points?"
REFUSAL = f"the question is {len(LONG)} characters; the limit is {MAX_QUESTION}"
COUNT_SQL = "SELECT count(*) AS n FROM players"


@pytest.fixture
def llm(monkeypatch, isolated_env) -> ScriptedLLM:
    """The backend every surface gets: a ScriptedLLM that answers one short question (its calls are counted)."""
    scripted = ScriptedLLM({"SQLGenerator": [COUNT_SQL] * 4, "DataAnalyzer": ["There are 6 players."] * 4})
    monkeypatch.setattr(api, "get_llm", lambda settings=None: scripted)
    return scripted


def test_the_limit_is_the_one_constant_and_counts_characters():
    from duckask.utils.app import server_actions, server_routes

    assert MAX_QUESTION == 2000 and server_routes.MAX_QUESTION is MAX_QUESTION
    assert server_actions.MAX_QUESTION is MAX_QUESTION
    assert new_shared("x" * MAX_QUESTION)["question"] == "x" * MAX_QUESTION        # at the limit: taken
    with pytest.raises(QuestionTooLong, match=f"the question is {MAX_QUESTION + 1} characters; the limit is 2000"):
        new_shared("é" * (MAX_QUESTION + 1))
    assert new_shared(LONG, sql=LONG)["given_sql"] == LONG      # the user's own SQL is not a question


def test_the_python_api_refuses_before_any_llm_call(small_db, llm):
    with pytest.raises(QuestionTooLong, match=REFUSAL):
        api.ask(LONG, db=str(small_db), llm=llm)
    assert llm.calls == []


def test_cli_ask_is_a_usage_error_with_no_llm_call(small_db, llm, capsys, monkeypatch):
    assert main(["ask", LONG, "--db", str(small_db)]) == EXIT_USAGE
    assert REFUSAL in capsys.readouterr().err
    monkeypatch.setattr("sys.stdin", io.StringIO(LONG + "\n"))               # on stdin: the same
    assert main(["ask", "--db", str(small_db), "--json"]) == EXIT_USAGE
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "error" and REFUSAL in out["answer"]
    assert llm.calls == []


def test_chat_refuses_the_turn_and_goes_on(small_db, llm, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{LONG}\nHow many players are there?\n"))
    main(["chat", "--db", str(small_db), "--json", "--router", "rules", "--resample-drafts", "0"])
    out, err = capsys.readouterr()
    refused, answered = (json.loads(line) for line in out.splitlines())
    assert refused["status"] == "error" and REFUSAL in refused["answer"] and REFUSAL in err
    assert answered["status"] == "answered" and answered["rows"] == [[len(PLAYERS)]]
    assert all(LONG not in json.dumps(c["messages"]) for c in llm.calls)      # only the second turn reached it


def test_mcp_tools_refuse_with_a_tool_error_and_no_llm_call(small_db, isolated_env):
    pytest.importorskip("mcp", reason="the server extra is not installed (pip install 'duckask[server]')")
    from mcp.server.mcpserver.exceptions import ToolError

    from duckask.utils.app.mcp_server import build_server

    scripted = ScriptedLLM({})
    server = build_server(str(small_db), llm=scripted)
    for tool, arguments in (("ask", {"question": LONG}), ("propose_write", {"change": "delete " + LONG})):
        with pytest.raises(ToolError, match="characters; the limit is 2000"):
            asyncio.run(server.call_tool(tool, arguments))
    assert scripted.calls == []


def test_the_http_server_refuses_with_the_same_limit(small_db, isolated_env):
    pytest.importorskip("fastapi", reason="the server extra is not installed (pip install 'duckask[server]')")
    import httpx
    import live_server

    from duckask.utils.app.server import create_app

    scripted = ScriptedLLM({})
    url, server = live_server.start(create_app(str(small_db), llm=scripted))
    try:
        for route in ("/api/ask", "/api/ask/stream"):
            r = httpx.post(url + route, json={"question": LONG}, timeout=30)
            assert r.status_code == 422 and f"{len(LONG)} characters; the limit is {MAX_QUESTION}" in r.json()["error"]
    finally:
        server.should_exit = True
    assert scripted.calls == []
