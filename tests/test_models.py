"""Model files as knowledge (issue 33): dbt-style SELECT models in a semantic directory, built as views in
duckask's own session (never in the user's file), and, when declared public, what table selection sees."""
from __future__ import annotations

import duckdb
import pytest
from conftest import sha256

from duckask.utils.api import ask
from duckask.utils.config import load_settings
from duckask.utils.db.database import DatabaseError, open_database
from duckask.utils.db.models import ModelError, build_views, load_models
from duckask.utils.llm import ScriptedLLM
from duckask.utils.semantic import get_catalog

# Two families describing the same people with other ids and spellings, as warehouses have them.
RAW = """
CREATE TABLE src_a_people (person_key VARCHAR, display VARCHAR, born VARCHAR, height_in VARCHAR);
INSERT INTO src_a_people VALUES ('p1', 'Ann Lee', '1990-04-01', '70'), ('p2', 'Bo Park', 'NA', 'NA');
CREATE TABLE src_b_people (id INTEGER, slug VARCHAR, college VARCHAR);
INSERT INTO src_b_people VALUES (10, 'ann-lee', 'Duke'), (11, 'bo-park', 'UCLA');
CREATE TABLE src_b_teams (id INTEGER, team VARCHAR, state VARCHAR);
INSERT INTO src_b_teams VALUES (1, 'Hornets', 'NC'), (2, 'Kings', 'CA');
"""
# Named so that the alphabet and the build order differ: people reads stg_people, which sorts after it.
MODELS = {
    "models/stg_people.sql": "-- the A family, typed: 'NA' as NULL\n{{ config(materialized='view') }}\n"
                             "SELECT person_key, display AS name, TRY_CAST(NULLIF(born, 'NA') AS DATE) AS birth_date,\n"
                             "       TRY_CAST(NULLIF(height_in, 'NA') AS INTEGER) AS height_in\n"
                             "FROM {{ source('warehouse', 'src_a_people') }}\n",
    "models/people.sql": "-- one row per person: names from the A family, colleges from the B family\n"
                         "SELECT s.name, s.birth_date, s.height_in, b.college\n"
                         "FROM {{ ref('stg_people') }} AS s\n"
                         "LEFT JOIN src_b_people AS b ON b.slug = lower(replace(s.name, ' ', '-'))\n",
}


# A semantic model over a model view: the plan path counts people by college.
PEOPLE = """semantic_model:
  name: people
  node_relation: {schema_name: main, alias: people}
  defaults: {agg_time_dimension: birth_date}
  entities: [{name: person, type: primary, expr: name}]
  dimensions:
    - {name: college, type: categorical}
    - {name: birth_date, type: time, type_params: {time_granularity: day}}
  measures: [{name: people_count, agg: count, expr: name, description: people}]
---
metric: {name: people_count, type: simple, label: people, type_params: {measure: people_count}}
"""


@pytest.fixture
def warehouse(tmp_path):
    db = tmp_path / "wh.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute(RAW)
    sem = tmp_path / "semantic"
    for rel, text in MODELS.items():
        (sem / rel).parent.mkdir(parents=True, exist_ok=True)
        (sem / rel).write_text(text)
    (sem / "duckask.yaml").write_text("duckask:\n  instructions: People are named by their full name.\n")
    (sem / "people.yaml").write_text(PEOPLE)
    return db, sem


def test_refs_resolve_and_models_build_in_dependency_order(warehouse):
    db, sem = warehouse
    models = load_models(sem)
    assert [m.name for m in models] == ["stg_people", "people"]
    assert models[1].refs == ["stg_people"] and models[0].sources == ["src_a_people"]
    assert models[0].description == "the A family, typed: 'NA' as NULL"
    assert '"stg_people"' in models[1].sql and "{{" not in models[1].sql
    with duckdb.connect(str(db), read_only=True) as con:
        assert build_views(con, models) == {"stg_people": 2, "people": 2}
        assert models[1].reads == ["stg_people", "src_b_people"]
        assert con.execute("SELECT name, college, height_in FROM people ORDER BY name").fetchall() == [
            ("Ann Lee", "Duke", 70), ("Bo Park", "UCLA", None)]


