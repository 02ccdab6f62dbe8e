"""Batch evaluation (``duckask eval`` / ``duckask.utils.eval.run.evaluate``) with a ScriptedLLM.

The scripted model maps each question (found in the prompt text) to a fixed SQL string, one map for
the graph's SQLGenerator and one for the single-prompt Baseline, so which answers are right is known
in advance and every accuracy number can be asserted exactly.
"""
# ruff: noqa: F811  (pytest fixtures are imported from eval_support and used as parameters by name)
from __future__ import annotations

import csv
import json
import shutil
import sqlite3
import tempfile
from pathlib import Path

import duckdb
import pytest
import yaml
from conftest import build_small_db
from eval_support import HIGH_Q, ROWS, TEAMS_Q, env, no_real_model, qfile, router, scripted, write_jsonl  # noqa: F401 (fixtures are used by name)

from duckask.utils.app.cli import main as cli_main
from duckask.utils.eval import run as evaluation
from duckask.utils.eval.questions import Question, load_questions, read_ids, resolve_db, select
from duckask.utils.eval.records import read_records
from duckask.utils.eval.run import evaluate
from duckask.utils.llm import ScriptedLLM


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


def test_an_answer_with_context_columns_holds_and_rescore_scores_old_records(tmp_path, small_db, env):
    """Issue 53's ruler: the gold returns the team beside the player; an answer naming only the player is wrong by
    strict EX and holds what was asked; ``duckask eval --rescore`` adds ``holds`` to records of an earlier run
    (here written without it) and to the report, asking nothing."""
    qf = tmp_path / "q.yaml"
    gold = ("SELECT p.name, t.name AS team FROM players p JOIN teams t ON t.id = p.team_id "
            "ORDER BY p.points DESC LIMIT 1")
    qf.write_text(yaml.safe_dump([{"id": "a1", "question": "Who scored the most points?", "gold_sql": gold,
                                   "answer_columns": ["name"]}]))
    llm = ScriptedLLM({"SQLGenerator": ["SELECT name FROM players ORDER BY points DESC LIMIT 1"] * 4})
    out = tmp_path / "out.jsonl"
    df = evaluate(qf, db=str(small_db), out=out, llm=llm, progress=False)
    assert df.iloc[0]["correct"] is False or not df.iloc[0]["correct"]
    assert bool(df.iloc[0]["holds"]) and df.attrs["summary"]["pipeline"]["holds"] == 100.0
    records = read_records(out)
    for r in records:
        r.pop("holds")
    out.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert cli_main(["eval", str(qf), "--db", str(small_db), "--out", str(out), "--report", str(tmp_path / "rep"),
                     "--rescore", "--json"]) == 0
    assert read_records(out)[0]["holds"] is True
    assert json.loads((tmp_path / "rep.json").read_text())["pipeline"]["holds"] == 100.0
