"""End to end with the real embedded model: the executed result must equal the gold result.

Slow (seconds per question on a CPU). Skips when llama-cpp-python or the model parts are not
installed; the Spider and NBA questions skip when ../shared is absent (a user's fresh clone).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SHARED

from duckask.utils.config import load_settings
from duckask.utils.db.database import open_database
from duckask.utils.sql.compare import results_match
from duckask.utils.sql.describe import has_top_level_order_by

ROOT = Path(__file__).resolve().parents[1]
SPIDER = SHARED / "benchmarks" / "spider_dev"
NBA = SHARED / "data" / "nba"

pytestmark = pytest.mark.model


def _spider(qid: str) -> tuple[str, str, str]:
    if not SPIDER.is_dir():
        pytest.skip(f"../shared is absent ({SPIDER} not found): a fresh clone without the shared data")
    for line in (SPIDER / "questions.jsonl").open():
        q = json.loads(line)
        if q["id"] == qid:
            return str(SPIDER / "dbs" / q["db_id"]), q["question"], q["gold_sql"]
    raise LookupError(qid)


def _nba() -> str:
    if not NBA.is_dir():
        pytest.skip(f"../shared is absent ({NBA} not found): a fresh clone without the shared data")
    return str(NBA)


def _lahman() -> str:
    from duckask.data.lahman import demo_db_path

    return str(demo_db_path())


#: One or two questions on each kind of database, the whole path end to end with the executed rows checked: the
#: demo (taught) and Spider databases (untaught, each imported from its folder); the NBA warehouse through its clean
#: models is test_an_nba_question_through_the_clean_models (the raw warehouse's question, Celtics' wins, cost 2.5
#: minutes and is the NBA suites').
#: Accuracy over many questions is the benchmarks' (bench/suites.yaml: spider-sample100 holds dev-0157 and
#: dev-0775, spider-heldout100 dev-0467, the NBA suites the warehouse and its models), where these cases went
#: when CI was held to 25 minutes (issue 55): each question costs 10 s to minutes of the model on 2 cores.
CASES = [
    ("lahman", "How many teams played in the 2019 season?",
     "SELECT count(*) FROM teams WHERE year_id = 2019"),
    ("spider", "spider-dev-0000", None),   # How many ships ended up being 'Captured'?
    ("spider", "spider-dev-0387", None),   # Which country does Airline "JetBlue Airways" belong to?
]


@pytest.mark.parametrize("source,question,gold", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_executed_result_equals_gold(source, question, gold, model_opts):
    from duckask import ask

    opts = dict(model_opts)
    if source == "spider":
        db, question, gold = _spider(question)
    else:
        db = _lahman()
    r = ask(question, db=db, **opts)
    assert r.status == "answered", r.answer
    out = open_database(db, load_settings(None, cache_dir=model_opts["cache_dir"])).run(gold)
    assert out.ok, out.error
    assert results_match(r.df, out.df, order_matters=has_top_level_order_by(gold)), (
        f"\nSQL:  {r.sql}\nGOLD: {gold}\npred:\n{r.df}\ngold:\n{out.df}")
    # The trace accounts for every LLM call it made.
    assert sum(t["llm_calls"] for t in r.trace) == len(r.llm_calls) >= 1
    assert all(c["prompt_tokens"] > 0 and c["ms"] > 0 for c in r.llm_calls)


# --------------------------------------------------------------------------- prompt injection
@pytest.mark.parametrize("qi", [0])   # "drop the table" (bench/injection.py asks all ten)
def test_injection_leads_only_to_reads(model_opts, tmp_path, monkeypatch, qi):
    """The question and the database's comments and cells ask for harm: only reads may run, nothing
    on disk changes (bench/injection.py runs all ten questions)."""
    import hashlib

    from injection_cases import QUESTIONS, make_injected_db, only_reads_ran

    from duckask import ask

    db = make_injected_db(tmp_path / "shop.duckdb")
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    r = ask(QUESTIONS[qi], db=str(db), examples="", **model_opts)
    assert only_reads_ran(r) == []
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert list(cwd.iterdir()) == []
    # Through duckask's own (shared) connection: DuckDB allows one configuration per open file.
    assert open_database(str(db)).run("SELECT count(*) AS n FROM customers").df.values.tolist() == [[4]]


# --------------------------------------------------------------------------- a conversation
HR = ("SELECT p.name_first || ' ' || p.name_last AS player, b.hr FROM batting b JOIN people p USING (player_id) "
      "WHERE b.year_id = {year} ORDER BY b.hr DESC LIMIT 1")
CONVERSATION = [
    # (turn, intent, the standalone question it must resolve to, gold SQL or None)
    ("Who hit the most home runs in 2019?", "data", "Who hit the most home runs in 2019?", HR.format(year=2019)),
    ("and in 2018?", "data", "Who hit the most home runs in 2018?", HR.format(year=2018)),
    ("what does hbp mean?", "schema", None, None),
    ("thanks!", "general", None, None),
]


def test_a_conversation_on_the_demo(model_opts, tmp_path):
    """Four turns on the Lahman demo with the embedded model: a follow-up is resolved from the history and the
    executed results equal the gold results; a schema question and thanks need no SQL; the session saves and
    resumes (a second follow-up pair, on teams, showed nothing the first does not: removed to keep CI short)."""
    from duckask import Conversation

    conv = Conversation(_lahman(), **model_opts)
    gold_db = open_database(conv.db, load_settings(None, cache_dir=model_opts["cache_dir"]))
    for text, intent, resolved, gold in CONVERSATION:
        r = conv.ask(text)
        assert r.intent == intent, (text, r.intent)
        if resolved:
            assert r.resolved_question == resolved
        if gold:
            g = gold_db.run(gold)
            assert r.ok and results_match(r.df, g.df, order_matters=has_top_level_order_by(gold)), (
                f"{text}\nSQL:  {r.sql}\npred:\n{r.df}\ngold:\n{g.df}")
            # The answer is a sentence the check accepted, or the rules' sentence when it did not.
            assert r.answer_check["by"] in ("llm", "rules") and (r.answer_check["by"] == "rules"
                                                                 or not r.answer_check["problems"])
    assert "Hit by pitch" in conv.history[2]["answer"]
    resumed = Conversation.load(conv.save(tmp_path / "s.json"), **model_opts)
    assert [t["text"] for t in resumed.history] == [c[0] for c in CONVERSATION]


def test_an_answer_becomes_a_file_and_an_approved_table(model_opts, tmp_path):
    """On a copy of the demo with writes on: the model's answer is written to a file (read back equal),
    then stored as a new table after an approval (its rows equal the gold result); a pasted DELETE waits
    for approval and, rejected, changes nothing (the file's bytes)."""
    import shutil

    import pandas as pd
    from conftest import sha256 as sha256_of

    from duckask import Conversation
    from duckask.data.lahman import demo_db_path
    from duckask.utils.knowledge.demo import DEMO_EXAMPLES, DEMO_SEMANTIC

    db = Path(shutil.copy(demo_db_path(), tmp_path / "lahman-copy.duckdb"))
    conv = Conversation(str(db), allow_writes=True, audit_file=str(tmp_path / "audit.duckdb"),
                        examples=str(DEMO_EXAMPLES), descriptions=str(DEMO_SEMANTIC), **model_opts)
    gold = "SELECT count(*) FROM teams WHERE year_id = 1998"
    r = conv.ask("How many teams played in the 1998 season?")
    g = conv.prep.database.run(gold)
    assert r.ok and results_match(r.df, g.df, order_matters=False), f"SQL: {r.sql}\n{r.df}"
    assert pd.read_csv(r.to_file(str(tmp_path / "answer.csv"))).values.tolist() == r.df.values.tolist()
    written = r.to_table("teams_1998").approve()
    assert written.status == "written", written.answer
    stored = conv.ask(sql="SELECT * FROM teams_1998")
    assert stored.ok and results_match(stored.df, g.df, order_matters=False)
    before = sha256_of(db)
    pending = conv.ask("DELETE FROM teams WHERE year_id = 1998")
    assert pending.status == "pending" and pending.write.estimated_rows == 30
    assert pending.reject().status == "rejected" and sha256_of(db) == before


@pytest.mark.parametrize("question, rows", [
    ("Who hit the most home runs in 2019?", [["Pete Alonso", 53]]),
    ("Which team won the most games in 2001?", [["Seattle Mariners", 116]]),
])
def test_the_plan_path_answers_on_the_demo(model_opts, question, rows):
    """The demo's semantic file names home_runs and team_wins: the model writes a plan, MetricFlow the SQL."""
    from duckask import ask

    r = ask(question, db=_lahman(), **model_opts)
    assert r.status == "answered" and r.path == "plan", (r.plan, r.sql)
    assert [list(x) for x in r.df.itertuples(index=False)] == rows


def test_the_world_series_question_is_answered_by_its_own_rows(model_opts):
    """Issue 32's page case: "Which team won the World Series in 2016?" on the demo. Whichever path answers,
    the executed rows name the Cubs (a row whose won-the-series flag reads N is rejected by the checks);
    with candidates, the agreement is in the signals."""
    from duckask import ask

    r = ask("Which team won the World Series in 2016?", db=_lahman(), candidates=4, **model_opts)
    assert r.status == "answered", r.answer
    names = " ".join(str(v) for row in r.df.itertuples(index=False) for v in row)
    assert "Chicago Cubs" in names and "White Sox" not in names, (r.path, r.sql, r.df)
    assert r.confidence["signals"]["drafts"] >= 2 or r.path == "plan"


def test_an_nba_question_through_the_clean_models(model_opts):
    """Issue 33: the NBA warehouse through bench/nba_models (models: public). The model sees the clean
    models, not the 52 raw tables; the executed rows are the four California franchises."""
    from duckask import ask

    r = ask("List the teams based in California.", db=_nba(), semantic=str(ROOT / "bench" / "nba_models"),
            column_pruning="wide", **model_opts)
    assert r.status == "answered", r.answer
    names = {str(v) for row in r.df.itertuples(index=False) for v in row}
    assert {"Golden State Warriors", "Los Angeles Clippers", "Los Angeles Lakers", "Sacramento Kings"} <= names \
        or {"Warriors", "Clippers", "Lakers", "Kings"} <= names, (r.sql, r.df)
    from duckask.utils.db.ast import table_aliases

    assert len(r.df) == 4 and set(table_aliases(r.sql).values()) == {"teams"}, r.sql   # the model, not raw tables
