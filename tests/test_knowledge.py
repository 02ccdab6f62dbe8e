"""Example memory: example files, verification, the per-database store, retrieval, and how the pairs
reach TableSelector and SQLGenerator (scripted LLM, the small teams/players/arenas database)."""
from __future__ import annotations

import json

import duckdb
import pytest
from conftest import build_small_db, sha256

from duckask.nodes.table_selector import _rank
from duckask.utils.api import ask
from duckask.utils.app.cli import main as cli_main
from duckask.utils.config import load_settings
from duckask.utils.db.database import open_database
from duckask.utils.knowledge import Example, ExampleError, KnowledgeStore, database_identity, examples_for, teach
from duckask.utils.knowledge.examples import load_examples, tables_of, verify
from duckask.utils.knowledge.retrieve import retrieve
from duckask.utils.llm import ScriptedLLM
from duckask.utils.semantic import get_catalog
from duckask.utils.writes.audit import os_user

CAPACITY_Q = "What is the capacity of the arena of the Celtics?"
CAPACITY_SQL = ("SELECT a.name, a.capacity FROM arenas a JOIN teams t ON a.team_id = t.id "
                "WHERE t.name = 'Celtics'")
EXAMPLES = [
    Example("How many points did LeBron James score?", "SELECT points FROM players WHERE name = 'LeBron James'", "e1"),
    Example("Which arena has the largest capacity?", "SELECT name FROM arenas ORDER BY capacity DESC LIMIT 1", "e2"),
    Example("List the teams of Boston", "SELECT name FROM teams WHERE city = 'Boston'", "e3"),
]


# --------------------------------------------------------------------------- retrieval
@pytest.mark.parametrize("question, best", [
    ("How many points did Anthony Davis score?", "e1"),
    ("Which arena has the smallest capacity?", "e2"),
    ("Show the teams in Chicago", "e3"),
])
def test_the_most_similar_pair_wins(question, best):
    got = retrieve(question, EXAMPLES, k=3, threshold=0.0)
    assert got[0][0].id == best
    assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)


def test_a_pair_is_found_by_the_names_its_sql_reads():
    # The pair's question says neither "arena" nor "capacity"; its SQL reads arenas.capacity, and that counts.
    pairs = [Example("Which venue is the largest?", "SELECT name FROM arenas ORDER BY capacity DESC LIMIT 1", "venue"),
             Example("List the teams of Boston", "SELECT name FROM teams WHERE city = 'Boston'", "teams")]
    got = retrieve("What is the capacity of each arena?", pairs, k=3, threshold=0.3)
    assert [ex.id for ex, _ in got] == ["venue"]


def test_the_threshold_and_k_hold():
    assert retrieve("What is the weather in Paris tomorrow?", EXAMPLES, k=3, threshold=0.3) == []
    assert len(retrieve("points capacity teams arena", EXAMPLES, k=1, threshold=0.0)) == 1
    assert retrieve("anything", [], k=3) == []
    # Deterministic: the same question gives the same pairs, in the same order.
    q = "Which arena of Boston has the most points?"
    assert retrieve(q, EXAMPLES, 3, 0.0) == retrieve(q, EXAMPLES, 3, 0.0)


# --------------------------------------------------------------------------- files and verification
def test_example_files_yaml_and_jsonl(tmp_path):
    y = tmp_path / "ex.yaml"
    y.write_text("examples:\n  - question: Which arena is biggest?\n    sql: SELECT name FROM arenas;\n")
    [ex] = load_examples(y)
    assert (ex.question, ex.sql, ex.tables, ex.id) == ("Which arena is biggest?", "SELECT name FROM arenas",
                                                      ["arenas"], "ex.yaml:1")
    j = tmp_path / "ex.jsonl"
    j.write_text(json.dumps({"question": "q", "sql": "SELECT 1 FROM teams"}) + "\n\n")
    assert [e.tables for e in load_examples(j)] == [["teams"]]