@pytest.mark.parametrize("name, text, message", [
    ("bad", "SELECT 1,\n  nope\nFROM {{ ref('people') }}\n", "bad.sql, line 2: Binder Error"),
    ("bad", "SELECT name\nFROM {{ ref('people') }}\nWHER name = 'x'\n", "bad.sql, line 3:"),
    ("bad", "-- a cast that fails on a row, not at binding\nSELECT\n  CAST(name AS INTEGER) AS n\n"
            "FROM {{ ref('people') }}\n", "bad.sql, line 3: Conversion Error"),
    ("bad", "SELECT 1\nFROM {{ ref('nobody') }}\n", "bad.sql, line 2: ref('nobody') names no model"),
    ("bad", "SELECT * FROM read_csv('/etc/passwd')\n", "bad.sql, line 1: a model is one read-only SELECT"),
    ("bad", "SELECT 1; SELECT 2\n", "exactly one statement"),
    ("bad", "SELECT {{ nonsense }}\n", "bad.sql: 'nonsense' is undefined"),
    ("bad", "SELECT 1 FROM {{ ref('bad') }}\n", "models ref each other in a cycle: bad (bad.sql)"),
    ("src_b_teams", "SELECT 1\n", "has the name of a table of the database"),
    ("bad", "{% if %}\n", "bad.sql, line 1:"),
])
def test_a_broken_model_is_named_with_its_file_and_line(warehouse, name, text, message):
    db, sem = warehouse
    (sem / "models" / f"{name}.sql").write_text(text)
    with pytest.raises(ModelError, match=None) as e:
        with duckdb.connect(str(db), read_only=True) as con:
            build_views(con, load_models(sem))
    assert message in str(e.value), str(e.value)


def test_a_broken_model_stops_opening_with_the_reason(warehouse, isolated_env):
    db, sem = warehouse
    (sem / "models" / "bad.sql").write_text("SELECT 1,\n  nope\nFROM {{ ref('people') }}\n")
    with pytest.raises(DatabaseError, match="a model of the semantic directory does not build: .*bad.sql, line 2"):
        open_database(db, load_settings(None, semantic=str(sem)))


def test_the_views_live_in_duckasks_session_and_the_users_file_is_unchanged(warehouse, isolated_env):
    db, sem = warehouse
    before = sha256(db)
    settings = load_settings(None, semantic=str(sem))
    database = open_database(db, settings)
    assert database.model_rows == {"stg_people": 2, "people": 2}
    out = database.run("SELECT name FROM people WHERE college = 'Duke'")       # every cursor has the views
    assert out.ok and out.df["name"].tolist() == ["Ann Lee"]
    cat = get_catalog(database, settings)
    assert cat.tables["people"].model and cat.tables["people"].reads == ["stg_people", "src_b_people"]
    assert "one row per person" in cat.tables["people"].comment
    assert [c.name for c in cat.tables["people"].columns] == ["name", "birth_date", "height_in", "college"]
    assert database.con.execute("SELECT count(*) FROM duckdb_views() WHERE NOT internal AND NOT temporary"
                                ).fetchone()[0] == 0      # nothing of the models in the file's own catalog
    assert sha256(db) == before
    # A changed model reopens the connection with it (the database's key carries the models' stamp).
    (sem / "models" / "people.sql").write_text("SELECT name FROM {{ ref('stg_people') }}\n")
    again = open_database(db, settings)
    assert again.run("SELECT * FROM people").df.columns.tolist() == ["name"] and again.key != cat.key
    assert sha256(db) == before


def _selected(db, sem, question, sql="SELECT name FROM people"):
    llm = ScriptedLLM({"SQLGenerator": [sql], "TableSelector": ["tables: [people]"]})
    r = ask(question, db=str(db), llm=llm, semantic=str(sem), router="rules", analyzer="rules", clarify="off",
            table_llm_threshold=1, plan_path="off")
    return r, llm


