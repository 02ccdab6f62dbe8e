"""ResponseGrader's rules (``utils/checks/registry.py``): each fixture case of tests/fixtures/checks.yaml gets
exactly the check it names from the one registry (or passes), and the grader sends a mistake back with its
reason."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import ask_with_drafts, duckdb_file

from duckask.utils.checks import registry as checks
from duckask.utils.checks.facts import Facts
from duckask.utils.schema.terms import split_ident, stem

FIXTURE = yaml.safe_load((Path(__file__).parent / "fixtures" / "checks.yaml").read_text())
CASES = FIXTURE["cases"]
NAMES = {w for n in FIXTURE["names"] for w in split_ident(n)}
ENTITIES = {t: ({stem(w) for w in name}, {stem(w) for w in words}) for t, (name, words) in FIXTURE["entities"].items()}


class FixtureData:
    """The fixture's ``data`` tables in an in-memory DuckDB: what a check that queries (``database.run``) reads."""

    def __init__(self, data: dict):
        import duckdb

        self.con = duckdb.connect()
        for table, (columns, rows) in data.items():
            values = ", ".join("(" + ", ".join(repr(v) for v in row) + ")" for row in rows)
            self.con.execute(f"CREATE TABLE {table} AS SELECT * FROM (VALUES {values}) AS t({', '.join(columns)})")

    def run(self, sql: str, row_cap: int | None = None):
        from types import SimpleNamespace

        try:
            return SimpleNamespace(ok=True, df=self.con.execute(sql).df())
        except Exception as e:
            return SimpleNamespace(ok=False, df=None, error=str(e))


class FixtureIndex:
    """The fixture's tables as a value index (``schema.value_index.ValueIndex``'s calls), its ``data`` queryable."""

    def __init__(self, tables: dict):
        self.tables = tables
        self.database = FixtureData(FIXTURE["data"])

    def columns(self, table: str) -> set[str]:
        data = FIXTURE["data"].get(table.lower(), [[]])[0]
        return {c.lower() for c in [*self.tables.get(table.lower(), {}), *FIXTURE["seasons"].get(table.lower(), {}),
                                    *data]}

    def values(self, table: str, column: str):
        return self.tables.get(table.lower(), {}).get(column.lower())

    def time_columns(self, table: str) -> list[str]:
        return list(FIXTURE["seasons"].get(table.lower(), {}))

    def span(self, table: str, column: str) -> tuple[int, int, bool]:
        low, high = FIXTURE["seasons"][table.lower()][column]
        return low, high, False


def case_result(case: dict) -> pd.DataFrame:
    rows = case["rows"]
    return pd.DataFrame({"v": range(rows)}) if isinstance(rows, int) else pd.DataFrame(rows, columns=case["columns"])


@pytest.mark.parametrize("case", CASES, ids=[f"{c['check']}-{c['question'][:40]}" for c in CASES])
def test_each_case_gets_the_check_it_names_from_the_one_registry(case):
    """The grader's own call (``failed_check``) over ``CHECKS``: the check the case names speaks first, with a
    critique that says why (its start, where the case gives it); each check in ``also`` objects on its own too."""
    named = [dict(zip(("phrase", "table", "column", "value"), n)) for n in case.get("named", [])]
    facts = Facts(NAMES, case.get("given", ""), FixtureIndex(FIXTURE["tables"]), ENTITIES, named)
    df = case_result(case)
    name, critique = checks.failed_check(case["question"], df, case["sql"], facts=facts, given_known=True)
    assert name == case["check"], critique
    if name:
        assert len(critique.split()) > 8 and critique.startswith(case.get("says", "")), critique
    for other in case.get("also", []):
        check = next(c for c in checks.CHECKS if c.name == other)
        assert check(case["question"], case["sql"], df, facts), other


