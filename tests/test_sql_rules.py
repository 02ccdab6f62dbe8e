"""The deterministic SQL clean-ups and repairs, on hand-written queries (the recorded cases are in
tests/fixtures/sql_rules/, run by test_sql_fixtures.py)."""
import pytest

from duckask.utils.schema.catalog import ForeignKey
from duckask.utils.sql.errors import parse_error
from duckask.utils.sql.facts import SchemaFacts
from duckask.utils.sql.repair import REPAIRS, repair
from duckask.utils.sql.tidy import RULES, fix_key_mismatches, fix_self_joins, prune_unused_joins


def F(columns=None, links=None, named=None) -> SchemaFacts:
    """Schema facts from plain tuples: links as (table, column, referenced table, referenced column)."""
    return SchemaFacts(columns or {}, None if links is None else [ForeignKey(*fk) for fk in links], named)

COLS = {"singer": {"singer_id", "song_name", "age", "name"}, "singer_in_concert": {"singer_id", "concert_id"},
        "concert": {"concert_id", "year"}, "owners": {"owner_id", "state"},
        "professionals": {"professional_id", "state"}}
LINKS = [("singer_in_concert", "singer_id", "singer", "singer_id"),
         ("singer_in_concert", "concert_id", "concert", "concert_id")]


def test_unused_foreign_key_joins_are_dropped():
    sql = ("SELECT T1.song_name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.singer_id = T2.singer_id "
           "INNER JOIN concert AS T3 ON T2.concert_id = T3.concert_id WHERE T1.age > (SELECT AVG(age) FROM singer)")
    assert prune_unused_joins(sql, F(COLS, LINKS)) == \
        "SELECT T1.song_name FROM singer AS T1 WHERE T1.age > (SELECT AVG(age) FROM singer)"


def test_used_joins_and_filter_joins_are_kept():
    used = ("SELECT T1.name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.singer_id = T2.singer_id "
            "JOIN concert AS T3 ON T2.concert_id = T3.concert_id WHERE T3.year = 2014")
    assert prune_unused_joins(used, F(COLS, LINKS)) == used
    # A join on a non-key column is an existence filter ("states with both owners and professionals").
    semi = "SELECT DISTINCT T1.state FROM owners AS T1 JOIN professionals AS T2 ON T1.state = T2.state"
    assert prune_unused_joins(semi, F(COLS, LINKS)) == semi


def test_non_key_joins_to_tables_the_question_does_not_name_are_dropped():
    semi = "SELECT DISTINCT T1.state FROM owners AS T1 JOIN professionals AS T2 ON T1.state = T2.state"
    # The question names both tables: the join is the filter it asks for.
    assert prune_unused_joins(semi, F(COLS, LINKS, named={"owners", "professionals"})) == semi
    # It names only owners: the sibling join is the model's own addition.
    assert prune_unused_joins(semi, F(COLS, LINKS, named={"owners"})) == "SELECT DISTINCT T1.state FROM owners AS T1"
    # Aggregates do not protect a non-key join to an unnamed table ...
    counted = ("SELECT T1.state, count(*) FROM owners AS T1 JOIN professionals AS T2 ON T1.state = T2.state "
               "GROUP BY T1.state")
    assert prune_unused_joins(counted, F(COLS, LINKS, named=set())) == \
        "SELECT T1.state, count(*) FROM owners AS T1 GROUP BY T1.state"
    # ... but they still protect a foreign-key join, whose multiplicity the count may be about.
    per_singer = ("SELECT T1.name, count(*) FROM singer T1 JOIN singer_in_concert T2 ON T1.singer_id = T2.singer_id "
                  "GROUP BY T1.name")
    assert prune_unused_joins(per_singer, F(COLS, LINKS, named=set())) == per_singer


def test_named_tables_matches_stemmed_name_words():
    from duckask.utils.schema.catalog import Catalog, Table
    from duckask.utils.sql.facts import named_tables

    names = ("Owners", "Highschooler", "car_makers", "Friend")
    cat = Catalog(key="t", tables={n: Table(name=n, columns=[]) for n in names})
    assert named_tables(cat, "Show the names of all high schoolers in grade 10.") == {"highschooler"}
    assert named_tables(cat, "Which states have both owners and professionals?") == {"owners"}
    assert named_tables(cat, "Which distinct car models are produced after 1980?") == set()