def test_public_models_are_what_table_selection_sees(warehouse, isolated_env):
    db, sem = warehouse
    r, _ = _selected(db, sem, "Which people went to Duke?")      # beside (the default): models and tables
    assert r.ok and r.df["name"].tolist() == ["Ann Lee", "Bo Park"]
    assert get_catalog(db, load_settings(None, semantic=str(sem))).hidden == set()
    (sem / "duckask.yaml").write_text("duckask:\n  models: public\n")
    cat = get_catalog(db, load_settings(None, semantic=str(sem)))
    assert cat.hidden == {"stg_people", "src_a_people", "src_b_people"}
    assert cat.visible("Which people went to Duke?") == ["src_b_teams", "people"]
    assert "src_b_people" in cat.visible("How many rows has src_b_people?")    # named: it comes back
    r, llm = _selected(db, sem, "Which people went to Duke?", "SELECT name FROM people WHERE college = 'Duke'")
    assert r.ok and r.df["name"].tolist() == ["Ann Lee"]
    assert set(r.tables) <= {"people", "src_b_teams"} and "people" in r.tables
    assert "src_a_people" not in llm.calls[-1]["messages"][1]["content"]


def test_models_setting_is_checked(warehouse, isolated_env):
    db, sem = warehouse
    (sem / "duckask.yaml").write_text("duckask:\n  models: everything\n")
    from duckask.utils.semantic.descriptions import SemanticFileError

    with pytest.raises(SemanticFileError, match="models: is public .* or beside"):
        get_catalog(db, load_settings(None, semantic=str(sem)))


def test_a_semantic_model_over_a_model_view_answers_a_plan(warehouse, isolated_env):
    db, sem = warehouse
    llm = ScriptedLLM({"PlanQuery": ["people_count]\ngroup_by: [person__college]"]})
    r = ask("What is the people count by college?", db=str(db), llm=llm, semantic=str(sem), analyzer="rules")
    assert r.path == "plan" and sorted(r.df.values.tolist()) == [["Duke", 1], ["UCLA", 1]]


def test_semantic_check_builds_the_models_first(warehouse, isolated_env, capsys):
    from duckask.utils.app.cli import main

    db, sem = warehouse
    assert main(["semantic", "check", str(sem), "--db", str(db)]) == 0
    assert "1 of 1 metrics compile and run" in capsys.readouterr().out
    (sem / "models" / "people.sql").write_text("SELECT 1,\n  nope\nFROM {{ ref('stg_people') }}\n")
    assert main(["semantic", "check", str(sem), "--db", str(db)]) != 0
    assert "people.sql, line 2: Binder Error" in capsys.readouterr().err


FAMILIES = """
CREATE TABLE alpha_player (id INTEGER, name VARCHAR, height VARCHAR);
INSERT INTO alpha_player VALUES (1, 'Ann Lee', '70'), (2, 'Bo Park', 'NA'), (3, 'Cy Young', '74');
CREATE TABLE beta_player_stats (player_id INTEGER, season INTEGER, pts VARCHAR);
INSERT INTO beta_player_stats VALUES (1, 2020, '10'), (1, 2021, '12'), (2, 2021, '3');
CREATE TABLE beta_team (id INTEGER, team VARCHAR);
INSERT INTO beta_team VALUES (1, 'Hornets');
CREATE TABLE alpha_team_info (team_id INTEGER, arena VARCHAR);
INSERT INTO alpha_team_info VALUES (1, 'Spectrum');
CREATE TABLE gamma_weather (day DATE, rain VARCHAR);
"""


def test_semantic_init_proposes_a_draft_model_per_entity_of_the_families(tmp_path, isolated_env):
    from duckask.utils.app.cli import main

    db = tmp_path / "fam.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute(FAMILIES)
    out = tmp_path / "knowledge"
    assert main(["semantic", "init", "--db", str(db), "-o", str(out / "semantic.yaml"), "--models", str(out)]) == 0
    drafts = sorted(p.name for p in (out / "models").glob("*.sql"))
    assert drafts == ["players.sql", "teams.sql"]               # gamma_weather is one family's alone
    players = (out / "models" / "players.sql").read_text()
    assert players.startswith("-- DRAFT") and "from alpha_player (3 rows)" in players   # one row per id
    assert "beta_player_stats (3 rows" in players
    assert "TRY_CAST(CASE WHEN trim(\"height\") IN ('NA'" in players and '"name"' in players
    assert load_models(out) == []                               # a draft is not built
    (out / "models" / "players.sql").write_text(players.replace("-- DRAFT", "-- reviewed", 1))
    database = open_database(db, load_settings(None, semantic=str(out)))
    assert database.model_rows == {"players": 3}
    assert database.run("SELECT sum(height) AS h FROM players").df["h"].tolist() == [144]   # 'NA' became NULL
    assert main(["semantic", "init", "--db", str(db), "-o", str(tmp_path / "again.yaml"), "--models", str(out)]) == 0
    assert (out / "models" / "players.sql").read_text().startswith("-- reviewed")      # never overwritten


