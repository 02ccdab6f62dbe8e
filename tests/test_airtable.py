"""Airtable as a source: field types mapped, the import and --refresh against a local Airtable-shaped server
(tests/airtable_stub.py: offset pagination, the schema endpoint, 429 with Retry-After, a malformed page)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
import yaml
from airtable_stub import BASE_ID, TOKEN, Stub, soccer_base
from conftest import clean_env

from duckask.utils.airtable.schema import Col, cell, duck_type, plan
from duckask.utils.semantic.airtable import AirtableError, import_base, refresh

pytestmark = pytest.mark.slow        # a stub Airtable server: not in the fast set (pytest -m "" runs it)

pytest.importorskip("pyairtable", reason="the airtable extra is not installed: pip install 'duckask[airtable]'")

# --------------------------------------------------------------------------- types, table-driven
TYPES = [
    ("singleLineText", None, "VARCHAR"), ("multilineText", None, "VARCHAR"), ("email", None, "VARCHAR"),
    ("url", None, "VARCHAR"), ("richText", None, "VARCHAR"), ("phoneNumber", None, "VARCHAR"),
    ("singleSelect", {"choices": []}, "VARCHAR"), ("multipleSelects", {"choices": []}, "VARCHAR[]"),
    ("number", {"precision": 0}, "BIGINT"), ("number", {"precision": 2}, "DOUBLE"), ("currency", {}, "DOUBLE"),
    ("percent", {}, "DOUBLE"), ("duration", {}, "DOUBLE"), ("rating", {}, "BIGINT"), ("autoNumber", None, "BIGINT"),
    ("count", {}, "BIGINT"), ("checkbox", {}, "BOOLEAN"), ("date", {}, "DATE"), ("dateTime", {}, "TIMESTAMP"),
    ("createdTime", {}, "TIMESTAMP"), ("lastModifiedTime", {}, "TIMESTAMP"),
    ("multipleAttachments", {}, "VARCHAR[]"), ("multipleCollaborators", None, "VARCHAR[]"),
    ("singleCollaborator", None, "VARCHAR"), ("createdBy", None, "VARCHAR"), ("barcode", None, "VARCHAR"),
    ("multipleRecordLinks", {"linkedTableId": "tblX"}, None),
    ("formula", {"result": {"type": "number", "options": {"precision": 0}}}, "BIGINT"),
    ("formula", {"result": {"type": "singleLineText"}}, "VARCHAR"),
    ("rollup", {"result": {"type": "currency"}}, "DOUBLE"),
    ("multipleLookupValues", {"result": {"type": "date"}}, "DATE[]"),
    ("multipleLookupValues", {"result": {"type": "multipleSelects"}}, "VARCHAR[]"),
    ("somethingNew", None, "VARCHAR"),
]


@pytest.mark.parametrize("kind,options,expected", TYPES, ids=[f"{t[0]}-{i}" for i, t in enumerate(TYPES)])
def test_field_type_maps_to_duckdb_type(kind, options, expected):
    assert duck_type(kind, options) == expected


CELLS = [
    ("VARCHAR", "singleCollaborator", {"id": "usr1", "email": "a@b.c", "name": "Ann"}, "Ann"),
    ("VARCHAR[]", "multipleAttachments", [{"id": "att1", "url": "https://x/y.png", "filename": "y.png"}],
     ["https://x/y.png"]),
    ("VARCHAR", "barcode", {"text": "978-3"}, "978-3"),
    ("BOOLEAN", "checkbox", None, False),                     # Airtable leaves an unticked box out
    ("BIGINT", "formula", {"specialValue": "NaN"}, None),
    ("VARCHAR", "formula", {"error": "#ERROR!"}, None),
    ("BIGINT", "number", 3.0, 3),
    ("DOUBLE", "rollup", "12.5", 12.5),
    ("BIGINT", "count", "n/a", None),
    ("VARCHAR", "number", 7, "7"),
    ("VARCHAR", "rollup", ["a", "b"], "a, b"),
    ("VARCHAR[]", "multipleLookupValues", [{"name": "Ann"}, "Bo"], ["Ann", "Bo"]),
]


@pytest.mark.parametrize("dtype,kind,value,expected", CELLS, ids=[f"{c[1]}-{i}" for i, c in enumerate(CELLS)])
def test_cell_values(dtype, kind, value, expected):
    assert cell(Col("fld", "c", dtype, kind, ""), value) == expected


def test_plan_names_links_once_and_keeps_select_options():
    plans, links = plan({"tables": soccer_base(3).schema})
    assert [p.name for p in plans] == ["teams", "players"]
    assert [(k.name, k.left_col, k.right_col) for k in links] == [("teams_players", "teams_id", "players_id")]
    age = next(c for c in plans[1].cols if c.name == "age_group")
    assert age.options == ["U8", "U9", "U10"] and "one of: U8, U9, U10" in age.comment
    assert [p.cross_table for p in plans] == [True, False]     # rollup/count/lookup on Teams only
    with pytest.raises(ValueError, match="schema.bases:read"):
        plan({"tables": []})


# --------------------------------------------------------------------------- the import
@pytest.fixture
def club():
    base = soccer_base(250)
    with Stub(base) as stub:
        yield base, stub


def _cli(args: list[str], tmp_path: Path, endpoint: str | None, token: str | None = TOKEN):
    extra = {"AIRTABLE_TOKEN": token} if token else {}
    if endpoint:
        extra["AIRTABLE_ENDPOINT_URL"] = endpoint
    env = {k: v for k, v in clean_env(tmp_path / "cache", **extra).items() if token or k != "AIRTABLE_TOKEN"}
    return subprocess.run([sys.executable, "-m", "duckask.utils.app.cli", "import", *args], env=env,
                          capture_output=True, text=True, timeout=120)


def _tables(path: Path) -> dict[str, list]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        names = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' "
                                           "ORDER BY 1").fetchall()]
        return {n: sorted(map(repr, con.execute(f'SELECT * FROM "{n}"').fetchall())) for n in names}
    finally:
        con.close()


def test_import_from_the_command_line(club, tmp_path):
    base, stub = club
    out = tmp_path / "club.duckdb"
    done = _cli(["airtable", BASE_ID, "--out", str(out)], tmp_path, stub.url)
    assert done.returncode == 0, done.stderr
    assert "import: 259 records; 3 tables: teams, players, teams_players" in done.stdout
    assert TOKEN not in done.stdout + done.stderr and TOKEN.encode() not in out.read_bytes()
    con = duckdb.connect(str(out), read_only=True)
    assert con.execute("SELECT count(*) FROM players WHERE age_group = 'U9'").fetchone()[0] == sum(
        r["fields"]["fldPAge"] == "U9" for r in base.records["tblPlayers"])
    assert con.execute("SELECT count(*) FROM teams_players").fetchone()[0] == 250
    fks = con.execute("SELECT referenced_table FROM duckdb_constraints() WHERE table_name = 'teams_players' "
                      "AND constraint_type = 'FOREIGN KEY' ORDER BY 1").fetchall()
    assert fks == [("players",), ("teams",)]
    comment = con.execute("SELECT comment FROM duckdb_columns() WHERE table_name = 'players' "
                          "AND column_name = 'age_group'").fetchone()[0]
    assert comment.startswith("Age group the player plays in; one of: U8, U9, U10")
    # The rollup and count are the values Airtable computed, a lookup a list, a collaborator a name.
    t = con.execute("SELECT total_goals, player_count, len(player_names), coach FROM teams WHERE id = 'recTU9000'"
                    ).fetchone()
    linked = [p for p in base.records["tblPlayers"] if p["fields"]["fldPTeam"] == ["recTU9000"]]
    assert t == (sum(p["fields"]["fldPGoals"] for p in linked), len(linked), len(linked), "Coach Adams")
    con.close()
    # Three pages of players (100 + 100 + 50), each after the last one's offset.
    offsets = [q.get("offset", [None])[0] for m, p, q in stub.log if p.endswith("/tblPlayers")]
    assert offsets == [None, "itr100", "itr200"]
    draft = list(yaml.safe_load_all((tmp_path / "club.semantic.yaml").read_text()))
    model = next(doc["semantic_model"] for doc in draft if doc.get("semantic_model", {}).get("name") == "players")
    dims = {d["name"]: d for d in model["dimensions"]}
    assert dims["age_group"]["config"]["meta"]["values"] == ["U8", "U9", "U10"]
    assert dims["age_group"]["description"].startswith("Age group the player plays in")
    again = _cli(["airtable", BASE_ID, "--out", str(out)], tmp_path, stub.url)
    assert again.returncode == 1 and "exists: pass --replace" in again.stderr


def test_rate_limit_is_waited_out(club, tmp_path):
    _base, stub = club
    stub.rate_limit_first, stub.retry_after = 2, "1"
    started = time.monotonic()
    done = import_base(BASE_ID, tmp_path / "c.duckdb", token=TOKEN, endpoint=stub.url)
    assert done.records == 259 and time.monotonic() - started >= 1.0     # Retry-After was honoured
    assert len(stub.log) == 2 + 1 + 1 + 3        # two 429s, the schema, teams, three pages of players


def test_a_malformed_page_stops_the_import_and_loses_nothing(club, tmp_path):
    _base, stub = club
    out = tmp_path / "club.duckdb"
    import_base(BASE_ID, out, token=TOKEN, endpoint=stub.url)
    before = out.read_bytes()
    stub.malformed.add(("tblPlayers", 2))
    with pytest.raises(AirtableError, match="page 2 of table 'Players'.*nothing was written|reading page 2 of "
                                            "table 'Players'.*not JSON"):
        import_base(BASE_ID, out, token=TOKEN, endpoint=stub.url, replace=True)
    assert out.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["club.duckdb",
                                                                                         "club.semantic.yaml"]


@pytest.mark.parametrize("token,endpoint,expected", [
    (None, "stub", "set AIRTABLE_TOKEN"),
    ("patWRONG.not-the-token", "stub", "HTTP 401 .*the token was refused"),
    (TOKEN, "http://127.0.0.1:9", "could not reach http://127.0.0.1:9"),
])
def test_clear_errors(club, tmp_path, token, endpoint, expected):
    _base, stub = club
    done = _cli(["airtable", BASE_ID, "--out", str(tmp_path / "x.duckdb")], tmp_path,
                stub.url if endpoint == "stub" else endpoint, token)
    assert done.returncode == 1
    assert __import__("re").search(expected, done.stderr), done.stderr
    assert "patWRONG" not in done.stderr and TOKEN not in done.stderr and not (tmp_path / "x.duckdb").exists()


def test_wrong_base_id(club, tmp_path):
    _base, stub = club
    with pytest.raises(AirtableError, match="HTTP 404.*check the base id"):
        import_base("appNOSUCHBASE0000", tmp_path / "x.duckdb", token=TOKEN, endpoint=stub.url)


# --------------------------------------------------------------------------- --refresh
def _change(base) -> None:
    """Ten players edited (goals, one moved team), one deleted, one added."""
    for i in range(1, 10):
        base.touch("tblPlayers", f"recP{i:05d}", {"fldPGoals": 40 + i})
    base.touch("tblPlayers", "recP00010", {"fldPTeam": ["recTU10001"], "fldPAge": "U10"})
    base.delete("tblPlayers", "recP00020")
    base.add("tblPlayers", {"id": "recPNEW01", "createdTime": "2026-11-24T09:00:00.000Z",
                            "fields": {"fldPName": "Nova Quinn", "fldPAge": "U9", "fldPTeam": ["recTU9000"]}})


def test_refresh_reads_only_changes_and_equals_a_fresh_import(club, tmp_path):
    base, stub = club
    out = tmp_path / "club.duckdb"
    import_base(BASE_ID, out, token=TOKEN, endpoint=stub.url)
    _change(base)
    stub.log.clear()
    done = _cli(["airtable", "--refresh", "--out", str(out)], tmp_path, stub.url)
    assert done.returncode == 0, done.stderr
    assert "refresh: " in done.stdout and "1 deleted" in done.stdout
    players = [q for m, p, q in stub.log if p.endswith("/tblPlayers")]
    changed = [q for q in players if "filterByFormula" in q]
    assert len(changed) == 1 and changed[0]["filterByFormula"][0].startswith("IS_AFTER(LAST_MODIFIED_TIME()")
    ids_only = [q for q in players if "fields[]" in q]
    assert ids_only and all(q["fields[]"] == ["fldPName"] for q in ids_only)
    fresh = tmp_path / "fresh.duckdb"
    import_base(BASE_ID, fresh, token=TOKEN, endpoint=stub.url)
    assert _tables(out) == _tables(fresh)


def test_refresh_after_a_schema_change_is_a_full_reload(club, tmp_path):
    base, stub = club
    out = tmp_path / "club.duckdb"
    import_base(BASE_ID, out, token=TOKEN, endpoint=stub.url)
    base.schema[1]["fields"].append({"id": "fldPShirt", "name": "Shirt Number", "type": "number",
                                     "options": {"precision": 0}})
    done = refresh(out, token=TOKEN, endpoint=stub.url)
    assert done.mode == "full reload (the base's schema changed)"
    con = duckdb.connect(str(out), read_only=True)
    assert "shirt_number" in [r[0] for r in con.execute("DESCRIBE players").fetchall()]
    con.close()


def test_a_failed_refresh_loses_nothing(club, tmp_path):
    base, stub = club
    out = tmp_path / "club.duckdb"
    import_base(BASE_ID, out, token=TOKEN, endpoint=stub.url)
    before = out.read_bytes()
    _change(base)
    stub.malformed.add(("tblTeams", 1))
    with pytest.raises(AirtableError, match="Teams"):
        refresh(out, token=TOKEN, endpoint=stub.url)
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["club.duckdb", "club.semantic.yaml"]


def test_refresh_needs_an_airtable_import(small_db, tmp_path):
    with pytest.raises(ValueError, match="was not made by `duckask import airtable`"):
        refresh(small_db, token=TOKEN, endpoint="http://127.0.0.1:9")


def test_the_module_runs_on_its_own(club, tmp_path):
    _base, stub = club
    env = dict(os.environ, AIRTABLE_TOKEN=TOKEN)
    done = subprocess.run([sys.executable, "-m", "duckask.utils.airtable.api", BASE_ID, "--endpoint", stub.url],
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "Age Group (singleSelect)" in done.stdout
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"tables": _base.schema}))
    done = subprocess.run([sys.executable, "-m", "duckask.utils.airtable.schema", str(schema)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and 'REFERENCES "teams"(id)' in done.stdout.replace("teams(", '"teams"(')


# --------------------------------------------------------------------------- end to end, the real model
@pytest.mark.model
def test_show_me_the_u9s_players(tmp_path):
    """The question from the issue, on an imported stub base: the executed result holds exactly the U9 players."""
    from conftest import embedded_model_path

    from duckask import ask

    base = soccer_base(60)
    with Stub(base) as stub:
        import_base(BASE_ID, tmp_path / "club.duckdb", token=TOKEN, endpoint=stub.url)
    r = ask("show me the u9s players", db=str(tmp_path / "club.duckdb"), model_path=embedded_model_path(),
            cache_dir=str(tmp_path / "cache"))
    assert r.status == "answered", r.answer
    names = {p["fields"]["fldPName"] for p in base.records["tblPlayers"] if p["fields"]["fldPAge"] == "U9"}
    column = next(c for c in r.df.columns if set(r.df[c].astype(str)) & names)
    assert set(r.df[column]) == names and len(r.df) == len(names), f"\n{r.sql}\n{r.df}"


def test_airtable_options_on_another_source_are_a_usage_error(tmp_path):
    done = _cli([str(tmp_path), "appX", "--out", str(tmp_path / "x.duckdb")], tmp_path, None)
    assert done.returncode == 2 and "are for `duckask import airtable`" in done.stderr


def test_refresh_while_this_process_has_the_file_open(club, tmp_path):
    """A server or chat that has the imported file open (duckask's shared connection) can still refresh it."""
    from duckask.utils.db.database import open_database

    base, stub = club
    out = tmp_path / "club.duckdb"
    import_base(BASE_ID, out, token=TOKEN, endpoint=stub.url)
    goals = "SELECT goals FROM players WHERE id = 'recP00003'"
    before = open_database(str(out)).run(goals).df.values.tolist()
    base.touch("tblPlayers", "recP00003", {"fldPGoals": 77})
    assert refresh(out, token=TOKEN, endpoint=stub.url).mode == "refresh"
    assert before != [[77]] and open_database(str(out)).run(goals).df.values.tolist() == [[77]]