@pytest.mark.parametrize("text, message", [
    ("- question: ok\n  sql: SELECT 1\n- question: no sql here\n", "line 3: each example needs a question and its sql"),
    ("question: [unclosed\n", "not valid YAML"),
    ("just: a mapping\n", "expected a list"),
])
def test_a_malformed_examples_file_is_a_clear_error_naming_the_line(tmp_path, text, message):
    p = tmp_path / "bad.yaml"
    p.write_text(text)
    with pytest.raises(ExampleError, match=message):
        load_examples(p)


def test_tables_of_leaves_out_ctes():
    sql = "WITH top AS (SELECT * FROM players) SELECT t.name FROM top JOIN teams t ON top.team_id = t.id"
    assert tables_of(sql) == ["players", "teams"]


@pytest.mark.parametrize("question, sql, reason", [
    ("Drop it", "DROP TABLE teams", "does not run \\(refused\\)"),
    ("Missing", "SELECT * FROM nope", "does not run \\(error\\)"),
    ("Nothing", "SELECT name FROM teams WHERE false", "returns no rows"),
    ("", "SELECT 1", "the question is empty"),
    ("No SQL", "  ", "no SQL"),
])
def test_a_bad_pair_is_refused_with_a_clear_reason(small_db, settings, question, sql, reason):
    with pytest.raises(ExampleError, match=reason):
        verify(open_database(small_db, settings), question, sql)


# --------------------------------------------------------------------------- the store
def test_teach_list_remove_round_trip_and_pairs_never_cross_databases(small_db, settings, tmp_path):
    other = build_small_db(tmp_path / "other.duckdb")
    before = sha256(small_db)
    ex = teach(CAPACITY_Q, CAPACITY_SQL, str(small_db), settings)
    assert ex.tables == ["arenas", "teams"] and ex.id
    teach("How many teams are there?", "SELECT count(*) FROM teams", str(other), settings)
    store = KnowledgeStore(settings.resolved_knowledge_file)
    mine, theirs = store.list(database_identity(small_db)), store.list(database_identity(other))
    assert [e.question for e in mine] == [CAPACITY_Q]
    assert [e.question for e in theirs] == ["How many teams are there?"]
    # Teaching the same question again replaces its SQL, keeping one pair.
    again = teach(CAPACITY_Q.upper(), CAPACITY_SQL + " LIMIT 1", str(small_db), settings)
    assert again.id == ex.id and len(store.list(database_identity(small_db))) == 1
    assert store.remove(database_identity(other), int(ex.id)) is False     # not that database's pair
    assert store.remove(database_identity(small_db), int(ex.id)) is True
    assert store.list(database_identity(small_db)) == []
    # The store is a file of its own: the user's database is never written.
    assert sha256(small_db) == before
    assert settings.resolved_knowledge_file.parent == settings.resolved_cache_dir


def test_cli_teach_examples_and_remove(small_db, isolated_env, capsys):
    assert cli_main(["teach", "--db", str(small_db), CAPACITY_Q, CAPACITY_SQL, "--json"]) == 0
    stored = json.loads(capsys.readouterr().out)
    assert cli_main(["examples", "--db", str(small_db), "--json"]) == 0
    assert [e["question"] for e in json.loads(capsys.readouterr().out)] == [CAPACITY_Q]
    assert cli_main(["teach", "--db", str(small_db), "Bad", "DELETE FROM teams"]) == 1
    assert "not stored" in capsys.readouterr().err
    assert cli_main(["examples", "--db", str(small_db), "--remove", "999"]) == 1
    assert cli_main(["examples", "--db", str(small_db), "--remove", stored["id"]]) == 0
    assert cli_main(["examples", "--db", str(small_db)]) == 0
    assert "no examples" in capsys.readouterr().err