# -- issue 43, finding 3: Jinja in a model file is text, never code ----------------------------------------------
HOSTILE = "{{ lipsum.__globals__['os'].system('touch PWNED') }}"


def test_a_hostile_column_name_stays_a_name_through_a_reviewed_draft(tmp_path, isolated_env, monkeypatch):
    """A column named like a Jinja expression that runs a shell command: ``semantic init --models`` writes it so
    that rendering gives the name back, and the reviewed draft builds with that column; nothing runs."""
    from duckask.utils.app.cli import main

    monkeypatch.chdir(tmp_path)
    db = tmp_path / "fam.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute(FAMILIES)
        con.execute(f'ALTER TABLE alpha_player ADD COLUMN "{HOSTILE}" VARCHAR DEFAULT \'x\'')
        con.execute("ALTER TABLE alpha_player ADD COLUMN \"a{% raw %}b{# c\" VARCHAR DEFAULT 'y'")
        con.execute("CREATE TABLE \"beta_player_x') }}{{ 7*7 }}\" (id INTEGER, height VARCHAR)")
    out = tmp_path / "knowledge"
    assert main(["semantic", "init", "--db", str(db), "-o", str(out / "semantic.yaml"), "--models", str(out)]) == 0
    players = (out / "models" / "players.sql").read_text()
    assert HOSTILE not in players                                 # written escaped, never as an expression
    (out / "models" / "players.sql").write_text(players.replace("-- DRAFT", "-- reviewed", 1))
    (m,) = [m for m in load_models(out) if m.name == "players"]
    assert f'"{HOSTILE}"' in m.sql and '"a{% raw %}b{# c"' in m.sql     # rendered back to the names as they are
    database = open_database(db, load_settings(None, semantic=str(out)))
    assert database.model_rows == {"players": 3}
    assert database.run(f'SELECT DISTINCT "{HOSTILE}" AS v FROM players').df["v"].tolist() == ["x"]
    assert not (tmp_path / "PWNED").exists() and not list(tmp_path.rglob("PWNED"))


@pytest.mark.parametrize("text", [
    f"SELECT 1 AS x -- {HOSTILE}\n",
    "SELECT '{{ ''.__class__.__mro__[1].__subclasses__() }}' AS x\n",
    "{% set x = cycler.__init__.__globals__.os.system('touch PWNED') %}SELECT 1 AS x\n",
    "SELECT {{ config.__class__.__init__.__globals__ }} AS x\n",
])
def test_a_model_file_reaching_pythons_internals_is_refused(tmp_path, monkeypatch, text):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "evil.sql").write_text(text)
    with pytest.raises(ModelError, match="evil.sql: refused: .*nothing of Python's"):
        load_models(tmp_path)
    assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize("name", ["x') }}{{ 7*7 }}", "a\\'b", "{% raw %}", "ok_name", "é{{x}}"])
def test_a_table_name_in_a_drafts_source_call_renders_back_as_itself(name):
    from duckask.utils.db.models import Model, _render
    from duckask.utils.semantic.families import _jinja_string, jinja_text

    m = Model(name="m", path="m.sql", text=f"SELECT {jinja_text(chr(34) + name + chr(34))} FROM "
                                          f"{{{{ source('db', {_jinja_string(name)}) }}}}")
    _render(m, {"m"})
    quoted = '"' + name.replace('"', '""') + '"'
    assert m.sql == f"SELECT {quoted} FROM {quoted}" and m.sources == [name]
