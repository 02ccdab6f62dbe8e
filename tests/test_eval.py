"""Batch evaluation (``duckask eval`` / ``duckask.utils.eval.run.evaluate``) with a ScriptedLLM.

The scripted model maps each question (found in the prompt text) to a fixed SQL string, one map for
the graph's SQLGenerator and one for the single-prompt Baseline, so which answers are right is known
in advance and every accuracy number can be asserted exactly.
"""
from __future__ import annotations

import csv
import json
import shutil
import sqlite3
import tempfile
from pathlib import Path

import duckdb
import pandas as pd
import pytest
import yaml
from conftest import build_small_db

from duckask.utils.app.cli import main as cli_main
from duckask.utils.eval import run as evaluation
from duckask.utils.eval.questions import Question, load_questions, read_ids, resolve_db, select
from duckask.utils.eval.records import RecordWriter, read_records
from duckask.utils.eval.report import render_markdown, summarize, write_report
from duckask.utils.eval.run import evaluate
from duckask.utils.llm import ScriptedLLM
from duckask.utils.llm.cache import CachedLLM

# --------------------------------------------------------------------------- the question set
# question -> (gold, graph SQL, baseline SQL). Gold is ("sql", text) or ("rows", rows, ordered).
TEAMS_Q = "How many teams are there?"
HIGH_Q = "Which players scored more than 25 points?"
GARDEN_Q = "What is the capacity of the TD Garden arena?"
BULLS_Q = "Which city are the Bulls from?"
ROSTER_Q = "How many players does each team have?"
LAKERS_Q = "What are the points of Lakers players, highest first?"

LAKERS_DESC = ("SELECT p.name, p.points FROM players p JOIN teams t ON p.team_id = t.id "
               "WHERE t.name = 'Lakers' ORDER BY p.points DESC")
GRAPH_SQL = {
    TEAMS_Q: "SELECT count(*) AS n FROM teams",                                            # right
    HIGH_Q: "SELECT name FROM players WHERE points > 25",                                  # right
    GARDEN_Q: "SELECT capacity FROM arenas WHERE name = 'Crypto.com Arena'",               # wrong
    BULLS_Q: "SELECT city FROM teams WHERE name = 'Bulls'",                                # gold errors
    ROSTER_Q: ("SELECT t.name, count(*) AS n FROM teams t JOIN players p ON p.team_id = t.id "
               "GROUP BY t.name"),                                                         # right
    LAKERS_Q: LAKERS_DESC.replace("DESC", "ASC"),                                          # wrong order
}
BASELINE_SQL = {
    TEAMS_Q: "SELECT count(*) FROM teams",                                                 # right
    HIGH_Q: "SELECT name FROM players WHERE points >= 25",                                 # wrong
    GARDEN_Q: "SELECT capacity FROM arenas WHERE name = 'TD Garden'",                      # right
    BULLS_Q: "SELECT city FROM teams WHERE name = 'Bulls'",                                # gold errors
    ROSTER_Q: "SELECT count(*) FROM players",                                              # wrong
    LAKERS_Q: LAKERS_DESC.replace("DESC", "ASC"),                                          # wrong order
}
ROWS = [
    {"id": "q1", "question": TEAMS_Q, "gold_sql": "SELECT count(*) FROM teams", "tags": ["count"]},
    {"id": "q2", "question": HIGH_Q, "gold_sql": "SELECT name FROM players WHERE points > 25", "tags": ["filter"]},
    {"id": "q3", "question": GARDEN_Q, "gold_sql": "SELECT capacity FROM arenas WHERE name = 'TD Garden'",
     "tags": ["filter"]},
    {"id": "q4", "question": BULLS_Q, "gold_sql": "SELECT city FROM franchises WHERE name = 'Bulls'"},
    {"id": "q5", "question": ROSTER_Q, "expected": [["Lakers", 3], ["Celtics", 2], ["Bulls", 1]],
     "tags": ["count", "join"]},
    {"id": "q6", "question": LAKERS_Q,
     "expected": [["LeBron James", 30], ["Anthony Davis", 25], ["Austin Reaves", 15]], "ordered": True,
     "tags": ["join"]},
]
GRAPH_RIGHT = {"q1", "q2", "q5"}
BASELINE_RIGHT = {"q1", "q3"}
ALL_IDS = [r["id"] for r in ROWS]
RECORD_KEYS = {"id", "db", "question", "sql", "status", "correct", "first_sql", "first_correct", "grades",
               "fixer_attempts", "llm_calls", "prompt_tokens", "completion_tokens", "seconds", "error",
               "baseline_sql", "baseline_correct"}


def router(answers: dict[str, str], asked: list[str] | None = None):
    """A ScriptedLLM callable: the SQL for whichever known question the prompt holds."""
    def reply(messages: list[dict[str, str]]) -> str:
        text = "\n".join(m["content"] for m in messages)
        for q in sorted(answers, key=len, reverse=True):
            if q in text:
                if asked is not None:
                    asked.append(q)
                return answers[q]
        if asked is not None:
            asked.append("<unknown>")
        return "SELECT 'unscripted question' AS oops"
    return reply


def scripted(graph: dict[str, str] | None = None, baseline: dict[str, str] | None = None,
             asked: list[str] | None = None) -> ScriptedLLM:
    return ScriptedLLM({"SQLGenerator": router(graph or GRAPH_SQL, asked),
                        "Baseline": router(baseline or BASELINE_SQL, asked)})


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(autouse=True)
def no_real_model(monkeypatch):
    """Never the real model: any fallback to get_llm() fails the test unless the test patched it."""
    from duckask.utils.app import api

    def refuse(settings=None):
        raise AssertionError("the real LLM backend was requested")

    monkeypatch.setattr(api, "get_llm", refuse)
    monkeypatch.setattr(evaluation, "get_llm", refuse)


@pytest.fixture
def env(isolated_env):
    """The cache (catalogs, imports, default eval output) in a temp dir, no user config."""
    return isolated_env


@pytest.fixture
def qfile(tmp_path) -> Path:
    return write_jsonl(tmp_path / "questions.jsonl", ROWS)