def test_a_year_no_row_has_names_where_the_warehouse_holds_it():
    """year_outside_span (issue 53) names the tables about the same thing whose time columns hold the year, and
    says the data does not cover it where none does."""
    from duckask.utils.checks.grounding import year_outside_span

    facts = Facts(NAMES, "", FixtureIndex(FIXTURE["tables"]), ENTITIES, [])
    said = year_outside_span("How many games were played in 2010?", "SELECT count(*) FROM season_games WHERE "
                             "year(season) = 2010", None, facts)
    assert said.endswith("Also in the warehouse: game_attendance.season (1947-2023): read it from there."), said
    said = year_outside_span("How many games in 1900?", "SELECT count(*) FROM season_games WHERE season = 1900",
                             None, facts)
    assert said.endswith("No table about it holds that year: say the data does not cover it."), said


def test_every_check_has_a_case_that_it_catches_and_one_it_lets_pass():
    caught = {c["check"] for c in CASES} | {o for c in CASES for o in c.get("also", [])}
    assert caught - {None} == {c.name for c in checks.CHECKS}, "a check with no case, or a case naming none"
    assert sum(c["check"] is None for c in CASES) >= len(checks.CHECKS)


def test_every_check_says_what_it_catches():
    for check in checks.CHECKS:
        assert check.run.__doc__ and len(check.run.__doc__.split()) >= 8, check.name
        assert check.kind in checks.KINDS and len(check.fails_when.split()) >= 4, check.name
        assert check.module == f"utils/checks/{check.kind}.py", f"{check.name} is not in its kind's module"


def test_the_grader_sends_a_grain_mistake_back(small_db, isolated_env):
    from conftest import ask_with_drafts

    r, llm = ask_with_drafts(small_db, "What is the average points for each team?",
                             ["SELECT avg(points) FROM players",
                              "SELECT team_id, avg(points) FROM players GROUP BY team_id"])
    assert r.ok and len(r.df) == 3
    assert r.grades[0]["verdict"] == "fail" and "for each team" in r.grades[0]["critique"]
    second = llm.calls[1]["messages"][-1]["content"]
    assert "GROUP BY the team column" in second


def test_the_checks_page_names_every_check():
    page = (Path(__file__).resolve().parents[1] / "docs" / "checks.md").read_text()
    missing = [c.name for c in checks.CHECKS if f"`{c.name}`" not in page]
    assert not missing, f"docs/checks.md does not describe {missing}"



def test_the_grader_sends_a_literal_that_is_no_value_back_with_the_values(small_db, isolated_env):
    """The retry gets its one targeted sentence: 'boston' is no city; 'Boston' is (executed rows asserted)."""
    from conftest import ask_with_drafts

    r, llm = ask_with_drafts(small_db, "How many teams play in boston?",
                             ["SELECT count(*) AS teams FROM teams WHERE city = 'boston'",
                              "SELECT count(*) AS teams FROM teams WHERE city = 'Boston'"])
    assert r.ok and r.df.iloc[0, 0] == 1 and r.grades[0]["check"] == "literal_not_a_value"
    assert "'boston' is not a value of teams.city; it holds it spelt as stored: 'Boston'" in \
        llm.calls[1]["messages"][-1]["content"]

# -- issue 44: the value index and literal_not_a_value --------------------------------------------------------
VALUE_CASES = yaml.safe_load((Path(__file__).parent / "fixtures" / "value_index.yaml").read_text())


@pytest.mark.parametrize("literal, values, expected", VALUE_CASES["nearest"],
                         ids=[r[0] for r in VALUE_CASES["nearest"]])
def test_nearest_values_by_normal_form_abbreviation_containment_and_spelling(literal, values, expected):
    from duckask.utils.schema.value_index import nearest

    got = [list(x) for x in nearest(literal, values)]
    assert got[:len(expected)] == expected and (expected or got == [])