def test_joins_under_aggregates_or_star_are_kept():
    for sql in ("SELECT count(*) FROM singer T1 JOIN singer_in_concert T2 ON T1.singer_id = T2.singer_id",
                "SELECT T1.name FROM singer T1 JOIN singer_in_concert T2 ON T1.singer_id = T2.singer_id "
                "GROUP BY T1.name",
                "SELECT * FROM singer T1 JOIN singer_in_concert T2 ON T1.singer_id = T2.singer_id"):
        assert prune_unused_joins(sql, F(COLS, LINKS)) == sql


def test_self_compare_join_condition_is_rewritten_from_the_foreign_key():
    links = [("cars_data", "Id", "car_names", "MakeId")]
    sql = ("SELECT T1.Horsepower FROM cars_data AS T1 JOIN car_names AS T2 ON T2.MakeId = T2.MakeId "
           "WHERE T1.Accelerate = (SELECT MAX(Accelerate) FROM cars_data)")
    assert "ON T1.Id = T2.MakeId" in fix_self_joins(sql, F(links=links))
    same_table = "SELECT a.x FROM t a WHERE a.x = a.x"
    assert fix_self_joins(same_table, F(links=links)) == same_table


def test_a_metric_used_as_a_column_gets_its_expression():
    facts = SchemaFacts({"games": {"home_pts", "away_pts"}}, metrics={"game_margin": "ABS(HOME_PTS - AWAY_PTS)"})
    err = 'Binder Error: Referenced column "GAME_MARGIN" not found in FROM clause!\nCandidate bindings: "HOME_PTS"'
    assert repair("SELECT MAX(GAME_MARGIN) AS m FROM games", err, facts) == \
        "SELECT MAX((ABS(HOME_PTS - AWAY_PTS))) AS m FROM games"
    # Without the metric, the same error is left to the other rules.
    assert repair("SELECT MAX(GAME_MARGIN) AS m FROM games", err, SchemaFacts({"games": {"home_pts"}})) is None


def test_repairs_named_by_duckdb():
    err = 'Binder Error: Referenced column "nme" not found in FROM clause!\nCandidate bindings: "name"\n'
    assert repair("SELECT nme FROM ship", err) == "SELECT name FROM ship"
    err = 'Binder Error: column "name" must appear in the GROUP BY clause or must be part of an aggregate function.'
    assert repair("SELECT name, count(*) FROM s GROUP BY id", err) == "SELECT name, count(*) FROM s GROUP BY id, name"
    err = 'Binder Error: Table "T2" does not have a column named "song_name"\n\nCandidate bindings: : "Singer_ID"\n'
    fixed = repair("SELECT T2.song_name FROM singer AS T1 JOIN singer_in_concert AS T2 ON T1.singer_id = T2.singer_id",
                   err, F(COLS))
    assert fixed.startswith("SELECT T1.song_name")
    assert repair("SELECT 1", "Parser Error: syntax error") is None


def test_key_compared_with_the_wrong_column_is_pointed_at_the_referenced_one():
    links = [("car_makers", "Country", "countries", "CountryId"), ("countries", "Continent", "continents", "ContId"),
             ("flights", "SourceAirport", "airports", "AirportCode")]
    sql = "SELECT T1.CountryName FROM countries AS T1 JOIN car_makers AS T2 ON T1.Continent = T2.Country"
    assert fix_key_mismatches(sql, F(links=links)) == \
        sql.replace("T1.Continent = T2.Country", "T1.CountryId = T2.Country")
    quoted = 'SELECT 1 FROM "flights" AS "f" JOIN "airports" AS "a" ON "f"."SourceAirport" = "a"."City"'
    assert fix_key_mismatches(quoted, F(links=links)) == quoted.replace('"a"."City"', '"a"."AirportCode"')
    # Left alone: the right key, a sibling join, tables without a key between them, and string literals.
    for ok in ("SELECT 1 FROM countries c JOIN car_makers m ON c.CountryId = m.Country",
               "SELECT 1 FROM flights f JOIN car_makers m ON f.SourceAirport = m.Country",
               "SELECT 1 FROM countries c WHERE c.Continent = c.CountryName",
               "SELECT 'c.Continent = m.Country' FROM countries c, car_makers m"):
        assert fix_key_mismatches(ok, F(links=links)) == ok


PEOPLE = {"people": {"people_id", "name", "height"}, "poker_player": {"poker_player_id", "people_id", "money_rank"},
          "rankings": {"player_id", "height"}}
