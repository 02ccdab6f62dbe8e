"""``duckask learn`` (issue 63): synthesized SQL from the catalog, keys and values; a question written from it; kept
only when the question reads back to the same rows; a resumable store kept apart from taught pairs; shown as
examples after the taught ones and never as a template. The model is scripted here (the real one: bench)."""
from __future__ import annotations

import json

import pandas as pd
import pytest
from conftest import build_small_db, duckdb_file

from duckask.utils import api
from duckask.utils.api import ask, prepare
from duckask.utils.app import learn as learning
from duckask.utils.db.outcome import QueryOutcome
from duckask.utils.knowledge.learned import LearnedStore, learned_for, learned_path
from duckask.utils.knowledge.synth import MOST_ROWS, ORDER, PER_ROUND, drafts, implausible
from duckask.utils.llm import ScriptedLLM

QUESTION_ASKED = "The question a user would ask"


def scripted(questions: dict[str, str] | None = None, wrong_back: bool = False) -> ScriptedLLM:
    """A model that writes a question for each draft (``questions[sql]``, else "which answer is number N?") and reads
    it back to that draft's own SQL (or, with ``wrong_back``, to a constant)."""
    asked: dict[str, str] = {}

    def reply(messages):
        user = messages[-1]["content"]
        if QUESTION_ASKED in user:
            sql = user.split("SQL: ", 1)[1].split("\n", 1)[0]
            q = (questions or {}).get(sql) or f"which answer is number {len(asked) + 1}?"
            asked[q] = sql
            return q
        question = user.rsplit("Question: ", 1)[1].split("\n", 1)[0]
        return "SELECT 42 AS n" if wrong_back else asked.get(question, "SELECT 1")
    return ScriptedLLM({"Learn": reply})


def small(tmp_path):
    return build_small_db(tmp_path / "teams.duckdb")


def test_drafts_follow_the_keys_use_values_of_the_data_and_cover_every_table_first(tmp_path, isolated_env):
    prep = prepare(str(small(tmp_path)), llm=ScriptedLLM({}))
    ds = drafts(prep.catalog, learning.distinct_counts(prep.database, prep.catalog, float("inf")))
    assert {d.kind for d in ds} <= set(ORDER)
    joins = [d for d in ds if d.kind.startswith("join")]
    assert joins and all("JOIN teams AS p ON c.team_id = p.id" in d.sql for d in joins)   # only along the keys
    lookups = [d for d in ds if d.kind == "lookup"]
    samples = {s for t in prep.catalog.tables.values() for c in t.columns for s in c.samples}
    assert lookups and all(d.sql.rsplit("'", 2)[1] in samples for d in lookups)   # a literal found in the data
    first_round = [d.tables[0] for d in ds[: PER_ROUND * len(prep.catalog.tables)]]
    assert set(first_round) == set(prep.catalog.tables)       # every table before any table's next round
    assert len({d.sql for d in ds}) == len(ds)
    for d in ds:
        assert prep.database.run(d.sql).ok, d.sql


def test_duckdb_forms_are_drafted_where_the_data_has_lists_structs_and_wide_tables(tmp_path, isolated_env):
    db = duckdb_file(tmp_path / "forms.duckdb",
                     "CREATE TABLE people (name VARCHAR, tags VARCHAR[], home STRUCT(city VARCHAR, zip VARCHAR), "
                     "addr_street VARCHAR, addr_city VARCHAR, addr_zip VARCHAR, phone VARCHAR, email VARCHAR, "
                     "signed_up DATE, spend DOUBLE)",
                     "INSERT INTO people SELECT 'p' || i, ['a', 'b'][1:(i % 2) + 1], {'city': 'c' || (i % 3), "
                     "'zip': 'z'}, 's' || i, 'c' || (i % 3), 'z' || i, 'ph' || i, 'e' || i, "
                     "DATE '2024-01-01' + i::INTEGER, i * 1.5 FROM range(40) t(i)")
    prep = prepare(str(db), llm=ScriptedLLM({}))
    ds = drafts(prep.catalog, learning.distinct_counts(prep.database, prep.catalog, float("inf")))
    kinds = {d.kind: d.sql for d in ds}
    assert {"list_len", "unnest", "struct_field", "columns_regex", "exclude", "by_month"} <= set(kinds)
    assert "COLUMNS('^addr_')" in kinds["columns_regex"] and "home.city" in kinds["struct_field"]
    for kind in ("list_len", "unnest", "struct_field", "columns_regex", "exclude", "by_month"):
        assert implausible(prep.database.run(kinds[kind]), kind) is None, kinds[kind]


