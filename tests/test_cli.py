"""The ``duckask`` command line, with a ScriptedLLM in place of the real model.

``duckask ask`` calls ``duckask.utils.api.ask``, which gets its backend from
``duckask.utils.api.get_llm``; the ``scripted`` fixture replaces that with a ScriptedLLM.
"""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import clean_env

import duckask.utils.api as api
from duckask.utils.app.cli import EXIT_CLARIFY, EXIT_FAIL, EXIT_OK, EXIT_USAGE, main
from duckask.utils.llm import ScriptedLLM

LAKERS_Q = "What are the points of Lakers players?"
LAKERS_SQL = ("SELECT p.name, p.points FROM players p JOIN teams t ON p.team_id = t.id "
              "WHERE t.name = 'Lakers' ORDER BY p.points DESC")
LAKERS_ROWS = [["LeBron James", 30], ["Anthony Davis", 25], ["Austin Reaves", 15]]
RESULT_KEYS = {"status", "answer", "sql", "columns", "rows", "tables", "trace"}
DUCKASK = Path(sys.executable).parent / "duckask"


@pytest.fixture
def scripted(monkeypatch, isolated_env):
    """Install a ScriptedLLM as the CLI's backend; returns a setter taking the script."""
    holder: dict[str, ScriptedLLM] = {}

    def install(script: dict) -> ScriptedLLM:
        holder["llm"] = ScriptedLLM(script)
        return holder["llm"]

    def fake_get_llm(settings=None):
        if "llm" not in holder:
            raise AssertionError("test did not script the LLM")
        return holder["llm"]

    monkeypatch.setattr(api, "get_llm", fake_get_llm)
    return install


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------- ask
SENTENCE = "LeBron James leads the Lakers with 30 points, ahead of Anthony Davis with 25."


def test_ask_json(scripted, small_db, capsys):
    llm = scripted({"SQLGenerator": [LAKERS_SQL], "DataAnalyzer": [SENTENCE]})
    code, out, _ = run_cli(capsys, "ask", LAKERS_Q, "--db", str(small_db), "--json")
    assert code == EXIT_OK == 0
    d = json.loads(out)
    assert RESULT_KEYS <= set(d)
    assert d["status"] == "answered"
    assert d["sql"] == LAKERS_SQL
    assert d["columns"] == ["name", "points"]
    assert d["rows"] == LAKERS_ROWS
    assert sorted(d["tables"]) == ["arenas", "players", "teams"]
    assert d["answer"] == SENTENCE and d["answer_check"] == {"by": "llm", "problems": []}
    assert d["intent"] == "data" and d["resolved_question"] == LAKERS_Q
    assert [t["node"] for t in d["trace"]][-2:] == ["ResponseGrader", "AssessConfidence"]
    assert d["confidence"]["level"] in ("high", "medium", "low") and d["confidence"]["reasons"]
    assert d["question"] == LAKERS_Q
    assert llm.count() == 2 and llm.count("DataAnalyzer") == 1   # the SQL, then the sentence
    assert len(out.strip().splitlines()) == 1          # exactly one JSON object


def test_ask_json_max_rows(scripted, small_db, capsys):
    scripted({"SQLGenerator": [LAKERS_SQL]})
    code, out, _ = run_cli(capsys, "ask", LAKERS_Q, "--db", str(small_db), "--json", "--max-rows", "1")
    d = json.loads(out)
    assert code == 0 and d["rows"] == LAKERS_ROWS[:1] and d["row_count"] == 3


def test_ask_text_output(scripted, small_db, capsys):
    scripted({"SQLGenerator": [LAKERS_SQL]})
    code, out, _ = run_cli(capsys, "ask", LAKERS_Q, "--db", str(small_db))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("3 rows: (LeBron James, 30)")
    assert "SQL:" in lines and LAKERS_SQL in lines
    assert any(line.split() == ["LeBron", "James", "30"] for line in lines)
    assert "ClarifyQuery" not in out                   # no trace unless asked


def test_ask_needs_clarification_exit_3(scripted, small_db, capsys):
    llm = scripted({"SQLGenerator": [LAKERS_SQL]})
    code, out, _ = run_cli(capsys, "ask", "show me the data", "--db", str(small_db), "--json")
    assert code == EXIT_CLARIFY == 3
    d = json.loads(out)
    assert RESULT_KEYS <= set(d)
    assert d["status"] == "needs_clarification"
    assert d["clarifying_question"] and d["answer"] == d["clarifying_question"]
    assert d["sql"] is None and d["rows"] == []
    assert llm.count() == 0


