"""count_not_of_entity (issue 53, item 4) against a real database: the count of the different things runs on the
asker's own database, under the query's filters; the grader sends a row count back with both numbers and the
retry's count is the answer (executed rows asserted); a reader who may not read the table gets no count from it."""
from __future__ import annotations

import duckdb
import pytest

from duckask.utils.access.roles import ScopedDatabase, User
from duckask.utils.checks.entity import count_not_of_entity
from duckask.utils.checks.facts import Facts, table_words
from duckask.utils.db.database import open_database
from duckask.utils.schema.value_index import ValueIndex
from duckask.utils.semantic import get_catalog


@pytest.fixture(scope="module")
def league(tmp_path_factory):
    path = tmp_path_factory.mktemp("league") / "league.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE player_seasons (player_id INTEGER, player VARCHAR, season INTEGER, team VARCHAR)")
        con.execute("INSERT INTO player_seasons VALUES (1, 'Ann', 2019, 'A'), (1, 'Ann', 2020, 'A'), "
                    "(2, 'Bo', 2020, 'B'), (3, 'Cy', 2020, 'B'), (3, 'Cy', 2021, 'C'), (4, 'Di', 2021, 'C')")
        con.execute("CREATE TABLE awards_players (player_id INTEGER, award_id VARCHAR, year INTEGER)")
        con.execute("INSERT INTO awards_players VALUES (1, 'Most Valuable Player', 2019), "
                    "(1, 'Most Valuable Player', 2020), (1, 'Gold Glove', 2020)")
        con.execute("CREATE TABLE officials (game_id INTEGER, official_id INTEGER, official VARCHAR)")
        con.execute("COMMENT ON TABLE officials IS 'One row per referee and game'")
        con.execute("INSERT INTO officials VALUES (10, 7, 'Sy'), (11, 7, 'Sy'), (11, 8, 'Ty'), (12, 9, 'Uma')")
    return path


def _facts(db, cat):
    return Facts(set(), "", ValueIndex.of(db, cat), table_words(cat), [])


def test_a_row_count_for_a_count_of_things_is_caught_by_the_data(league, settings):
    db = open_database(str(league), settings)
    cat = get_catalog(db)
    facts = _facts(db, cat)
    df = db.run("SELECT count(*) FROM player_seasons").df
    said = count_not_of_entity("How many players have played?", "SELECT count(*) FROM player_seasons", df, facts)
    assert said == ("The question counts players, but the query counts rows of player_seasons (6), where one player "
                    "has several rows: 4 different player_id. Count them with count(DISTINCT player_id).")
    # Under the query's own filter one row is one player: no fault (decided by the data, not the table's name).
    one = "SELECT count(*) FROM player_seasons WHERE season = 2020"
    assert count_not_of_entity("How many players played in 2020?", one, db.run(one).df, facts) is None
    # A count of seasons, a distinct count, a grouped count: not this check's.
    for q, sql in [("How many seasons did Ann play?", "SELECT count(*) FROM player_seasons WHERE player = 'Ann'"),
                   ("How many players?", "SELECT count(DISTINCT player_id) FROM player_seasons"),
                   ("How many players per team?", "SELECT team, count(*) FROM player_seasons GROUP BY team"),
                   # a key whose values are phrases is a kind: two MVPs are two awards
                   ("How many awards did Ann win?", "SELECT count(*) FROM awards_players WHERE player_id = 1")]:
        assert count_not_of_entity(q, sql, db.run(sql).df, facts) is None, q


def test_a_synonym_of_the_table_is_counted_by_its_id(league, settings):
    """"referees" are the officials table (its comment names them); its id is what is counted."""
    import copy

    db = open_database(str(league), settings)
    cat = copy.deepcopy(get_catalog(db))       # the semantic file's synonyms, on a copy of the shared catalog
    cat.tables["officials"].synonyms = ["referee", "referees"]
    facts = _facts(db, cat)
    sql = "SELECT count(*) FROM officials"
    said = count_not_of_entity("How many different referees are there?", sql, db.run(sql).df, facts)
    assert said and "3 different official_id" in said and "count(DISTINCT official_id)" in said


def test_a_reader_who_may_not_read_the_table_gets_no_count(league, settings):
    db = ScopedDatabase(open_database(str(league), settings), User("rita", "reader", frozenset({"officials"})))
    cat = get_catalog(open_database(str(league), settings))
    df = open_database(str(league), settings).run("SELECT count(*) FROM player_seasons").df
    assert count_not_of_entity("How many players have played?", "SELECT count(*) FROM player_seasons", df,
                               _facts(db, cat)) is None


def test_the_grader_sends_the_row_count_back_and_the_retry_counts_things(league, isolated_env):
    from conftest import ask_with_drafts

    r, llm = ask_with_drafts(league, "How many players have played?", ["SELECT count(*) FROM player_seasons",
                                                                       "SELECT count(DISTINCT player_id) FROM "
                                                                       "player_seasons"])
    assert r.ok and r.df.iloc[0, 0] == 4
    assert r.grades[0]["verdict"] == "fail" and "count(DISTINCT player_id)" in r.grades[0]["critique"]
    assert "4 different player_id" in llm.calls[1]["messages"][-1]["content"]
