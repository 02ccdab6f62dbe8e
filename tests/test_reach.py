"""Reaching a kept pair by meaning (issue 65, ``utils/knowledge/reach.py``), without the model: slots filled from the
value index (a code for a name, a demonym, a season for a year, two adjacent names), nothing added, the rest of the
words read as the catalog's concepts; a near-miss (another measure, subject, order or condition) stays out."""
from __future__ import annotations

import pytest

from duckask.utils.knowledge.examples import Example
from duckask.utils.knowledge.reach import concepts, fill, tokens
from duckask.utils.schema.catalog import Catalog, Column, Table


def _table(name, cols, synonyms=()):
    return Table(name, [Column(c, t, comment=k, synonyms=list(s)) for c, t, k, s in cols], synonyms=list(synonyms))


V, INT = "VARCHAR", "INTEGER"
CATALOG = Catalog(key="reach-test", tables={
    "batting": _table("batting", [("player_id", V, "Player ID code", ()), ("year_id", INT, "Year", ()),
                                  ("lg_id", V, "League", ()), ("hr", INT, "home runs", ("homers", "home runs")),
                                  ("h", INT, "hits", ()), ("sb", INT, "stolen bases", ())], ("hitters", "batters")),
    "people": _table("people", [("player_id", V, "Player ID code", ()), ("name_first", V, "First name", ()),
                                ("name_last", V, "Last name", ()), ("birth_country", V, "Country of birth", ())],
                     ("players", "player", "born")),
    "standings": _table("standings", [("team", V, "Team", ()), ("season", INT, "Season (the year it ends)", ()),
                                      ("opp_pct", INT, "opponents' three-point percentage", ())]),
})
VALUES = {("batting", "lg_id"): ["AL", "NL", "AA"],
          ("people", "birth_country"): ["USA", "CAN", "D.R.", "P.R.", "Venezuela", "Mexico"],
          ("people", "name_first"): ["Pete", "Hank", "Aaron", "Derek"],
          ("people", "name_last"): ["Rose", "Aaron", "Jeter"],
          ("standings", "team"): ["Boston Celtics", "Houston Rockets"]}


class Index:
    """A value index over ``VALUES`` (the columns ``ValueIndex`` would read)."""

    def columns(self, table: str) -> set[str]:
        t = CATALOG.tables.get(table.lower())
        return {c.name for c in t.columns} if t else set()

    def values(self, table: str, column: str):
        return VALUES.get((table.lower(), column.lower()))


LEADER = Example("Who led the American League in home runs in 1961?",
                 "SELECT p.name_last, SUM(b.hr) AS hr FROM batting b JOIN people p ON p.player_id = b.player_id "
                 "WHERE b.year_id = 1961 AND b.lg_id = 'AL' GROUP BY p.name_last ORDER BY hr DESC LIMIT 1", "1")
HITS = Example("How many career hits did Pete Rose have?",
               "SELECT SUM(b.h) AS hits FROM people p JOIN batting b ON b.player_id = p.player_id "
               "WHERE p.name_first = 'Pete' AND p.name_last = 'Rose'", "2")
BORN = Example("Which players born in Canada hit the most career home runs?",
               "SELECT p.name_last, SUM(b.hr) AS hr FROM people p JOIN batting b ON b.player_id = p.player_id "
               "WHERE p.birth_country = 'CAN' GROUP BY p.name_last ORDER BY hr DESC LIMIT 5", "3")
SEASON = Example("Which teams held opponents to the lowest three-point percentage in 2024-25?",
                 "SELECT team, opp_pct FROM standings WHERE season = 2025 ORDER BY opp_pct ASC LIMIT 5", "4")


@pytest.mark.parametrize("pair, question, slots, decided", [
    (LEADER, "Who was the National League's home run leader in 1987?", [("AL", "NL"), ("1961", "1987")], "concepts"),
    (LEADER, "Which AL hitter had the most homers in 1998?", [("1961", "1998")], "wording"),
    (LEADER, "In 2005, which American Leaguer hit the most home runs?", [("1961", "2005")], "wording"),
    (HITS, "What was Hank Aaron's career hit total?", [("Pete", "Hank"), ("Rose", "Aaron")], "concepts"),
    (HITS, "Lifetime hits for Derek Jeter?", [("Pete", "Derek"), ("Rose", "Jeter")], "wording"),
    (BORN, "Which Venezuelan-born players have hit the most home runs in their careers?", [("CAN", "Venezuela")],
     "concepts"),
    (BORN, "Career home run leaders among players from Puerto Rico?", [("CAN", "P.R.")], "wording"),
    (BORN, "Who are the top Canadian-born home run hitters?", [], "wording"),
    (SEASON, "Which teams allowed the lowest opponent three-point percentage in the 2023-24 season?",
     [("2025", "2024")], "wording"),
])
def test_a_reworded_question_reaches_its_pair_with_its_values(pair, question, slots, decided):
    got = fill(question, pair, Index(), CATALOG)
    assert got is not None, question
    assert got.template.slots == slots and got.decided == decided
    for _, asked in slots:
        assert (f"'{asked}'" if not asked.isdigit() else asked) in got.template.sql