def lines_of(path: Path) -> list[str]:
    return [line for line in Path(path).read_text().splitlines() if line.strip()]


# --------------------------------------------------------------------------- input formats
def test_jsonl_format(tmp_path, small_db):
    rows = [
        {"id": "a", "question": " How many teams? ", "gold_sql": "SELECT count(*) FROM teams", "db": "nba.duckdb",
         "tags": ["x", "y"]},
        {"question_id": 7, "question": "Cities?", "query": "SELECT city FROM teams", "db": "sales"},
        {"question": "Top scorer?", "SQL": "SELECT 1", "expected": [[1]], "ordered": "true", "db_id": "nba"},
    ]
    qs, default_dir = load_questions(write_jsonl(tmp_path / "q.jsonl", rows))
    assert default_dir is None
    assert [q.id for q in qs] == ["a", "7", "q0003"]
    a, b, c = qs
    assert a.question == "How many teams?"
    assert a.gold_sql == "SELECT count(*) FROM teams"
    assert a.db == str(tmp_path / "nba.duckdb") and a.db_id is None    # a path, relative to the file
    assert a.tags == ["x", "y"] and a.expected is None and a.ordered is False
    assert b.gold_sql == "SELECT city FROM teams"
    assert b.db is None and b.db_id == "sales"                          # a bare name is a db_id
    assert c.gold_sql == "SELECT 1" and c.expected == [[1]] and c.ordered is True and c.db_id == "nba"


def test_jsonl_duplicate_id_and_missing_question_are_errors(tmp_path):
    with pytest.raises(ValueError, match="duplicate question id 'a'"):
        load_questions(write_jsonl(tmp_path / "dup.jsonl", [{"id": "a", "question": "x?"},
                                                            {"id": "a", "question": "y?"}]))
    with pytest.raises(ValueError, match="row 2 has no question"):
        load_questions(write_jsonl(tmp_path / "noq.jsonl", [{"id": "a", "question": "x?"}, {"id": "b"}]))
    with pytest.raises(ValueError, match="not found"):
        load_questions(tmp_path / "missing.jsonl")
    (tmp_path / "q.txt").write_text("hi")
    with pytest.raises(ValueError, match="unknown question file type"):
        load_questions(tmp_path / "q.txt")


@pytest.mark.parametrize("wrapped", [False, True], ids=["list", "mapping"])
def test_yaml_format(tmp_path, wrapped):
    rows = [{"id": "y1", "question": "How many teams?", "gold_sql": "SELECT count(*) FROM teams",
             "tags": ["count"]},
            {"id": "y2", "question": "Players by points?", "expected": [["LeBron James", 30], ["Zach LaVine", 24]],
             "ordered": True}]
    path = tmp_path / "q.yaml"
    path.write_text(yaml.safe_dump({"questions": rows} if wrapped else rows))
    qs, default_dir = load_questions(path)
    assert default_dir is None
    assert [q.id for q in qs] == ["y1", "y2"]
    assert qs[0].gold_sql == "SELECT count(*) FROM teams" and qs[0].tags == ["count"]
    assert qs[1].expected == [["LeBron James", 30], ["Zach LaVine", 24]] and qs[1].ordered is True
    assert qs[1].gold_sql is None


def test_csv_format(tmp_path):
    path = tmp_path / "q.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "question", "gold_sql", "expected", "ordered", "tags", "db"])
        w.writerow(["c1", "How many teams?", "SELECT count(*) FROM teams", "", "", "count; easy", ""])
        w.writerow(["c2", "Team cities?", "", '[["Boston"], ["Chicago"], ["Los Angeles"]]', "yes", "list", ""])
        w.writerow(["c3", "Arena names, with commas?", "SELECT 'a, b'", "", "no", "", "nba"])
    qs, _ = load_questions(path)
    assert [q.id for q in qs] == ["c1", "c2", "c3"]
    c1, c2, c3 = qs
    assert c1.tags == ["count", "easy"] and c1.expected is None and c1.ordered is False
    assert c1.gold_sql == "SELECT count(*) FROM teams"
    assert c2.expected == [["Boston"], ["Chicago"], ["Los Angeles"]]    # JSON text parsed
    assert c2.gold_sql is None and c2.ordered is True and c2.tags == ["list"]
    assert c3.tags == [] and c3.db_id == "nba" and c3.ordered is False
    assert c3.gold_sql == "SELECT 'a, b'"


def test_csv_eval_scores_expected_rows(tmp_path, small_db, env):
    path = tmp_path / "q.csv"
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["id", "question", "expected", "tags"])
        w.writeheader()
        w.writerow({"id": "c1", "question": TEAMS_Q, "expected": "[[3]]", "tags": "count;easy"})
        w.writerow({"id": "c2", "question": HIGH_Q, "expected": '[["LeBron James"]]', "tags": "filter"})
    df = evaluate(path, db=str(small_db), out=tmp_path / "out.jsonl", llm=scripted(), progress=False)
    assert dict(zip(df["id"], df["correct"])) == {"c1": True, "c2": False}   # gold is LeBron + Tatum
    s = df.attrs["summary"]
    assert s["by_tag"] == {"count": {"n": 1, "ex": 100.0}, "easy": {"n": 1, "ex": 100.0},
                           "filter": {"n": 1, "ex": 0.0}}


def build_spider(root: Path) -> Path:
    """A tiny Spider-layout folder: dev.json, tables.json, database/concert/concert.sqlite."""
    (root / "database" / "concert").mkdir(parents=True)
    lite = sqlite3.connect(root / "database" / "concert" / "concert.sqlite")
    lite.executescript("""
        CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, country TEXT, age INTEGER);
        INSERT INTO singer VALUES (1, 'Joe Sharp', 'Netherlands', 52), (2, 'Timbaland', 'United States', 32),
                                  (3, 'Justin Brown', 'France', 29), (4, 'Rose White', 'France', 41);
    """)
    lite.commit()
    lite.close()
    dev = [
        {"db_id": "concert", "question": "How many singers are there?", "query": "SELECT count(*) FROM singer"},
        {"db_id": "concert", "question": "What are the names of singers from France?",
         "query": "SELECT name FROM singer WHERE country = 'France'"},
        {"db_id": "concert", "question": "What is the average age of all singers?",
         "query": "SELECT avg(age) FROM singer"},
    ]
    (root / "dev.json").write_text(json.dumps(dev))
    (root / "tables.json").write_text(json.dumps([{
        "db_id": "concert", "table_names_original": ["singer"], "table_names": ["singer"],
        "column_names_original": [[-1, "*"], [0, "singer_id"], [0, "name"], [0, "country"], [0, "age"]],
        "column_types": ["text", "number", "text", "text", "number"], "primary_keys": [1], "foreign_keys": []}]))
    return root