def test_the_value_index_reads_a_columns_values_once_and_not_a_number_or_a_huge_column(small_db, isolated_env):
    from duckask.utils.db.database import open_database
    from duckask.utils.schema import value_index
    from duckask.utils.schema.value_index import ValueIndex
    from duckask.utils.semantic import get_catalog

    db = open_database(small_db)
    index = ValueIndex.of(db, get_catalog(db))
    names = index.values("teams", "name")
    assert names and all(isinstance(v, str) for v in names) and index.values("teams", "id") is None
    assert index.values("nope", "x") is None and index.values("teams", "nope") is None
    calls = []
    real = db.run
    db.run = lambda *a, **k: calls.append(a) or real(*a, **k)
    try:
        assert index.values("TEAMS", "Name") == names and calls == []          # kept for the process
    finally:
        del db.run
    old = value_index.MAX_DISTINCT
    value_index.MAX_DISTINCT = 1
    value_index._CACHE.clear()
    try:
        assert index.values("players", "name") is None                        # too many values: not indexed
    finally:
        value_index.MAX_DISTINCT = old
        value_index._CACHE.clear()



def test_an_answer_the_grounding_checks_object_to_is_never_high_and_says_why(small_db, isolated_env):
    """The grader off: the answer stands, and AssessConfidence's grounding names what is missing (issue 44)."""
    from conftest import ask_with_drafts

    r, _ = ask_with_drafts(small_db, "How many players do the Celtics have?",
                           ["SELECT count(*) AS players FROM players"], grader="off")
    assert r.ok and r.df.iloc[0, 0] == 6
    signals = r.confidence["signals"]
    assert signals["ungrounded"] == ["constraint_dropped"] and r.confidence["level"] != "high"
    assert any("a condition the question states is missing" in x for x in r.confidence["reasons"])
    good, _ = ask_with_drafts(small_db, "How many players do the Celtics have?", [
        "SELECT count(*) AS players FROM players p JOIN teams t ON t.id = p.team_id WHERE t.name = 'Celtics'"],
        grader="off")
    assert good.df.iloc[0, 0] == 2 and good.confidence["signals"]["ungrounded"] == []
    assert good.confidence["signals"]["literals_verified"] is True


class CountedIndex(FixtureIndex):
    def __init__(self, counts: dict):
        super().__init__({"players": {"position": list(counts)}})
        self.counts = counts

    def count(self, table, column, value):
        return self.counts.get(value, 0)


@pytest.mark.parametrize("sql, says", VALUE_CASES["rare"]["cases"],
                         ids=[c[0][-40:] for c in VALUE_CASES["rare"]["cases"]])
def test_a_rare_spelling_beside_the_codes_most_rows_use_goes_back_with_them(sql, says):
    from duckask.utils.checks.grounding import literal_not_a_value

    got = literal_not_a_value("How many forwards are there?", sql, None,
                              Facts(values=CountedIndex(VALUE_CASES["rare"]["values"])))
    assert got == says if says is None else got.startswith(says), got


@pytest.mark.parametrize("table, fires", [
    ("games", False),       # dates of one season (Oct 2015 - Jun 2016) that includes the stated 2016
    ("stats", False),       # a table of one season, the one asked about
    ("later", True),        # a table of one season, another one: the answer is not about 2016
    ("seasons", True),      # two seasons in the table: the year must be filtered on
    ("coded", False),       # one value that is not a year (a season code): nothing to filter on
    ("teams", False),       # no time column at all
])
def test_a_stated_year_a_table_of_that_season_already_keeps(tmp_path, isolated_env, table, fires):
    """constraint_dropped leaves a year the tables the query reads hold alone (issue 44: a table of one season's
    game dates was sent back for 'in 2016' though every row is of that season)."""

    from duckask.utils.checks.coverage import constraint_dropped
    from duckask.utils.db.database import open_database
    from duckask.utils.schema.value_index import ValueIndex
    from duckask.utils.semantic import get_catalog

    path = duckdb_file(tmp_path / "years.duckdb",
                       "CREATE TABLE games AS SELECT DATE '2015-10-27' + CAST(i AS INTEGER) AS game_date, i AS pts "
                       "FROM range(236) t(i)",
                       "CREATE TABLE stats AS SELECT 2016 AS season, i AS pts FROM range(5) t(i)",
                       "CREATE TABLE later AS SELECT 2019 AS season, i AS pts FROM range(5) t(i)",
                       "CREATE TABLE seasons AS SELECT 2015 + i % 2 AS season, i AS pts FROM range(6) t(i)",
                       "CREATE TABLE coded AS SELECT 22016 AS season_id, i AS pts FROM range(3) t(i)",
                       "CREATE TABLE teams AS SELECT i AS pts FROM range(3) t(i)")
    db = open_database(path)
    facts = Facts(values=ValueIndex.of(db, get_catalog(db)))
    got = constraint_dropped("What was the most points in a game in 2016?", f"SELECT max(pts) FROM {table}", None,
                             facts)
    assert (got is not None) == fires, got
    if fires:
        assert "the year 2016" in got