def test_ask_needs_clarification_text_mode_does_not_block(scripted, small_db, capsys):
    # Under pytest stdin is not a terminal, so the CLI must not prompt.
    scripted({})
    code, out, _ = run_cli(capsys, "ask", "show me the data", "--db", str(small_db))
    assert code == 3
    assert out.strip().endswith("?")


def test_ask_error_exit_1(scripted, small_db, capsys):
    llm = scripted({"SQLGenerator": ["SELECT name, salary FROM players"]})
    code, out, _ = run_cli(capsys, "ask", LAKERS_Q, "--db", str(small_db), "--json", "--max-fix-retries", "1",
                           "--resample-drafts", "2")
    assert code == EXIT_FAIL == 1
    d = json.loads(out)
    assert d["status"] == "error"
    # the first query, the 2 resampled drafts (the same query: one attempt), one retry with the error
    assert d["answer"].startswith("Could not answer: 3 queries tried.")
    assert d["rows"] == [] and d["columns"] == []
    assert llm.count("SQLGenerator") == 1 + 2 + 2      # the repeated retry is sampled once more


def test_ask_missing_database_exit_1(scripted, tmp_path, capsys):
    scripted({})
    code, out, err = run_cli(capsys, "ask", LAKERS_Q, "--db", str(tmp_path / "missing.duckdb"), "--json")
    assert code == 1
    d = json.loads(out)
    assert RESULT_KEYS <= set(d) and d["status"] == "error"
    assert "database not found" in d["answer"] and "database not found" in err


def test_ask_trace_prints_node_table(scripted, small_db, capsys):
    scripted({"SQLGenerator": ["SELECT name, pointz FROM players ORDER BY pointz DESC LIMIT 1"]})
    code, out, _ = run_cli(capsys, "ask", "Who scored the most points?", "--db", str(small_db), "--trace")
    assert code == 0
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["node", "action"])
    assert lines[header].split() == ["node", "action", "ms", "calls", "prompt", "compl", "try"]
    table = [line.split() for line in lines[header + 1:] if line.strip() and not line.startswith("total:")]
    assert [(row[0], row[1]) for row in table] == [
        ("IntentRouter", "data"), ("ResolveFollowUp", "default"), ("ClarifyQuery", "clear"),
        ("CheckAnswerable", "answerable"), ("MatchTemplate", "none"),
        ("PlanQuery", "sql"),
        ("TableSelector", "default"), ("SchemaLookup", "default"),
        ("SQLGenerator", "default"), ("SQLExecutor", "error"), ("ErrorFixer", "repaired"),
        ("SQLExecutor", "success"), ("DataAnalyzer", "default"), ("ResponseGrader", "pass"),
        ("AssessConfidence", "default")]
    # LLM calls (no DataAnalyzer reply is scripted: its call fails and the template answers)
    assert [row[3] for row in table] == ["0", "0", "0", "0", "0", "0", "0", "0", "1", "0", "0", "0", "0", "0", "0"]
    assert [row[-1] for row in table if row[0] == "SQLExecutor"] == ["1", "2"]            # attempt
    assert any(line.startswith("total:") and "1 LLM calls" in line for line in lines)


def test_ask_graph_options_reach_the_graph(scripted, small_db, capsys):
    llm = scripted({"SQLGenerator": [LAKERS_SQL], "ResponseGrader": ["verdict: pass"],
                    "ClarifyQuery": ["ambiguous: false"]})
    code, out, _ = run_cli(capsys, "ask", LAKERS_Q, "--db", str(small_db), "--json",
                           "--grader", "llm", "--clarify", "llm", "--row-cap", "1")
    d = json.loads(out)
    assert code == 0
    assert llm.count("ResponseGrader") == 1 and llm.count("ClarifyQuery") == 1
    assert d["rows"] == LAKERS_ROWS[:1] and d["truncated"] is True


def test_usage_errors_exit_2(capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))   # no question as an argument, none on stdin
    assert main(["ask"]) == EXIT_USAGE == 2
    assert "give a question" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["ask", "q", "--grader", "bogus"])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        main([])
    assert e.value.code == 2
    assert "usage: duckask" in capsys.readouterr().err