SPIDER_GRAPH = {
    "How many singers are there?": "SELECT count(*) FROM singer",
    "What are the names of singers from France?": "SELECT name FROM singer WHERE country = 'France'",
    "What is the average age of all singers?": "SELECT max(age) FROM singer",
}


def test_spider_layout(tmp_path, env):
    root = build_spider(tmp_path / "spider")
    qs, default_dir = load_questions(root)
    assert default_dir == root / "database"
    assert [q.id for q in qs] == ["dev-0000", "dev-0001", "dev-0002"]
    assert qs[1].question == "What are the names of singers from France?"
    assert qs[1].gold_sql == "SELECT name FROM singer WHERE country = 'France'"
    assert all(q.db_id == "concert" and q.db is None for q in qs)
    assert resolve_db(qs[0], db_dir=default_dir) == str(root / "database" / "concert" / "concert.sqlite")

    llm = ScriptedLLM({"SQLGenerator": router(SPIDER_GRAPH)})
    df = evaluate(root, out=tmp_path / "out.jsonl", llm=llm, progress=False)
    assert list(df["id"]) == ["dev-0000", "dev-0001", "dev-0002"]
    assert list(df["db"]) == ["concert"] * 3
    assert list(df["status"]) == ["answered"] * 3
    assert list(df["correct"]) == [True, True, False]
    assert df["gold_error"].isna().all()
    assert df.attrs["summary"]["pipeline"]["ex"] == 66.7
    assert df.attrs["summary"]["by_db"] == {"concert": {"n": 3, "ex": 66.7}}
    # The SQLite file was imported into the cache, not opened in place.
    assert list((env / "imports").glob("concert-*.duckdb"))


def export_db(dest: Path) -> Path:
    """EXPORT DATABASE of the small teams/players/arenas DB into ``dest`` (a fresh copy is exported: the
    shared small_db may already be open read-only in this process, with another configuration)."""
    src = build_small_db(Path(tempfile.mkdtemp(prefix="export-src-")) / "nba.duckdb")
    dest.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(src))
    try:
        con.execute(f"EXPORT DATABASE '{dest}'")
    finally:
        con.close()
    shutil.rmtree(src.parent)
    assert (dest / "schema.sql").is_file() and (dest / "load.sql").is_file()
    return dest


def test_questions_jsonl_with_export_dbs_layout(tmp_path, small_db, env):
    root = tmp_path / "spiderman"
    (root / "dbs").mkdir(parents=True)
    export_db(root / "dbs" / "nba")
    rows = [{**r, "db_id": "nba"} if i % 2 else {**r, "db": "nba"} for i, r in enumerate(ROWS[:3])]
    write_jsonl(root / "questions.jsonl", rows)
    qs, default_dir = load_questions(root)
    assert default_dir == root / "dbs"
    assert [q.db_id for q in qs] == ["nba"] * 3 and all(q.db is None for q in qs)
    assert resolve_db(qs[0], db_dir=default_dir) == str(root / "dbs" / "nba")

    df = evaluate(root, out=tmp_path / "out.jsonl", llm=scripted(), progress=False)
    assert list(df["id"]) == ["q1", "q2", "q3"]
    assert list(df["db"]) == ["nba"] * 3
    assert dict(zip(df["id"], df["correct"])) == {"q1": True, "q2": True, "q3": False}


def test_folder_without_a_known_layout_is_an_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="neither questions.jsonl nor dev.json"):
        load_questions(tmp_path / "empty")


# --------------------------------------------------------------------------- selection
def test_ids_selection(tmp_path, qfile):
    ids_file = tmp_path / "ids.txt"
    ids_file.write_text("# a fixed sample\nq5\n\nq2\n")
    assert read_ids(ids_file) == ["q5", "q2"]
    qs, _ = load_questions(qfile)
    assert [q.id for q in select(qs, read_ids(ids_file))] == ["q2", "q5"]      # the file's order
    assert select(qs, None) == qs and select(qs, []) == qs
    with pytest.raises(ValueError, match="1 id\\(s\\) not in the question file, e.g. 'q99'"):
        select(qs, ["q2", "q99"])


def test_ids_and_limit_in_evaluate(tmp_path, qfile, small_db, env):
    ids_file = tmp_path / "ids.txt"
    ids_file.write_text("q3\nq1\nq6\n")
    llm = scripted()
    df = evaluate(qfile, db=str(small_db), ids=ids_file, out=tmp_path / "a.jsonl", llm=llm, progress=False)
    assert list(df["id"]) == ["q1", "q3", "q6"]
    assert [r["id"] for r in read_records(tmp_path / "a.jsonl")] == ["q1", "q3", "q6"]
    assert llm.count("SQLGenerator") == 3

    df = evaluate(qfile, db=str(small_db), ids=["q2", "q5"], out=tmp_path / "b.jsonl", llm=scripted(),
                  progress=False)
    assert list(df["id"]) == ["q2", "q5"]
    df = evaluate(qfile, db=str(small_db), limit=2, out=tmp_path / "c.jsonl", llm=scripted(), progress=False)
    assert list(df["id"]) == ["q1", "q2"]
    with pytest.raises(ValueError, match="not in the question file"):
        evaluate(qfile, db=str(small_db), ids=["nope"], out=tmp_path / "d.jsonl", llm=scripted(), progress=False)
    assert not (tmp_path / "d.jsonl").exists()


