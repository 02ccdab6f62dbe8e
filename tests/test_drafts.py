"""The drafts service (``utils/sql/drafts.py``): drafts drawn with the scripted LLM, then run, repaired and voted on
a small DuckDB database of the test's own, through the real safe executor (results, not mocks)."""
from __future__ import annotations

import pytest
from conftest import duckdb_file

from duckask.utils.config import load_settings
from duckask.utils.db.database import open_database
from duckask.utils.llm import MeteredLLM
from duckask.utils.llm.scripted import ScriptedLLM
from duckask.utils.semantic import get_catalog
from duckask.utils.sql import drafts

MSGS = [{"role": "user", "content": "Question: How many teams are in Boston?"}]
Q = "How many teams are in Boston?"


@pytest.fixture
def shop(tmp_path):
    """teams(id, name, city): three in Boston, one in Denver; and the settings a turn runs with (a row cap of 2)."""
    path = duckdb_file(tmp_path / "teams.duckdb",
                       "CREATE TABLE teams (id INTEGER PRIMARY KEY, name VARCHAR, city VARCHAR)",
                       "INSERT INTO teams VALUES (1, 'Celtics', 'Boston'), (2, 'Red Sox', 'Boston'), "
                       "(3, 'Bruins', 'Boston'), (4, 'Nuggets', 'Denver')")
    settings = load_settings(row_cap=2, timeout_s=5)
    db = open_database(path, settings)
    return db, settings, get_catalog(db, settings)


def test_sample_draws_the_greedy_draft_then_seeded_samples(shop):
    _, _, catalog = shop
    llm = ScriptedLLM({"SQLGenerator": ["SELECT count(*) FROM teams WHERE city = 'Boston';```",
                                        "SELECT COUNT(*) FROM teams WHERE city = 'Boston'```",
                                        "SELECT name FROM teams```"]})
    got = drafts.sample(MeteredLLM(llm), MSGS, 2, node="SQLGenerator", catalog=catalog, question=Q,
                        temperature=0.7, seed=1, greedy=True)
    assert [sql for sql, _ in got] == ["SELECT count(*) FROM teams WHERE city = 'Boston'",
                                       "SELECT COUNT(*) FROM teams WHERE city = 'Boston'", "SELECT name FROM teams"]
    assert [(c["temperature"], c["seed"], c["prefix"]) for c in llm.calls] == \
        [(None, None, "```sql\n"), (0.7, 1, "```sql\n"), (0.7, 2, "```sql\n")]
    assert all(certainty == {} for _, certainty in got)     # the scripted backend gives no log-probabilities
    assert drafts.sample(llm, MSGS, 0, node="SQLGenerator", catalog=catalog, question=Q, temperature=0.7,
                         seed=1) == [] and len(llm.calls) == 3      # no draft asked for: no call


def test_run_query_holds_the_turns_row_cap_and_refuses_writes(shop):
    db, settings, _ = shop
    out = drafts.run_query(db, settings, "SELECT name FROM teams ORDER BY id")
    assert out.ok and list(out.df["name"]) == ["Celtics", "Red Sox"] and out.truncated
    assert len(drafts.run_query(db, settings, "SELECT name FROM teams", row_cap=10).df) == 4   # an export's cap
    assert not drafts.run_query(db, settings, "DELETE FROM teams").ok


def test_repair_fixes_what_the_error_names_and_nothing_else(shop):
    db, settings, catalog = shop
    bad = "SELECT nme FROM teams WHERE city = 'Denver'"
    out = drafts.run_query(db, settings, bad)
    assert not out.ok
    fixed = drafts.repair(bad, out.error, catalog, Q)
    assert fixed == "SELECT name FROM teams WHERE city = 'Denver'"
    assert list(drafts.run_query(db, settings, fixed).df["name"]) == ["Nuggets"]
    assert drafts.repair("SELECT name FROM teams", "Parser Error: syntax error at or near", catalog, Q) is None


def test_run_all_runs_each_draft_with_the_free_repairs(shop):
    db, settings, catalog = shop
    outs = drafts.run_all(db, settings, ["SELECT count(*) AS n FROM teams WHERE city = 'Boston'",
                                         "SELECT count(*) AS n FROM teams WHERE cty = 'Boston'", ""], catalog, Q)
    assert [o.df["n"].iloc[0] for o in outs[:2]] == [3, 3]
    assert outs[1].sql == "SELECT count(*) AS n FROM teams WHERE city = 'Boston'"    # the query that ran
    assert outs[2] is None                                                            # an empty draft does not run
    alone = drafts.run_all(db, settings, ["SELECT count(*) FROM teams WHERE cty = 'Boston'"], catalog, Q,
                           repairs=False)
    assert alone[0].status == "error"                                                 # one query alone: no repairs


def test_choose_votes_on_results_and_breaks_ties_by_likelihood(shop):
    db, settings, catalog = shop
    sqls = ["SELECT name FROM teams WHERE city = 'Denver'", "SELECT count(*) FROM teams WHERE city = 'Boston'",
            "SELECT count(id) FROM teams WHERE city = 'Boston'"]
    distinct, counts, likely = drafts.tally([sqls[0], sqls[1], sqls[2], sqls[1], ""], [-0.5, -0.9, None, -0.2, None],
                                            sqls[0])
    assert distinct == sqls and counts[sqls[1]] == 2 and likely == {sqls[0]: -0.5, sqls[1]: -0.2}
    outs = [o for o in drafts.run_all(db, settings, distinct, catalog, Q) if o]
    v = drafts.choose(outs, [counts[d] for d in distinct], [likely.get(d) for d in distinct])
    assert v.groups == [[1, 2], [0]] and v.chosen == 1 and outs[v.chosen].df.iloc[0, 0] == 3   # three drafts say 3
    tie = drafts.choose(outs[:2], [1, 1], [-0.9, -0.1])
    assert tie.chosen == 1                                          # as many drafts each: the likelier one
    reviewed = drafts.choose(outs, [1, 1, 1], question=Q, review=lambda m, q: 10.0 if "Nuggets" in m[1]["content"]
                             else 0.0)
    assert reviewed.chosen == 0                                     # the reviewer reads the question back from it