PEOPLE_LINKS = [("poker_player", "People_ID", "people", "People_ID")]


def test_a_column_of_a_table_the_query_forgot_is_joined():
    err = ('Binder Error: Referenced column "Height" not found in FROM clause!\nCandidate bindings: "Money_Rank"')
    sql = "SELECT Money_Rank FROM poker_player WHERE Height = (SELECT MAX(Height) FROM people) ORDER BY 1"
    assert repair(sql, err, F(PEOPLE, PEOPLE_LINKS)) == (
        "SELECT Money_Rank FROM poker_player JOIN people ON poker_player.People_ID = people.People_ID "
        "WHERE Height = (SELECT MAX(Height) FROM people) ORDER BY 1")
    # Qualified: every column the alias's table lacks and the joined table has moves over.
    err = 'Binder Error: Table "T1" does not have a column named "Name"\nCandidate bindings: : "Money_Rank"'
    sql = "SELECT T1.Name, T1.Height, T1.Money_Rank FROM poker_player AS T1"
    assert repair(sql, err, F(PEOPLE, PEOPLE_LINKS)) == (
        "SELECT people.Name, people.Height, T1.Money_Rank FROM poker_player AS T1 "
        "JOIN people ON T1.People_ID = people.People_ID")


def test_a_missing_column_is_not_joined_when_it_is_ambiguous_or_unlinked():
    err = 'Binder Error: Referenced column "Height" not found in FROM clause!\nCandidate bindings: "Money_Rank"'
    sql = "SELECT Money_Rank FROM poker_player WHERE Height > 180"
    # Two tables outside the query have Height, both linked: which one is meant is not clear.
    links = PEOPLE_LINKS + [("poker_player", "Poker_Player_ID", "rankings", "player_id")]
    assert repair(sql, err, F(PEOPLE, links)) is None
    # No foreign key to the table that has the column.
    assert repair(sql, err, F(PEOPLE, [])) is None
    # Without foreign keys, only the fixes the error message names (none here).
    assert repair(sql, err, F(PEOPLE)) is None



def test_a_misspelt_table_duckdb_suggests_is_respelt():
    err = 'Catalog Error: Table with name singers does not exist!\nDid you mean "singer"?'
    assert repair("SELECT name FROM singers WHERE age > 30", err) == "SELECT name FROM singer WHERE age > 30"
    err = 'Catalog Error: Table with name concerts_2014 does not exist!\nDid you mean "stadium"?'
    assert repair("SELECT * FROM concerts_2014", err) is None      # a suggestion that is not close is not taken


@pytest.mark.parametrize("message, kind, name, qualifier, candidates", [
    ('Binder Error: Referenced column "nme" not found in FROM clause!\nCandidate bindings: "name", "t.age"',
     "column_not_found", "nme", "", ("name", "t.age")),
    ('Binder Error: Table "T2" does not have a column named "song_name"\n\nCandidate bindings: : "Singer_ID"\n',
     "qualified_column", "song_name", "T2", ("Singer_ID",)),
    ('Catalog Error: Table with name singers does not exist!\nDid you mean "singer"?',
     "table_not_found", "singers", "", ("singer",)),
    ('Binder Error: column "name" must appear in the GROUP BY clause or must be part of an aggregate function.',
     "group_by", "name", "", ()),
    ("Conversion Error: Could not convert string 'United Airlines' to INT32", "conversion", "United Airlines", "", ()),
    ("Parser Error: syntax error at or near \"FORM\"", "other", "", "", ()),
])
def test_duckdb_errors_are_read_once(message, kind, name, qualifier, candidates):
    err = parse_error(message)
    assert (err.kind, err.name, err.qualifier, err.candidates) == (kind, name, qualifier, candidates)


def test_every_rule_says_which_slip_it_fixes_and_runs_from_one_list():
    for rule in RULES + REPAIRS:
        assert rule.__doc__ and len(rule.__doc__.split()) >= 8, rule.__name__
    assert [r.__name__ for r in RULES] == ["foreign_functions", "zero_based_index", "random_order_sample",
                                           "fix_self_joins", "fix_key_mismatches", "prune_unused_joins"]
    assert REPAIRS[0].__name__ == "expand_metric"            # a metric's name is no misspelt column
    assert REPAIRS[1].__name__ == "join_forgotten_table"     # a forgotten join before a close spelling