def test_cli_unknown_id_exits_1(tmp_path, qfile, small_db, env, monkeypatch, capsys):
    monkeypatch.setattr(evaluation, "get_llm", lambda settings=None: scripted())
    ids_file = tmp_path / "ids.txt"
    ids_file.write_text("q1\nq42\n")
    code = cli_main(["eval", str(qfile), "--db", str(small_db), "--ids", str(ids_file),
                     "--out", str(tmp_path / "out.jsonl")])
    out, err = capsys.readouterr()
    assert code == 1
    assert "not in the question file" in err and "'q42'" in err


# --------------------------------------------------------------------------- database resolution
def test_resolve_db(tmp_path, small_db):
    other = tmp_path / "other.duckdb"
    q_path = Question(id="p", question="?", db=str(other))
    q_id = Question(id="i", question="?", db_id="nba")
    q_none = Question(id="n", question="?")
    # --db wins over everything.
    for q in (q_path, q_id, q_none):
        assert resolve_db(q, db=str(small_db), db_dir=tmp_path) == str(small_db)
    assert resolve_db(q_path) == str(other)
    with pytest.raises(ValueError, match="question n names no database: pass --db"):
        resolve_db(q_none)
    with pytest.raises(ValueError, match="question n names no database"):
        resolve_db(q_none, db_dir=tmp_path)
    with pytest.raises(ValueError, match="has db_id 'nba': pass --db-dir"):
        resolve_db(q_id)
    with pytest.raises(ValueError, match="no database for db_id 'nba'"):
        resolve_db(q_id, db_dir=tmp_path)


def test_db_dir_duckdb_file_and_export_folder(tmp_path, small_db, env):
    dir_a = tmp_path / "a"
    dir_a.mkdir()
    (dir_a / "nba.duckdb").write_bytes(Path(small_db).read_bytes())
    dir_b = tmp_path / "b"
    dir_b.mkdir()
    export_db(dir_b / "nba")
    q = Question(id="x", question="?", db_id="nba")
    assert resolve_db(q, db_dir=dir_a) == str(dir_a / "nba.duckdb")
    assert resolve_db(q, db_dir=dir_b) == str(dir_b / "nba")

    qfile = write_jsonl(tmp_path / "q.jsonl", [{**r, "db_id": "nba"} for r in ROWS[:2]])
    for d in (dir_a, dir_b):
        df = evaluate(qfile, db_dir=d, out=tmp_path / f"out-{d.name}.jsonl", llm=scripted(), progress=False)
        assert list(df["correct"]) == [True, True]
        assert list(df["db"]) == ["nba", "nba"]