@pytest.mark.parametrize(("outcome", "kind", "why"), [
    (QueryOutcome("x", "error", error="Binder Error: no such column"), "top", "did not run"),
    (QueryOutcome("x", "ok", pd.DataFrame({"n": []})), "top", "no rows"),
    (QueryOutcome("x", "ok", pd.DataFrame({"n": [None, None]})), "top", "only NULLs"),
    (QueryOutcome("x", "ok", pd.DataFrame({"n": range(MOST_ROWS + 1)})), "group", "a dump"),
    (QueryOutcome("x", "ok", pd.DataFrame({"n": [0]})), "count", "counts nothing"),
])
def test_a_result_that_is_no_example_is_refused_with_its_reason(outcome, kind, why):
    assert why in implausible(outcome, kind)


def test_learn_keeps_what_reads_back_refuses_the_rest_and_resumes(tmp_path, isolated_env, monkeypatch):
    db = str(small(tmp_path))
    monkeypatch.setattr(api, "get_llm", lambda settings=None: scripted())
    lines = []
    first = learning.learn(db, limit=4, progress=lambda r, line: lines.append(line))
    assert first.tried == 4 and first.stopped == "limit" and len(lines) == 4
    prep = prepare(db, llm=ScriptedLLM({}))
    store = LearnedStore(learned_path(prep.database, prep.settings))
    assert len(store.records()) == 4
    kept = store.kept()
    assert kept and all(r["question"] and r["read_back"] for r in kept)
    assert oct(store.path.stat().st_mode & 0o777) == "0o600"
    second = learning.learn(db)                               # resumes: the four already tried are not tried again
    assert second.tried_before == 4 and second.tried == second.drafts - 4 and second.stopped == ""
    assert len(store.records()) == second.drafts
    assert first.read_back_share is not None and second.kept_total == len(store.kept())


def test_a_question_that_reads_back_to_other_rows_is_not_kept(tmp_path, isolated_env, monkeypatch):
    db = str(small(tmp_path))
    monkeypatch.setattr(api, "get_llm", lambda settings=None: scripted(wrong_back=True))
    report = learning.learn(db, limit=5)
    assert report.kept == 0 and report.refused.get("read back to other rows", 0) >= 4
    assert report.read_back_share == 0.0


def test_a_question_that_names_a_table_is_no_question(tmp_path, isolated_env):
    prep = prepare(str(small(tmp_path)), llm=ScriptedLLM({}))
    d = drafts(prep.catalog, {})[0]
    said = ScriptedLLM({"Learn": [f"What are the top 5 from the {d.tables[0]}_x table?"]})
    assert learning.write_question(said, prep.catalog, d, prep.database.run(d.sql).df) == \
        "What are the top 5?"
    named = ScriptedLLM({"Learn": ["How many rows does teams_and_more have?"]})
    db2 = duckdb_file(tmp_path / "u.duckdb", "CREATE TABLE teams_and_more AS SELECT 1 AS x, 'a' AS name")
    p2 = prepare(str(db2), llm=ScriptedLLM({}))
    d2 = next(x for x in drafts(p2.catalog, {}) if x.kind == "count")
    assert learning.write_question(named, p2.catalog, d2, p2.database.run(d2.sql).df) == ""


def _learned(tmp_path, monkeypatch, questions):
    db = str(small(tmp_path))
    monkeypatch.setattr(api, "get_llm", lambda settings=None: scripted(questions))
    learning.learn(db)
    return db