@pytest.mark.parametrize("pair, question, why", [
    (LEADER, "Who led the American League in stolen bases in 1961?", "another measure"),
    (LEADER, "Who hit the most American League home runs from 1961 through 1965?", "a year added"),
    (LEADER, "Who had the fewest home runs in the American League in 1961?", "the other end of the order"),
    (LEADER, "Who led the American League in home runs?", "a slot left unfilled"),
    (LEADER, "Who led the American League in home runs in 1961 for the Yankees?", "a name added"),
    (HITS, "How many hits did Pete Rose have in 1973?", "a condition added"),
    (HITS, "How many career home runs did Pete Rose have?", "another measure, which the SQL does not read"),
    (BORN, "Which players born in Canada have the most career hits?", "another measure"),
    (BORN, "How many players were born in Canada?", "a superlative dropped"),
    (BORN, "What is the average career home run total of players born in Canada?", "an average added"),
    (SEASON, "Which teams held opponents to the highest three-point percentage in 2024-25?", "the other end"),
])
def test_a_near_miss_is_not_answered_from_the_pair(pair, question, why):
    assert fill(question, pair, Index(), CATALOG) is None, why


def test_a_thing_nothing_is_called_keeps_the_pair_out():
    question = "Who led the American League in home runs and rebounds in 1961?"
    assert fill(question, LEADER, Index(), CATALOG, absent=["rebounds"]) is None


def test_without_a_value_index_nothing_is_reached():
    assert fill("Which AL hitter had the most homers in 1998?", LEADER, None, CATALOG) is None


def test_concepts_come_from_the_catalog_and_a_few_general_words():
    assert concepts(tokens("Which clubs led in homers?"), CATALOG) == ["col:team", "MAX", "col:hr"]   # club: team
    assert concepts(tokens("the most home runs"), CATALOG) == concepts(tokens("the top homers"), CATALOG)
    assert concepts(tokens("lifetime hits"), CATALOG) == concepts(tokens("career hits"), CATALOG)


def test_a_stored_value_is_put_in_as_a_literal_on_the_tree():
    firsts, lasts = VALUES[("people", "name_first")], VALUES[("people", "name_last")]
    VALUES[("people", "name_first")], VALUES[("people", "name_last")] = [*firsts, "Paul"], [*lasts, "O'Neill"]
    try:
        got = fill("What was Paul O'Neill's career hit total?", HITS, Index(), CATALOG)
    finally:
        VALUES[("people", "name_first")], VALUES[("people", "name_last")] = firsts, lasts
    assert got is not None and "'O''Neill'" in got.template.sql and got.template.sql.count("'") == 6


def test_a_number_the_pair_says_but_does_not_compare_may_be_said_again():
    pair = Example("Who had the ball the longest per game in the 2026 playoffs?",
                   "SELECT team, opp_pct FROM standings ORDER BY opp_pct DESC LIMIT 5", "5")
    assert fill("Which team held the ball the longest per game in the 2026 playoffs?", pair, Index(), CATALOG)
    assert fill("Which team held the ball the longest per game in the 2025 playoffs?", pair, Index(), CATALOG) is None


def test_a_count_of_distinct_things_is_another_question():
    pair = Example("Which players have played in the most games in 1961?",
                   "SELECT p.name_last, COUNT(*) AS games FROM batting b JOIN people p ON p.player_id = b.player_id "
                   "WHERE b.year_id = 1961 GROUP BY p.name_last ORDER BY games DESC LIMIT 5", "6")
    assert fill("Which players played in the most games in 1962?", pair, Index(), CATALOG) is not None
    assert fill("Which players have played in the most different games in 1962?", pair, Index(), CATALOG) is None


@pytest.mark.parametrize("pair, question", [
    (Example("How many players were born in Canada?", "SELECT count(*) AS n FROM people WHERE birth_country = 'CAN'",
             "7"), "Which players were born in Canada?"),
    (Example("Who led the American League in home runs in 1961 for the Boston Red Sox?",
             "SELECT p.name_last FROM batting b JOIN people p ON p.player_id = b.player_id WHERE b.year_id = 1961 "
             "AND b.lg_id = 'AL' AND b.team_id = 'BOS' ORDER BY b.hr DESC LIMIT 1", "8"),
     "Who led the American League in home runs in 1962?"),
    (Example("When was Pete Rose born?", "SELECT p.birth_year FROM people p WHERE p.name_first = 'Pete' AND "
             "p.name_last = 'Rose'", "9"), "Where was Hank Aaron born?"),
])
def test_a_count_a_dropped_condition_or_another_kind_of_answer_is_another_question(pair, question):
    assert fill(question, pair, Index(), CATALOG) is None


def test_two_slots_may_trade_values():
    firsts = VALUES[("people", "name_first")]
    VALUES[("people", "name_first")] = [*firsts, "Rose"]
    lasts = VALUES[("people", "name_last")]
    VALUES[("people", "name_last")] = [*lasts, "Pete"]
    try:
        got = fill("What was Rose Pete's career hit total?", HITS, Index(), CATALOG)
    finally:
        VALUES[("people", "name_first")], VALUES[("people", "name_last")] = firsts, lasts
    assert got is not None and "name_first = 'Rose'" in got.template.sql and "name_last = 'Pete'" in got.template.sql