def test_a_retry_is_shown_the_table_that_holds_the_year(tmp_path, isolated_env):
    """Issue 53, item 3: the season a curated table leaves out reaches the table that has it. The first draft reads
    ``season_games`` (2025 only) for 2010 and finds 0; year_outside_span names ``game_attendance`` (1947-2023), the
    retry's prompt shows that table's DDL under "Also in the warehouse", and its query answers."""
    from conftest import ask_with_drafts

    path = duckdb_file(tmp_path / "games.duckdb",
                       "CREATE TABLE season_games AS SELECT i AS game_id, 2025 AS season, i % 7 AS home_points "
                       "FROM range(30) t(i)",
                       "CREATE TABLE game_attendance AS SELECT i AS game_id, 1947 + i % 77 AS season, 1000 + i AS fans "
                       "FROM range(770) t(i)",
                       "CREATE TABLE coaches AS SELECT i AS coach_id, 'Coach ' || i AS coach_name FROM range(5) t(i)")
    r, llm = ask_with_drafts(path, "How many games were played in 2010?",
                             ["SELECT count(*) FROM season_games WHERE season = 2010",
                              "SELECT count(*) FROM game_attendance WHERE season = 2010"],
                             {"TableSelector": ["tables: [season_games]"]}, table_llm_threshold=1,
                             table_sure_band=1.0, max_fix_retries=0)
    first, retry = [c["messages"][-1]["content"] for c in llm.calls if c["node"] == "SQLGenerator"][:2]
    assert "game_attendance" not in first.split("Question:")[0], "the first prompt already showed the table"
    assert r.grades[0]["check"] == "year_outside_span" and r.grades[0]["reach"] == ["game_attendance"]
    assert "Also in the warehouse:\nCREATE TABLE game_attendance" in retry, retry
    assert r.ok and r.df.iloc[0, 0] == 10 and r.sql.endswith("season = 2010")


def test_the_facts_are_built_once_a_turn_and_handed_on(small_db, isolated_env, monkeypatch):
    """ResponseGrader builds the checks' facts and hands them on (the turn's ``facts``): its next round and
    AssessConfidence take them while what a literal may come from is the same, so a turn builds them once."""
    from duckask.utils.trust import grounding

    built = []
    monkeypatch.setattr(grounding, "Facts", lambda *a: built.append(a) or Facts(*a))
    r, _ = ask_with_drafts(small_db, "What is the average points for each team?",
                           ["SELECT avg(points) FROM players",
                            "SELECT team_id, avg(points) FROM players GROUP BY team_id"])
    assert r.ok and len(r.grades) == 2 and r.confidence is not None     # two grading rounds, then the confidence
    assert len(built) == 1


def test_facts_held_are_taken_only_while_what_a_literal_may_come_from_is_the_same():
    from duckask.utils.trust.grounding import _given, facts_for

    class Catalog:
        tables: dict = {}

    shared = {"original_question": "Who won in 2016?", "path": "sql"}
    held = Facts(set(), _given(shared), None)
    assert facts_for(Catalog(), None, shared, held)[0] is held
    shared["confirmations"] = [{"comment": "no, use 2018"}]          # the user said more: built again
    assert facts_for(Catalog(), None, shared, held)[0] is not held
