"""Column pruning for wide tables (SchemaLookup, setting ``column_pruning``)."""
from __future__ import annotations

import duckdb
import pytest

from duckask.utils.api import ask
from duckask.utils.config import load_settings
from duckask.utils.db.database import open_database
from duckask.utils.llm import ScriptedLLM
from duckask.utils.schema.ddl import render_ddl
from duckask.utils.schema.ranker import keep_columns
from duckask.utils.semantic import get_catalog

STATS = [f"stat_{i:02d}" for i in range(30)]


@pytest.fixture(scope="module")
def wide_db(tmp_path_factory):
    """teams(id, name) <- box(id, team_id, player_name, points, rebounds, stat_00..stat_29): a 35-column table."""
    path = tmp_path_factory.mktemp("wide") / "wide.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE teams (id INTEGER PRIMARY KEY, name VARCHAR)")
    cols = ", ".join(f"{c} INTEGER" for c in STATS)
    con.execute(f"CREATE TABLE box (id INTEGER PRIMARY KEY, team_id INTEGER REFERENCES teams(id), "
                f"player_name VARCHAR, points INTEGER, rebounds INTEGER, {cols})")
    con.execute("COMMENT ON COLUMN box.stat_17 IS 'blocked shots'")
    con.execute("INSERT INTO teams VALUES (1, 'Lakers'), (2, 'Celtics')")
    con.execute(f"INSERT INTO box VALUES (1, 1, 'LeBron James', 30, 8, {', '.join(['1'] * 30)}), "
                f"(2, 2, 'Jayson Tatum', 28, 9, {', '.join(['2'] * 30)})")
    con.close()
    return path


def test_pruning_keeps_keys_named_columns_and_example_columns(wide_db, settings):
    cat = get_catalog(open_database(wide_db, settings), settings)
    keep = keep_columns(cat, ["box", "teams"], "Who had the most blocked shots and points?", [], 8, {"stat_29"})
    assert "teams" not in keep                                   # small tables stay whole
    kept = keep["box"]
    assert {"id", "team_id", "points", "stat_17", "stat_29", "player_name"} <= set(kept)
    assert len(kept) == 8 and kept == [c for c in ["id", "team_id", "player_name", "points", "rebounds", *STATS]
                                        if c in kept]            # in table order
    ddl = render_ddl(cat, ["box"], columns=keep, name_hidden=True)
    other = next(line for line in ddl.splitlines() if "other columns:" in line)
    hidden = [c for c in ["rebounds", *STATS] if c not in kept]
    assert other.strip() == "-- other columns: " + ", ".join(hidden)
    assert "points INTEGER" in ddl and "stat_01 INTEGER" not in ddl


@pytest.mark.parametrize("mode, shows_all, names_hidden", [("off", True, False), ("wide", False, True),
                                                            ("budget", True, False)])
def test_the_prompt_follows_the_pruning_mode(wide_db, isolated_env, mode, shows_all, names_hidden):
    llm = ScriptedLLM({"SQLGenerator": ["SELECT player_name, points FROM box ORDER BY points DESC LIMIT 1"]})
    r = ask("Who scored the most points?", db=str(wide_db), llm=llm, column_pruning=mode)
    prompt = llm.calls[0]["messages"][-1]["content"]
    assert r.ok and r.df.values.tolist() == [["LeBron James", 30]]
    assert ("stat_20 INTEGER" in prompt) is shows_all          # the budget mode prunes only past 3,600 chars
    assert ("other columns:" in prompt) is names_hidden
    assert "points INTEGER" in prompt and "team_id INTEGER REFERENCES teams(id)" in prompt


def test_unknown_pruning_mode_is_a_clear_error():
    with pytest.raises(ValueError, match="column_pruning takes one of budget, wide, off"):
        load_settings(None, column_pruning="sometimes")