# --------------------------------------------------------------------------- schema
def test_schema_prints_create_table(small_db, isolated_env, capsys):
    code, out, _ = run_cli(capsys, "schema", "--db", str(small_db))
    assert code == 0
    creates = [line for line in out.splitlines() if line.startswith("CREATE TABLE")]
    assert creates == ["CREATE TABLE arenas (", "CREATE TABLE players (", "CREATE TABLE teams ("]
    assert "  team_id INTEGER REFERENCES teams(id)," in out.splitlines()
    assert "id INTEGER PRIMARY KEY" in out


def test_schema_tables_subset_and_json(small_db, isolated_env, capsys):
    code, out, _ = run_cli(capsys, "schema", "--db", str(small_db), "--tables", "players")
    assert code == 0
    assert [line for line in out.splitlines() if line.startswith("CREATE TABLE")] == ["CREATE TABLE players ("]
    code, out, _ = run_cli(capsys, "schema", "--db", str(small_db), "--json")
    d = json.loads(out)
    assert code == 0 and d["tables"] == ["arenas", "players", "teams"] and d["ddl"].count("CREATE TABLE") == 3
    code, _, err = run_cli(capsys, "schema", "--db", str(small_db), "--tables", "players,coaches")
    assert code == 1 and "unknown table(s): coaches" in err


# --------------------------------------------------------------------------- import, then ask
def test_import_csv_folder_then_ask(scripted, tmp_path, capsys):
    src = tmp_path / "csv"
    src.mkdir()
    (src / "Teams.csv").write_text("team_code,team_name,city\nLAL,Lakers,Los Angeles\nBOS,Celtics,Boston\n")
    (src / "Player Stats.csv").write_text(
        "player,team_code,points\nLeBron James,LAL,30\nAnthony Davis,LAL,25\nJayson Tatum,BOS,28\n")
    out_db = tmp_path / "out" / "league.duckdb"
    code, out, _ = run_cli(capsys, "import", str(src), "--out", str(out_db), "--primary-key", "teams=team_code")
    assert code == 0
    assert out_db.is_file()
    assert "2 tables" in out and "player_stats" in out and "teams" in out

    code, out, _ = run_cli(capsys, "schema", "--db", str(out_db))
    assert code == 0
    assert "CREATE TABLE player_stats (" in out and "team_code VARCHAR PRIMARY KEY" in out

    sql = ("SELECT s.player, s.points FROM player_stats s JOIN teams t ON s.team_code = t.team_code "
           "WHERE t.team_name = 'Lakers' ORDER BY s.points DESC")
    llm = scripted({"SQLGenerator": [sql]})
    code, out, _ = run_cli(capsys, "ask", "Points of the Lakers players?", "--db", str(out_db), "--json")
    d = json.loads(out)
    assert code == 0
    assert d["status"] == "answered"
    assert d["rows"] == [["LeBron James", 30], ["Anthony Davis", 25]]
    assert d["answer"] == "2 rows: (LeBron James, 30); (Anthony Davis, 25)."
    assert "teams.team_name = 'Lakers'" in llm.calls[0]["messages"][-1]["content"]

    # A second import onto the same file needs --replace.
    code, _, err = run_cli(capsys, "import", str(src), "--out", str(out_db))
    assert code == 1 and "already exists" in err


def test_import_bad_source_exit_1(tmp_path, isolated_env, capsys):
    code, _, err = run_cli(capsys, "import", str(tmp_path / "nothing"), "--out", str(tmp_path / "x.duckdb"))
    assert code == 1 and "source not found" in err
    assert not (tmp_path / "x.duckdb").exists()


# --------------------------------------------------------------------------- console script
def _env(cache: Path) -> dict[str, str]:
    return clean_env(cache)


@pytest.mark.slow       # a subprocess
def test_console_script_help(isolated_env):
    assert DUCKASK.is_file() and os.access(DUCKASK, os.X_OK), f"console script missing: {DUCKASK}"
    p = subprocess.run([str(DUCKASK), "--help"], capture_output=True, text=True, timeout=60, env=_env(isolated_env))
    assert p.returncode == 0, p.stderr
    assert "usage: duckask" in p.stdout
    for cmd in ("ask", "chat", "schema", "sql", "import", "demo", "model"):
        assert cmd in p.stdout


@pytest.mark.slow       # a subprocess
def test_console_script_sql_refused(small_db, isolated_env):
    p = subprocess.run([str(DUCKASK), "sql", "DELETE FROM players", "--db", str(small_db), "--json"],
                       capture_output=True, text=True, timeout=60, env=_env(isolated_env))
    assert p.returncode == 1, p.stderr
    assert json.loads(p.stdout)["status"] == "refused"