def test_cli_db_dir(tmp_path, small_db, env, monkeypatch, capsys):
    monkeypatch.setattr(evaluation, "get_llm", lambda settings=None: scripted())
    export_db(tmp_path / "dbs" / "nba")
    qfile = write_jsonl(tmp_path / "q.jsonl", [{**r, "db": "nba"} for r in ROWS[:3]])
    code = cli_main(["eval", str(qfile), "--db-dir", str(tmp_path / "dbs"), "--out", str(tmp_path / "o.jsonl"),
                     "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    summary = json.loads(out)
    assert summary["questions"] == 3 and summary["pipeline"]["ex"] == 66.7
    assert summary["by_db"] == {"nba": {"n": 3, "ex": 66.7}}


def test_row_naming_no_database_is_a_clear_error(tmp_path, qfile, env, monkeypatch, capsys):
    with pytest.raises(ValueError, match="question q1 names no database: pass --db or give the row a db/db_id"):
        evaluate(qfile, out=tmp_path / "out.jsonl", llm=scripted(), progress=False)
    monkeypatch.setattr(evaluation, "get_llm", lambda settings=None: scripted())
    code = cli_main(["eval", str(qfile), "--out", str(tmp_path / "out.jsonl")])
    out, err = capsys.readouterr()
    assert code == 1
    assert "duckask: question q1 names no database: pass --db" in err


def test_missing_question_file_exits_1(tmp_path, env, capsys):
    code = cli_main(["eval", str(tmp_path / "nope.jsonl"), "--db", "x.duckdb"])
    assert code == 1
    assert "question file not found" in capsys.readouterr().err


# --------------------------------------------------------------------------- end to end through the CLI
def test_cli_eval_end_to_end(tmp_path, qfile, small_db, env, monkeypatch, capsys):
    llm = scripted()
    monkeypatch.setattr(evaluation, "get_llm", lambda settings=None: llm)
    out, rep = tmp_path / "results.jsonl", tmp_path / "report"
    code = cli_main(["eval", str(qfile), "--db", str(small_db), "--out", str(out), "--report", str(rep),
                     "--baseline", "single-prompt"])
    stdout, stderr = capsys.readouterr()
    assert code == 0, stderr

    # Every question went to the graph once and to the baseline once (the happy path is one call).
    assert llm.count("SQLGenerator") == 6 and llm.count("Baseline") == 6

    # One JSONL record per question, every line complete JSON.
    lines = lines_of(out)
    assert len(lines) == 6
    records = [json.loads(line) for line in lines]
    assert [r["id"] for r in records] == ALL_IDS
    for r in records:
        assert RECORD_KEYS <= set(r), RECORD_KEYS - set(r)
        assert r["db"] == "nba"
        assert r["status"] == "answered"
        assert r["sql"] == GRAPH_SQL[r["question"]]
        assert r["first_sql"] == GRAPH_SQL[r["question"]]
        assert r["baseline_sql"] == BASELINE_SQL[r["question"]]
        assert r["llm_calls"] == 1 and r["fixer_attempts"] == 0
        assert r["prompt_tokens"] > 0 and r["completion_tokens"] > 0
        assert r["seconds"] >= 0 and r["error"] is None
        assert isinstance(r["grades"], list)
    by_id = {r["id"]: r for r in records}
    assert {i for i, r in by_id.items() if r["correct"]} == GRAPH_RIGHT
    assert {i for i, r in by_id.items() if r["first_correct"]} == GRAPH_RIGHT
    assert {i for i, r in by_id.items() if r["baseline_correct"]} == BASELINE_RIGHT
    assert by_id["q2"]["tags"] == ["filter"]

    # A gold SQL that errors: wrong, with the gold error recorded (the prediction itself ran fine).
    assert by_id["q4"]["correct"] is False and by_id["q4"]["baseline_correct"] is False
    assert "franchises" in by_id["q4"]["gold_error"]
    assert all(by_id[i]["gold_error"] is None for i in ALL_IDS if i != "q4")

    # Expected-rows questions are scored against the rows: q5 (unordered) right for the graph, the
    # baseline's single count wrong; q6 is ordered and the graph's ascending order is wrong.
    assert by_id["q5"]["correct"] is True and by_id["q5"]["baseline_correct"] is False
    assert by_id["q6"]["correct"] is False

    # The printed markdown table.
    graph_ex = round(100 * len(GRAPH_RIGHT) / 6, 1)
    base_ex = round(100 * len(BASELINE_RIGHT) / 6, 1)
    assert graph_ex == 50.0 and base_ex == 33.3
    assert "# duckask eval" in stdout and "Questions: 6" in stdout
    assert "| system | EX % |" in stdout
    assert f"| duckask graph | {graph_ex} |" in stdout
    assert f"| single prompt | {base_ex} |" in stdout
    assert "| nba | 6 | 50.0 |" in stdout
    assert f"records: {out}" in stdout
    assert "[6/6]" in stderr

    # The report files, whose EX equals the fraction of correct records.
    md, js = tmp_path / "report.md", tmp_path / "report.json"
    assert md.is_file() and js.is_file()
    summary = json.loads(js.read_text())
    assert summary["questions"] == 6
    assert summary["pipeline"]["ex"] == round(100 * sum(r["correct"] for r in records) / len(records), 1) == 50.0
    assert summary["baseline"]["ex"] == round(100 * sum(r["baseline_correct"] for r in records) / 6, 1) == 33.3
    assert summary["baseline"]["pipeline_ex_same_questions"] == 50.0
    assert summary["pipeline"]["first_draft_ex"] == 50.0
    assert summary["by_tag"]["filter"] == {"n": 2, "ex": 50.0}
    assert summary["by_tag"]["count"] == {"n": 2, "ex": 100.0}
    assert summary["by_tag"]["join"] == {"n": 2, "ex": 50.0}
    assert f"| duckask graph | {graph_ex} |" in md.read_text()
    assert f"| single prompt | {base_ex} |" in md.read_text()

    # Rerunning the same command resumes: nothing is left to ask.
    code = cli_main(["eval", str(qfile), "--db", str(small_db), "--out", str(out), "--baseline", "single-prompt",
                     "--json"])
    stdout, stderr = capsys.readouterr()
    assert code == 0
    assert llm.count("SQLGenerator") == 6 and llm.count("Baseline") == 6
    assert "resuming, 6 question(s) already in the output" in stderr
    assert json.loads(stdout)["pipeline"]["ex"] == 50.0
    assert len(lines_of(out)) == 6


def test_cli_eval_bad_choices_are_usage_errors(qfile, capsys):
    with pytest.raises(SystemExit) as e:
        cli_main(["eval", str(qfile), "--mode", "x"])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        cli_main(["eval", str(qfile), "--baseline", "few-shot"])
    assert e.value.code == 2


# --------------------------------------------------------------------------- resume after a kill
def interrupt_after(n: int, seen: list[str]):
    """An on_record callback that records ids and simulates a kill (Ctrl-C) after ``n`` records."""
    def on_record(rec):
        seen.append(rec["id"])
        if len(seen) == n:
            raise KeyboardInterrupt
    return on_record


def test_resume_after_kill(tmp_path, qfile, small_db, env, capsys):
    out = tmp_path / "out.jsonl"
    first = scripted()
    seen: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        evaluate(qfile, db=str(small_db), out=out, llm=first, progress=False, on_record=interrupt_after(2, seen))
    assert seen == ["q1", "q2"]
    assert first.count("SQLGenerator") == 2
    recs = read_records(out)
    assert [r["id"] for r in recs] == ["q1", "q2"]
    assert len(lines_of(out)) == 2

    # Killed in the middle of writing the third record: a cut-off line with no newline.
    full = json.dumps({"id": "q3", "question": GARDEN_Q, "sql": "SELECT 1", "status": "answered", "correct": True})
    with out.open("a") as f:
        f.write(full[:40])
    assert [r["id"] for r in read_records(out)] == ["q1", "q2"]      # the partial line is not a record

    asked: list[str] = []
    second = scripted(asked=asked)
    capsys.readouterr()
    df = evaluate(qfile, db=str(small_db), out=out, llm=second, progress=False)
    err = capsys.readouterr().err
    assert "resuming, 2 question(s) already in the output" in err
    assert "[4/4]" in err and "[5/4]" not in err

    # Only the four questions not yet recorded were asked (q3 included: its record was cut off).
    assert second.count("SQLGenerator") == 4
    assert sorted(asked) == sorted([GARDEN_Q, BULLS_Q, ROSTER_Q, LAKERS_Q])
    recs = read_records(out)
    ids = [r["id"] for r in recs]
    assert len(ids) == len(set(ids)) == 6
    assert sorted(ids) == sorted(ALL_IDS)
    # The cut-off line was cut away: every line is a whole record.
    lines = lines_of(out)
    assert len(lines) == 6 and all(json.loads(line)["id"] for line in lines)
    assert json.loads(lines[2])["id"] == "q3"

    assert len(df) == 6 and sorted(df["id"]) == sorted(ALL_IDS)
    s = df.attrs["summary"]
    assert s["questions"] == 6
    assert s["pipeline"]["ex"] == 50.0
    assert {i for i, c in zip(df["id"], df["correct"]) if c} == GRAPH_RIGHT


def test_record_writer_cuts_off_a_torn_line(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"id": "a", "correct": true}\n{"id": "b", "corr')
    w = RecordWriter(path)
    w.append({"id": "c", "correct": False})
    assert [r["id"] for r in read_records(path)] == ["a", "c"]
    assert path.read_text() == '{"id": "a", "correct": true}\n{"id": "c", "correct": false}\n'
    torn_only = tmp_path / "t.jsonl"
    torn_only.write_text('{"id": "x"')
    RecordWriter(torn_only)
    assert torn_only.read_text() == ""
    # A file that ends cleanly is left as it is.
    w2 = RecordWriter(path)
    w2.append({"id": "d", "correct": True})
    assert [r["id"] for r in read_records(path)] == ["a", "c", "d"]
    assert read_records(tmp_path / "none.jsonl") == []
    # A gzip-compressed records file (how large committed runs are kept) reads the same.
    import gzip
    (tmp_path / "r.jsonl.gz").write_bytes(gzip.compress(path.read_bytes()))
    assert read_records(tmp_path / "r.jsonl.gz") == read_records(path)


# --------------------------------------------------------------------------- LLM cache
def test_cache_second_run_makes_no_backend_calls(tmp_path, qfile, small_db, env):
    cache = tmp_path / "c.sqlite"
    first = scripted()
    df1 = evaluate(qfile, db=str(small_db), out=tmp_path / "run1.jsonl", cache=cache, baseline="single-prompt",
                   llm=first, progress=False)
    assert len(first.calls) == 12          # 6 SQLGenerator + 6 Baseline, all misses
    assert cache.is_file()
    assert len(CachedLLM(ScriptedLLM({}), cache)) == 12

    second = scripted()
    df2 = evaluate(qfile, db=str(small_db), out=tmp_path / "run2.jsonl", cache=cache, baseline="single-prompt",
                   llm=second, progress=False)
    assert second.calls == []                 # every reply came from the cache
    assert list(df2["id"]) == list(df1["id"]) == ALL_IDS
    assert list(df2["correct"]) == list(df1["correct"])
    assert list(df2["baseline_correct"]) == list(df1["baseline_correct"])
    assert list(df2["sql"]) == list(df1["sql"])
    # Token accounting still shows what the calls cost.
    assert list(df2["prompt_tokens"]) == list(df1["prompt_tokens"])
    assert df2.attrs["summary"]["pipeline"]["ex"] == df1.attrs["summary"]["pipeline"]["ex"] == 50.0

    # Without the cache the backend is called again.
    third = scripted()
    evaluate(qfile, db=str(small_db), out=tmp_path / "run3.jsonl", llm=third, progress=False)
    assert third.count("SQLGenerator") == 6


def test_cached_llm_hits_and_misses(tmp_path):
    backend = ScriptedLLM({"SQLGenerator": ["SELECT 1", "SELECT 2", "SELECT 3", "SELECT 4", "SELECT 5"],
                           "Other": ["other reply"]})
    c = CachedLLM(backend, tmp_path / "sub" / "cache.sqlite")
    msgs = [{"role": "user", "content": "How many teams?"}]

    r1 = c.complete(msgs, node="SQLGenerator", max_tokens=100)
    assert r1.text == "SELECT 1" and c.misses == 1 and c.hits == 0 and len(backend.calls) == 1
    prompt_tokens = r1.prompt_tokens

    # Identical call: a hit with the stored text and tokens, and ms 0; the backend is not called.
    r2 = c.complete([dict(m) for m in msgs], node="SQLGenerator", max_tokens=100)
    assert r2.text == "SELECT 1" and r2.ms == 0 and r2.node == "SQLGenerator"
    assert r2.prompt_tokens == prompt_tokens and r2.completion_tokens == r1.completion_tokens
    assert c.hits == 1 and len(backend.calls) == 1

    # Different messages, max_tokens, prefix or stop: misses.
    assert c.complete([{"role": "user", "content": "How many players?"}], node="SQLGenerator",
                      max_tokens=100).text == "SELECT 2"
    assert c.complete(msgs, node="SQLGenerator", max_tokens=200).text == "SELECT 3"
    assert c.complete(msgs, node="SQLGenerator", max_tokens=100, prefix="```sql\n").text == "```sql\nSELECT 4"
    assert c.complete(msgs, node="SQLGenerator", max_tokens=100, stop=["```"]).text == "SELECT 5"
    assert c.misses == 5 and len(backend.calls) == 5
    assert len(c) == 5

    # A different node with the same messages: a miss, answered by that node's script.
    r = c.complete(msgs, node="Other", max_tokens=100)
    assert r.text == "other reply" and c.misses == 6 and backend.count("Other") == 1
    # The original call is still a hit, from a new CachedLLM on the same file too.
    c2 = CachedLLM(ScriptedLLM({}), tmp_path / "sub" / "cache.sqlite")
    r3 = c2.complete(msgs, node="SQLGenerator", max_tokens=100)
    assert r3.text == "SELECT 1" and r3.ms == 0 and c2.hits == 1 and c2.misses == 0
    # A different model name is a different key.
    c3 = CachedLLM(ScriptedLLM({"SQLGenerator": ["SELECT 9"]}, name="other-model"), tmp_path / "sub" / "cache.sqlite")
    assert c3.complete(msgs, node="SQLGenerator", max_tokens=100).text == "SELECT 9" and c3.misses == 1
    # Sampled drafts: each temperature and seed is its own key, and a repeated seed is a hit.
    c4 = CachedLLM(ScriptedLLM({"SQLGenerator": ["SELECT 10", "SELECT 11", "SELECT 12"]}), tmp_path / "s.sqlite")
    texts = [c4.complete(msgs, node="SQLGenerator", temperature=0.7, seed=s).text for s in (1, 2, 1)]
    assert texts == ["SELECT 10", "SELECT 11", "SELECT 10"] and (c4.misses, c4.hits) == (2, 1)
    assert c4.llm.calls[1]["seed"] == 2


# --------------------------------------------------------------------------- the returned DataFrame
def test_evaluate_returns_dataframe_with_summary(tmp_path, qfile, small_db, env):
    df = evaluate(qfile, db=str(small_db), out=tmp_path / "out.jsonl", llm=scripted(), progress=False)
    assert isinstance(df, pd.DataFrame)
    assert len(df) == 6 and list(df["id"]) == ALL_IDS
    assert df.attrs["out"] == str(tmp_path / "out.jsonl")
    s = df.attrs["summary"]
    assert s["questions"] == 6
    assert s["pipeline"]["ex"] == 50.0
    assert s["pipeline"]["errors"] == 0 and s["pipeline"]["sql_did_not_run"] == 0.0
    assert s["pipeline"]["llm_calls_per_q"] == 1 and s["pipeline"]["happy_path_llm_calls_max"] == 1
    g = s["grader"]
    assert {"recall_on_wrong", "false_fail_on_right", "wrong_first_graded", "right_first_graded"} <= set(g)
    assert g["wrong_first_graded"] + g["right_first_graded"] == sum(1 for r in df["grades"] if r)
    assert "baseline" not in s and "baseline_correct" not in df.columns
    assert s == summarize(read_records(tmp_path / "out.jsonl"))
    # The summary's EX is recomputable from the frame.
    assert s["pipeline"]["ex"] == round(100 * df["correct"].mean(), 1)


def test_evaluate_accepts_question_objects_and_default_out(small_db, env):
    qs = [Question(id="a", question=TEAMS_Q, gold_sql="SELECT count(*) FROM teams"),
          Question(id="b", question=HIGH_Q, expected=[["LeBron James"], ["Jayson Tatum"]])]
    df = evaluate(qs, db=str(small_db), llm=scripted(), progress=False)
    assert list(df["correct"]) == [True, True]
    out = Path(df.attrs["out"])
    assert out.parent == env / "eval" and out.is_file()


def test_modes(tmp_path, small_db, env):
    # Gold has duplicate rows; the prediction has each row once: wrong for Spider, right for BIRD.
    q = Question(id="d", question="Which cities do the players' teams come from?",
                 gold_sql="SELECT t.city FROM players p JOIN teams t ON p.team_id = t.id")
    llm_sql = {"Which cities do the players' teams come from?": "SELECT city FROM teams"}
    llm = ScriptedLLM({"SQLGenerator": router(llm_sql)})
    spider = evaluate([q], db=str(small_db), out=tmp_path / "s.jsonl", llm=llm, progress=False)
    bird = evaluate([q], db=str(small_db), out=tmp_path / "b.jsonl", llm=llm, mode="bird", progress=False)
    assert list(spider["correct"]) == [False]
    assert list(bird["correct"]) == [True]
    with pytest.raises(ValueError, match="mode must be spider or bird"):
        evaluate([q], db=str(small_db), out=tmp_path / "x.jsonl", llm=llm, mode="x")
    with pytest.raises(ValueError, match="single-prompt"):
        evaluate([q], db=str(small_db), out=tmp_path / "y.jsonl", llm=llm, baseline="few-shot")
    assert not (tmp_path / "x.jsonl").exists() and not (tmp_path / "y.jsonl").exists()


def test_a_question_that_crashes_is_recorded_and_the_run_goes_on(tmp_path, qfile, small_db, env, monkeypatch):
    from duckask.utils.app import api

    real_ask = api.ask

    def flaky_ask(question, **kw):
        if question == HIGH_Q:
            raise RuntimeError("graph blew up")
        return real_ask(question, **kw)

    monkeypatch.setattr(api, "ask", flaky_ask)
    df = evaluate(qfile, db=str(small_db), ids=["q1", "q2", "q3"], out=tmp_path / "out.jsonl", llm=scripted(),
                  baseline="single-prompt", progress=False)
    recs = {r["id"]: r for r in read_records(tmp_path / "out.jsonl")}
    assert set(recs) == {"q1", "q2", "q3"}
    bad = recs["q2"]
    assert bad["status"] == "error" and bad["correct"] is False and bad["sql"] is None
    assert bad["error"] == "RuntimeError: graph blew up"
    assert RECORD_KEYS <= set(bad), RECORD_KEYS - set(bad)      # same record schema as an answered one
    assert bad["baseline_correct"] is False                      # the baseline still ran (>= 25 is wrong)
    assert recs["q1"]["correct"] is True
    s = df.attrs["summary"]
    assert s["pipeline"]["errors"] == 1 and s["pipeline"]["sql_did_not_run"] == 33.3
    assert s["pipeline"]["ex"] == 33.3


# --------------------------------------------------------------------------- progress and workers
def test_plain_progress_lines(tmp_path, qfile, small_db, env, capsys):
    evaluate(qfile, db=str(small_db), out=tmp_path / "out.jsonl", llm=scripted(), progress=False)
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("[")]
    assert len(err) == 6
    assert [line.split()[0] for line in err] == [f"[{i}/6]" for i in range(1, 7)]
    # q1 ok, q2 ok, q3 wrong, q4 wrong, q5 ok, q6 wrong.
    assert err[0].startswith("[1/6] ok q1") and err[0].endswith("running EX 100.0%")
    assert err[1].endswith("running EX 100.0%")
    assert err[2].startswith("[3/6] -- q3") and err[2].endswith("running EX 66.7%")
    assert err[3].endswith("running EX 50.0%")
    assert err[4].endswith("running EX 60.0%")
    assert err[5].startswith("[6/6] -- q6") and err[5].endswith("running EX 50.0%")


def test_workers_on_an_endpoint_backend(tmp_path, qfile, small_db, env, capsys):
    llm = scripted()
    llm.is_endpoint = True
    out = tmp_path / "out.jsonl"
    df = evaluate(qfile, db=str(small_db), out=out, llm=llm, workers=2, baseline="single-prompt", progress=False)
    recs = [json.loads(line) for line in lines_of(out)]
    ids = [r["id"] for r in recs]
    assert sorted(ids) == sorted(ALL_IDS) and len(ids) == len(set(ids))
    # No question lost to a thread-safety problem (e.g. a shared DuckDB connection in use).
    assert [r["error"] for r in recs] == [None] * 6 and {r["status"] for r in recs} == {"answered"}
    assert llm.count("SQLGenerator") == 6 and llm.count("Baseline") == 6
    assert {i for i, c in zip(df["id"], df["correct"]) if c} == GRAPH_RIGHT
    assert df.attrs["summary"]["pipeline"]["ex"] == 50.0
    assert "--workers ignored" not in capsys.readouterr().err


def test_workers_ignored_for_the_embedded_backend(tmp_path, qfile, small_db, env, capsys):
    llm = scripted()           # is_endpoint False, like the embedded model
    df = evaluate(qfile, db=str(small_db), out=tmp_path / "out.jsonl", llm=llm, workers=4, progress=False)
    assert len(df) == 6
    assert "--workers ignored" in capsys.readouterr().err


# --------------------------------------------------------------------------- summary and report
def test_summary_and_report_from_records(tmp_path):
    recs = [
        {"id": "a", "db": "x", "correct": True, "first_correct": False, "first_graded_correct": False,
         "grades": [{"verdict": "fail"}, {"verdict": "pass"}], "grader_rounds": 1, "fixer_attempts": 0,
         "status": "answered", "seconds": 1.0, "llm_calls": 2, "prompt_tokens": 100, "completion_tokens": 10,
         "tags": ["t"]},
        {"id": "b", "db": "x", "correct": True, "first_correct": True, "first_graded_correct": True,
         "grades": [{"verdict": "pass"}], "grader_rounds": 0, "fixer_attempts": 0, "status": "answered",
         "seconds": 3.0, "llm_calls": 1, "prompt_tokens": 50, "completion_tokens": 5, "tags": []},
        {"id": "c", "db": "y", "correct": False, "first_correct": False, "first_graded_correct": True,
         "grades": [{"verdict": "fail"}, {"verdict": "fail"}], "grader_rounds": 1, "fixer_attempts": 1,
         "status": "error", "seconds": 5.0, "llm_calls": 4, "prompt_tokens": 300, "completion_tokens": 30,
         "tags": ["t"]},
    ]
    s = summarize(recs)
    p, g = s["pipeline"], s["grader"]
    assert p["ex"] == 66.7 and p["first_draft_ex"] == 33.3
    assert p["median_s"] == 3.0 and p["p90_s"] == 5.0
    assert p["llm_calls_per_q"] == 2.33 and p["median_llm_calls"] == 2
    assert p["prompt_tokens_per_q"] == 150.0 and p["errors"] == 1 and p["sql_did_not_run"] == 33.3
    assert p["happy_path_llm_calls_max"] == 1
    # Recall: of first results that were wrong (a), the grader failed 1 of 1; false-fail: of right
    # ones (b, c), it failed 1 of 2.
    assert g == {"recall_on_wrong": 100.0, "false_fail_on_right": 50.0, "wrong_first_graded": 1,
                 "right_first_graded": 2}
    assert s["by_db"] == {"x": {"n": 2, "ex": 100.0}, "y": {"n": 1, "ex": 0.0}}
    assert s["by_tag"] == {"t": {"n": 2, "ex": 50.0}}
    md = render_markdown(s, title="t1")
    assert md.startswith("# t1") and "| duckask graph | 66.7 | 3.0 | 5.0 | 2.33 | 150 | 33.3 |" in md
    assert "recall on wrong first results 100.0 % (of 1)" in md
    assert "false-fail on right ones 50.0 % (of 2)" in md
    m, j = write_report(s, tmp_path / "deep" / "rep.md")
    assert m == tmp_path / "deep" / "rep.md" and j == tmp_path / "deep" / "rep.json"
    assert json.loads(j.read_text()) == json.loads(json.dumps(s))
    assert summarize([]) == {"questions": 0}
    assert "Questions: 0" in render_markdown({"questions": 0})


def test_interrupt_with_workers_stops_the_pool(tmp_path, qfile, small_db, env):
    """An interrupt (Ctrl-C, or on_record raising) must not leave the pool answering the questions not
    started yet; the ones in flight finish and are recorded whole, the rest rerun on resume."""
    import time

    def slow(answers):
        inner = router(answers)

        def reply(messages):
            time.sleep(0.3)
            return inner(messages)
        return reply

    llm = ScriptedLLM({"SQLGenerator": slow(GRAPH_SQL)})
    llm.is_endpoint = True
    out = tmp_path / "out.jsonl"
    with pytest.raises(KeyboardInterrupt):
        evaluate(qfile, db=str(small_db), out=out, llm=llm, workers=2, progress=False,
                 on_record=interrupt_after(2, []))
    n_after = len(read_records(out))
    time.sleep(1.0)        # a pool left running would go on writing records now
    recs = read_records(out)
    assert len(recs) == n_after
    assert 2 <= len(recs) < 6
    assert len(lines_of(out)) == len(recs)              # every line a whole record
    assert llm.count("SQLGenerator") == len(recs)
    assert all(r["status"] == "answered" for r in recs)

    df = evaluate(qfile, db=str(small_db), out=out, llm=scripted(), workers=2, progress=False)
    ids = [r["id"] for r in read_records(out)]
    assert sorted(ids) == sorted(ALL_IDS) and len(df) == 6


def test_a_resample_records_each_draft_as_drafted_and_as_run(tmp_path, small_db, env):
    # The first query fails; of the two drafts, one has a misspelt column the vote's free repairs fix.
    q = Question(id="r1", question=HIGH_Q, gold_sql="SELECT name FROM players WHERE points > 25")
    llm = ScriptedLLM({"SQLGenerator": ["SELECT name FROM players WHERE salary > 25",
                                        "SELECT name FROM players WHERE pointz > 25",
                                        "SELECT name FROM players WHERE points > 25"]})
    df = evaluate([q], db=str(small_db), out=tmp_path / "r.jsonl", llm=llm, progress=False, resample_drafts=2)
    rec = df.iloc[0]
    assert rec["correct"] and rec["resampled"]
    drafts = {c["draft"]: c for c in rec["candidates"]}
    repaired = drafts["SELECT name FROM players WHERE pointz > 25"]
    assert repaired["sql"] == "SELECT name FROM players WHERE points > 25" and repaired["status"] == "ok"
    assert repaired["correct"] and drafts["SELECT name FROM players WHERE salary > 25"]["status"] == "error"