# --------------------------------------------------------------------------- into the graph
def test_examples_reach_the_prompt_after_the_schema_and_the_result(small_db, isolated_env, tmp_path):
    f = tmp_path / "ex.yaml"
    f.write_text(f"- question: {CAPACITY_Q}\n  sql: \"{CAPACITY_SQL}\"\n"
                 "- question: How many players are there?\n  sql: SELECT count(*) FROM players\n")
    llm = ScriptedLLM({"SQLGenerator": ["SELECT a.capacity FROM arenas a JOIN teams t ON a.team_id = t.id "
                                        "WHERE t.name = 'Lakers'"]})
    r = ask("What is the capacity of the arena of the Lakers?", db=str(small_db), llm=llm, examples=str(f),
            templates="off")
    prompt = llm.calls[0]["messages"][-1]["content"]
    assert prompt.index("Schema:") < prompt.index(CAPACITY_SQL) < prompt.index("Question: What is the capacity")
    assert "count(*) FROM players" not in prompt          # below the similarity threshold
    assert r.ok and r.df.values.tolist() == [[19068]]
    assert [e["question"] for e in r.to_dict()["examples"]] == [CAPACITY_Q]
    # With templates on, the Lakers are put in the Celtics' place in the pair's SQL: no model call at all.
    r = ask("What is the capacity of the arena of the Lakers?", db=str(small_db), llm=ScriptedLLM({}),
            examples=str(f))
    assert r.path == "template" and not r.llm_calls and r.df.values.tolist()[0][-1] == 19068
    assert r.template["slots"] == [{"kept": "Celtics", "asked": "Lakers"}] and "'Lakers'" in r.sql
    assert r.derivation.startswith("From the kept pair #ex.yaml:1 ")


def test_without_examples_the_prompt_is_unchanged(small_db, isolated_env):
    llm = ScriptedLLM({"SQLGenerator": ["SELECT count(*) FROM teams"]})
    r = ask("How many teams are there?", db=str(small_db), llm=llm)
    assert "Examples of questions" not in llm.calls[0]["messages"][-1]["content"]
    assert r.to_dict()["examples"] == []


def test_a_bad_pair_in_an_examples_file_names_the_pair(small_db, isolated_env, tmp_path):
    f = tmp_path / "ex.yaml"
    f.write_text("- question: Fine\n  sql: SELECT 1 FROM teams\n- question: Broken\n  sql: SELECT nope FROM teams\n")
    with pytest.raises(ExampleError, match="ex.yaml:2: .*Broken.*fix or remove this pair"):
        examples_for(open_database(small_db, load_settings(None)), load_settings(None, examples=str(f)))


def test_example_tables_are_a_ranking_signal(small_db, settings):
    cat = get_catalog(open_database(small_db, settings), settings)
    question = "What is the seating of the Lakers venue?"
    plain = {r.table: r.score for r in _rank(cat, question, [])["ranked"]}
    ex = Example(CAPACITY_Q, CAPACITY_SQL, "7", tables=["arenas", "teams"])
    boosted = {r.table: r for r in _rank(cat, question, [(ex, 0.5)])["ranked"]}
    assert boosted["arenas"].score == pytest.approx(plain["arenas"] + 3.0)
    assert "example 7" in boosted["arenas"].reasons and boosted["players"].score == plain["players"]


def test_save_as_example_from_a_result(small_db, isolated_env):
    llm = ScriptedLLM({"SQLGenerator": [CAPACITY_SQL]})
    r = ask(CAPACITY_Q, db=str(small_db), llm=llm)
    ex = r.save_as_example()
    assert ex.question == CAPACITY_Q and ex.sql == CAPACITY_SQL
    worded = "What is the capacity of the arena of the Celtics, please?"
    again = ask(worded, db=str(small_db), llm=ScriptedLLM({}))         # the same question worded otherwise
    assert again.path == "template" and again.template["reach"] == "paraphrase" and not again.llm_calls
    assert again.template["pair"]["id"] == ex.id and again.confidence["level"] == "medium"
    assert again.derivation.startswith(f"From the kept pair #{ex.id} (kept by {os_user()}) ({CAPACITY_Q!r}) asked in "
                                       "other words, as kept.")
    shown = ask(worded, db=str(small_db), llm=ScriptedLLM({"SQLGenerator": [CAPACITY_SQL]}), templates="words")
    assert [e["id"] for e in shown.examples] == [ex.id]                # word for word only: a few-shot example


