"""What one row of a table is (issue 63, item 3): found from the data, shown in the schema and the chooser's lines."""
from __future__ import annotations

import duckdb
import pytest

from duckask.utils.schema.catalog import Catalog
from duckask.utils.schema.ddl import render_ddl, table_line
from duckask.utils.schema.grain import MAX_ROWS, candidates, find_grain, grain_note
from duckask.utils.schema.introspect import introspect


def _columns(con, table):
    return [(n, t) for n, t in con.execute(f"SELECT column_name, data_type FROM duckdb_columns() "
                                            f"WHERE table_name = '{table}'").fetchall()]


def test_key_like_columns_are_tried_ids_first_then_time_then_names():
    cols = [("season", "INTEGER"), ("team", "VARCHAR"), ("PLAYER_ID", "BIGINT"), ("personId", "BIGINT"),
            ("pts", "INTEGER"), ("fg_pct", "DOUBLE"), ("player_name", "VARCHAR"), ("tags", "VARCHAR[]"),
            ("game_date", "DATE"), ("is_home", "BOOLEAN")]
    assert candidates(cols) == ["PLAYER_ID", "personId", "season", "game_date", "team", "player_name"]


def test_the_smallest_unique_combination_with_no_null_is_the_grain():
    con = duckdb.connect()
    con.execute("CREATE TABLE team_seasons AS SELECT t AS team_id, s AS season, t * s AS wins "
                "FROM range(1, 6) r(t), range(2000, 2004) q(s)")
    assert find_grain(con, "team_seasons", _columns(con, "team_seasons"), 20) == ["team_id", "season"]
    con.execute("CREATE TABLE players AS SELECT range AS player_id, 'P' || range AS player_name FROM range(10)")
    assert find_grain(con, "players", _columns(con, "players"), 10) == ["player_id"]
    # a unique column with a NULL in it is no key; the next combination that holds is taken
    con.execute("CREATE TABLE officials AS SELECT * FROM (VALUES (1, NULL, 'a'), (1, 2, 'b'), (2, 3, 'a')) "
                "v(game_id, official_id, official_name)")
    assert find_grain(con, "officials", _columns(con, "officials"), 3) == ["game_id", "official_name"]


def test_no_grain_where_no_combination_holds_or_the_table_is_too_big_or_has_no_key_like_column():
    con = duckdb.connect()
    con.execute("CREATE TABLE shots AS SELECT 1 AS player_id, range % 2 AS made FROM range(6)")
    assert find_grain(con, "shots", _columns(con, "shots"), 6) == []
    assert find_grain(con, "shots", _columns(con, "shots"), MAX_ROWS + 1) == []     # not even read
    con.execute("CREATE TABLE t AS SELECT range AS x FROM range(5)")
    assert find_grain(con, "t", _columns(con, "t"), 5) == []


def test_the_catalog_keeps_it_and_the_schema_and_the_chooser_show_it(tmp_path):
    path = tmp_path / "w.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE team_seasons AS SELECT t AS team_id, s AS season, t * s AS wins "
                "FROM range(1, 4) r(t), range(2000, 2003) q(s)")
    con.execute("CREATE TABLE teams (team_id INTEGER PRIMARY KEY, name VARCHAR)")
    con.execute("INSERT INTO teams VALUES (1, 'A'), (2, 'B'), (3, 'C')")
    con.close()
    from duckask.utils.db.database import open_database
    cat = introspect(open_database(path))
    assert cat.tables["team_seasons"].grain == ["team_id", "season"]
    assert cat.tables["teams"].grain == ["team_id"]                          # the declared key
    assert Catalog.from_json(cat.to_json()).tables["team_seasons"].grain == ["team_id", "season"]
    ddl = render_ddl(cat, ["team_seasons", "teams"])
    assert "CREATE TABLE team_seasons ( -- one row per team_id, season" in ddl
    assert "CREATE TABLE teams (\n" in ddl and "PRIMARY KEY" in ddl         # a declared key is said once, as a key
    assert table_line(cat.tables["team_seasons"]).startswith("- team_seasons (one row per team_id, season): ")
    assert table_line(cat.tables["teams"]).startswith("- teams (one row per team_id): ")


@pytest.mark.parametrize("grain,text", [([], ""), (["id"], "one row per id"), (["a", "b"], "one row per a, b")])
def test_grain_note(grain, text):
    assert grain_note(grain) == text