def test_learned_pairs_are_examples_after_taught_ones_and_never_templates(tmp_path, isolated_env, monkeypatch):
    top = "SELECT name, points FROM players WHERE points IS NOT NULL ORDER BY points DESC LIMIT 5"
    db = _learned(tmp_path, monkeypatch, {top: "who are the five best scorers?"})
    prep = prepare(db, llm=ScriptedLLM({}))
    pairs = learned_for(prep.database, prep.settings, prep.catalog)
    assert pairs and {p.origin for p in pairs} == {"learned"} and all(p.id.startswith("learned:") for p in pairs)
    # The learned pair's own question: no template answers it (the model writes the SQL), the pair is an example.
    learned_q = next(p.question for p in pairs if p.sql == top)
    r = ask(learned_q, db=db, llm=ScriptedLLM({"SQLGenerator": [top]}), router="rules", analyzer="rules",
            clarify="off")
    assert r.status == "answered" and not any(t["node"] == "MatchTemplate" and t.get("action") == "template"
                                              for t in r.trace)
    assert r.examples and r.examples[0]["origin"] == "learned" and r.examples[0]["sql"] == top
    # A taught pair comes first; learned ones fill the slots it leaves.
    taught = tmp_path / "taught.yaml"
    taught.write_text(json.dumps([{"question": "who are the five best scorers?",
                                   "sql": "SELECT name FROM players ORDER BY points DESC LIMIT 5"}]))
    r2 = ask(learned_q, db=db, llm=ScriptedLLM({"SQLGenerator": [top]}), router="rules", analyzer="rules",
             clarify="off", examples=str(taught), templates="off")
    assert [e["origin"] for e in r2.examples][:1] == ["taught"]
    r3 = ask(learned_q, db=db, llm=ScriptedLLM({"SQLGenerator": [top]}), router="rules", analyzer="rules",
             clarify="off", learned="off")
    assert not any(e["origin"] == "learned" for e in r3.examples)


def _learned_store(tmp_path, monkeypatch):
    """A database learned with the scripted model, opened, and its learned store."""
    prep = prepare(_learned(tmp_path, monkeypatch, {}), llm=ScriptedLLM({}))
    return prep, LearnedStore(learned_path(prep.database, prep.settings))


def test_a_pair_over_a_table_that_is_gone_is_not_shown(tmp_path, isolated_env, monkeypatch):
    prep, store = _learned_store(tmp_path, monkeypatch)
    store.add({"sql": "SELECT 1 FROM gone", "kind": "count", "tables": ["gone"], "model": "x", "status": "kept",
               "question": "how many gone things?"})
    with open(store.path, "a") as f:
        f.write('{"torn')                                   # a run killed mid-write: skipped, not an error
    assert all("gone" not in p.tables for p in learned_for(prep.database, prep.settings, prep.catalog))


def test_a_question_kept_for_two_queries_is_shown_for_neither(tmp_path, isolated_env, monkeypatch):
    """"The top 5 players by age" read back on two tables says neither table: both pairs are left out."""
    prep, store = _learned_store(tmp_path, monkeypatch)
    for table in ("players", "arenas"):
        store.add({"sql": f"SELECT name FROM {table} LIMIT 5", "kind": "top", "tables": [table], "model": "x",
                   "status": "kept", "question": "Which five are the oldest?"})
    shown = learned_for(prep.database, prep.settings, prep.catalog)
    assert shown and not any(p.question == "Which five are the oldest?" for p in shown)


def test_the_learn_command_reports_what_it_did_and_warm_learns_first(tmp_path, isolated_env, monkeypatch, capsys):
    from duckask.utils.app import warm as warming
    from duckask.utils.app.cli import main

    db = str(small(tmp_path))
    monkeypatch.setattr(api, "get_llm", lambda settings=None: scripted())
    assert main(["learn", "--db", db, "--limit", "2", "--json"]) == 0
    out, err = capsys.readouterr()
    report = json.loads(out.strip().splitlines()[-1])
    assert report["tried"] == 2 and report["stopped"] == "limit" and report["drafts"] > 2
    assert "learn 1/" in err and "learn 2/" in err and "stopped at --limit" in err      # a line per draft off a TTY
    monkeypatch.setattr(warming, "warm", lambda *a, **k: [])
    assert main(["warm", "--db", db, "--learn", "5"]) == 0                        # learns the rest first
    assert f"of {report['drafts']} drafts tried" in capsys.readouterr().err