@pytest.mark.slow           # a subprocess each
@pytest.mark.parametrize("sql, status", [
    ("SELECT name FROM players", "ok"),
    ("DELETE FROM players", "refused"),
    ("SELECT path FROM duckdb_databases()", "refused"),
    ("SELECT nosuch FROM players", "error"),
    ("SELECT count(*) FROM range(10000000000) a", "timeout"),
])
def test_console_script_ends_cleanly(small_db, isolated_env, sql, status):
    # Whatever the outcome, the process exits without DuckDB's "nanobind: leaked instances" report.
    p = subprocess.run([str(DUCKASK), "sql", sql, "--db", str(small_db), "--json", "--timeout", "0.5"],
                       capture_output=True, text=True, timeout=60, env=_env(isolated_env))
    assert json.loads(p.stdout)["status"] == status
    assert "nanobind" not in p.stderr and "leaked" not in p.stderr, p.stderr


# --------------------------------------------------------------------------- chat
def test_chat_fix_keeps_the_right_sql_and_the_next_team_comes_from_it(scripted, small_db, tmp_path, capsys,
                                                                       monkeypatch):
    import shutil

    small_db = Path(shutil.copy(small_db, tmp_path / "fix.duckdb"))
    scripted({"SQLGenerator": ["SELECT name, points FROM players ORDER BY points DESC"] * 6})
    lines = [LAKERS_Q, "/fix", "/fix SELECT nme FROM players", f"/fix {LAKERS_SQL}",
             "What are the points of Celtics players?", ""]
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(lines)))
    code, out, err = run_cli(capsys, "chat", "--db", str(small_db))
    assert code == EXIT_OK
    assert "/fix: give the SQL" in err and "/fix: not kept" in err and "kept as example" in err
    assert "Jayson Tatum" in out and "From the kept pair" in out     # the Celtics from the fixed pair's template


def test_chat_good_keeps_the_last_answer_as_an_example(scripted, small_db, tmp_path, capsys, monkeypatch):
    # A copy of the shared test database: the pair kept here must not reach other tests' prompts.
    import shutil

    small_db = Path(shutil.copy(small_db, tmp_path / "chat.duckdb"))
    scripted({"SQLGenerator": [LAKERS_SQL]})
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(["/good", LAKERS_Q, "/good", "/help", ""])))
    code, out, err = run_cli(capsys, "chat", "--db", str(small_db))
    assert code == EXIT_OK
    assert "/good: nothing to keep yet" in err          # before any answer: refused, said why
    assert "kept as example" in err and "/good" in out and "commands:" in out
    # The pair is stored for this database: the examples command lists it.
    assert main(["examples", "--db", str(small_db), "--json"]) == 0
    kept = json.loads(capsys.readouterr().out)
    assert [(e["question"], e["sql"]) for e in kept] == [(LAKERS_Q, LAKERS_SQL)]


# --------------------------------------------------------------------------- conversations from the CLI
def test_ask_sql_runs_the_users_sql_without_the_model(scripted, small_db, capsys):
    llm = scripted({})
    code, out, _ = run_cli(capsys, "ask", "--sql", "SELECT name FROM teams ORDER BY id LIMIT 2", "--db",
                           str(small_db), "--json")
    d = json.loads(out)
    assert code == 0 and d["intent"] == "sql" and d["rows"] == [["Lakers"], ["Celtics"]] and llm.count() == 0
    code, out, _ = run_cli(capsys, "ask", "--sql", "DELETE FROM teams", "--db", str(small_db), "--json")
    assert code == EXIT_FAIL and "DELETE" in json.loads(out)["answer"]


def test_ask_reads_the_question_from_stdin(scripted, small_db, capsys, monkeypatch):
    scripted({"SQLGenerator": [LAKERS_SQL], "DataAnalyzer": [SENTENCE]})
    monkeypatch.setattr("sys.stdin", io.StringIO(LAKERS_Q + "\n"))
    code, out, _ = run_cli(capsys, "ask", "--db", str(small_db), "--json")
    assert code == 0 and json.loads(out)["question"] == LAKERS_Q


def test_ask_confirm_without_a_terminal_is_pending_and_runs_nothing(scripted, small_db, capsys):
    scripted({"SQLGenerator": [LAKERS_SQL]})
    code, out, err = run_cli(capsys, "ask", LAKERS_Q, "--db", str(small_db), "--confirm", "--resample-drafts", "0")
    assert code == EXIT_CLARIFY and "Waiting for your approval" in out and "Not run" in err
    assert "LeBron" not in out