def test_the_store_tolerates_a_missing_file_and_is_a_duckdb_file(settings):
    store = KnowledgeStore(settings.resolved_cache_dir / "sub" / "k.duckdb")
    assert store.list("x") == [] and store.remove("x", 1) is False
    store.add("x", Example("q", "SELECT 1", tables=[]))
    with duckdb.connect(str(store.path), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM examples").fetchone()[0] == 1


def test_the_demo_is_taught_unless_told_otherwise(isolated_env):
    from duckask.data.lahman import DEFAULT_PATH
    from duckask.utils.knowledge.demo import DEMO_EXAMPLES

    if not DEFAULT_PATH.exists():
        pytest.skip("the demo database is not built (python -m duckask.data.lahman)")
    assert all(e.tables for e in load_examples(DEMO_EXAMPLES))
    sql = "SELECT name_first FROM people LIMIT 1"
    llm = ScriptedLLM({"SQLGenerator": [sql]})
    r = ask("Who hit the most home runs in a single season?", str(DEFAULT_PATH), llm=llm, templates="off")

    def generator_prompt(llm):
        return next(c for c in llm.calls if c["node"] == "SQLGenerator")["messages"][-1]["content"]

    # Its pairs and its semantic file's instructions both reach the model ...
    assert r.examples and "Examples of questions" in generator_prompt(llm)
    assert "Name a person as one column" in generator_prompt(llm)
    # ... and "" turns either off.
    llm = ScriptedLLM({"SQLGenerator": [sql]})
    r = ask("Who hit the most home runs in a single season?", str(DEFAULT_PATH), llm=llm, examples="",
            descriptions="")
    assert not r.examples and "Examples of questions" not in generator_prompt(llm)
    assert "Name a person as one column" not in generator_prompt(llm)
    # With templates on (the default), the demo's own question is its kept pair's: no model call writes SQL.
    r = ask("Who hit the most home runs in a single season?", str(DEFAULT_PATH), llm=ScriptedLLM({}))
    assert r.path == "template" and r.template["exact"] and not r.llm_calls
    assert r.df.iloc[0].tolist() == ["Barry Bonds", 2001, 73] and r.confidence["level"] == "high"


def test_the_demo_knowledge_stays_with_the_demo(tmp_path, isolated_env):
    from duckask.utils.config import load_settings
    from duckask.utils.knowledge.demo import DEMO_EXAMPLES, DEMO_SEMANTIC, demo_knowledge

    s = load_settings(None)
    other = tmp_path / "other.duckdb"
    assert demo_knowledge(s, other) == s
    demo_db = DEMO_EXAMPLES.parent / "lahman.duckdb"
    demo = demo_knowledge(s, demo_db)
    assert (demo.examples, demo.descriptions) == (str(DEMO_EXAMPLES), str(DEMO_SEMANTIC))
    mine = demo_knowledge(load_settings(None, descriptions="mine.yaml", examples=""), demo_db)
    assert (mine.examples, mine.descriptions) == ("", "mine.yaml")
    link = tmp_path / "linked"                  # the demo reached through a link (a linked checkout) is the demo
    link.symlink_to(DEMO_EXAMPLES.parent, target_is_directory=True)
    assert demo_knowledge(s, link / "lahman.duckdb").examples == str(DEMO_EXAMPLES)


def test_the_demo_semantic_file_applies_to_the_demo(isolated_env):
    from duckask.data.lahman import DEFAULT_PATH
    from duckask.utils.knowledge.demo import DEMO_SEMANTIC
    from duckask.utils.semantic.descriptions import apply_descriptions

    if not DEFAULT_PATH.exists():
        pytest.skip("the demo database is not built (python -m duckask.data.lahman)")
    cat = apply_descriptions(get_catalog(str(DEFAULT_PATH)), DEMO_SEMANTIC)
    assert "CAN" in cat.tables["people"].column("birth_country").comment
    assert {m.name for m in cat.metrics} >= {"batting_average", "innings_pitched"}


def _damage(path, how: str) -> bytes:
    """Garbage bytes for the whole file, or a real store with a block's bytes overwritten (its header intact)."""
    if how == "garbage":
        path.write_bytes(b"not a database " * 400)
    else:
        KnowledgeStore(path).add("x", Example("q", "SELECT 1", tables=[]))
        data = bytearray(path.read_bytes())
        data[4096:8192] = b"\xff" * 4096
        path.write_bytes(bytes(data))
    return path.read_bytes()


@pytest.mark.parametrize("how", ["garbage", "damaged block"])
def test_a_damaged_knowledge_store_is_set_aside_and_ask_still_answers(small_db, isolated_env, tmp_path, capsys, how):
    """It used to make every ask fail with a traceback. Now: moved to <file>.corrupt-<time> with its bytes as they
    were, a warning naming both paths, the question answered, and teaching starts a new, empty store."""
    store = tmp_path / "knowledge.duckdb"
    damaged = _damage(store, how)
    r = ask("How many teams are there?", db=str(small_db), knowledge_file=str(store),
            llm=ScriptedLLM({"SQLGenerator": ["SELECT count(*) FROM teams"]}))
    assert r.ok and r.df.values.tolist() == [[3]]
    [aside] = tmp_path.glob("knowledge.duckdb.corrupt-*")
    assert aside.read_bytes() == damaged and not store.exists()
    err = capsys.readouterr().err
    assert f"the knowledge store {store} is damaged" in err and f"moved to {aside}" in err
    settings = load_settings(None, knowledge_file=str(store))
    teach(CAPACITY_Q, CAPACITY_SQL, str(small_db), settings)
    assert [e.question for e in KnowledgeStore(store).list(database_identity(small_db))] == [CAPACITY_Q]
    assert aside.read_bytes() == damaged                         # still there, untouched


def test_teaching_into_a_damaged_store_sets_it_aside_and_keeps_the_pair(small_db, isolated_env, tmp_path, capsys):
    store = tmp_path / "knowledge.duckdb"
    damaged = _damage(store, "garbage")
    settings = load_settings(None, knowledge_file=str(store))
    ex = teach(CAPACITY_Q, CAPACITY_SQL, str(small_db), settings)
    assert [e.id for e in KnowledgeStore(store).list(database_identity(small_db))] == [ex.id]
    [aside] = tmp_path.glob("knowledge.duckdb.corrupt-*")
    assert aside.read_bytes() == damaged and f"moved to {aside}" in capsys.readouterr().err
    assert KnowledgeStore(aside).path.exists()                   # nothing was deleted


def test_a_busy_or_newer_store_is_not_taken_for_damaged():
    """Only DuckDB's words for a damaged file set a file aside: a lock held by another process is not damage."""
    from duckask.utils.damaged import is_damaged

    assert is_damaged(duckdb.IOException('IO Error: The file "k" exists, but it is not a valid DuckDB database file!'))
    assert is_damaged(duckdb.Error("Corrupt database file: computed checksum 1 does not match stored checksum 2"))
    assert not is_damaged(duckdb.IOException('IO Error: Could not set lock on file "k": Conflicting lock is held'))
    assert not is_damaged(duckdb.IOException("IO Error: Trying to read a database file with version number 99"))
    assert not is_damaged(OSError("Corrupt database file"))


def test_result_fix_keeps_the_right_sql_and_the_next_question_like_it_uses_it(small_db, isolated_env, tmp_path):
    import shutil

    db = str(shutil.copy(small_db, tmp_path / "fix.duckdb"))
    wrong = "SELECT name, points FROM players ORDER BY points DESC"
    r = ask("What are the points of Lakers players?", db=db, llm=ScriptedLLM({"SQLGenerator": [wrong] * 6}))
    with pytest.raises(ExampleError, match="returns no rows"):
        r.fix("SELECT name FROM players WHERE points > 99")            # nothing kept
    with pytest.raises(ExampleError, match="needs the SQL"):
        r.fix("  ")
    ex = r.fix("SELECT p.name, p.points FROM players p JOIN teams t ON p.team_id = t.id WHERE t.name = 'Lakers'")
    assert ex.id and ex.question == "What are the points of Lakers players?"
    nxt = ask("What are the points of Bulls players?", db=db, llm=ScriptedLLM({}))
    assert nxt.path == "template" and nxt.df.values.tolist() == [["Zach LaVine", 24]] and not nxt.llm_calls
    assert nxt.template["pair"]["id"] == ex.id
