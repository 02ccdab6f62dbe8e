"""The semantic layer in dbt's spec: MetricFlow parses and compiles, duckask plans, translates and falls back.

Loading (good, a bad line, an unknown document), the SQL path reading the same file, conversion of the older
file, the draft generator, plan parsing and the where translation (tables of cases), plan -> SQL for each
metric type run on the demo database (executed results), every edge of the plan path with a scripted LLM,
and a dbt-style model directory for an orders/customers database built here, answered end to end."""
# ruff: noqa: F811  (pytest fixtures are imported from semantic_support and used as parameters by name)
from __future__ import annotations

import pytest
from semantic_support import DEMO, LEGACY, demo, layer  # noqa: F401 (fixtures are used by name)

from duckask.data.lahman import demo_db_path
from duckask.utils.config import load_settings
from duckask.utils.db.database import open_database
from duckask.utils.semantic import get_catalog
from duckask.utils.semantic.compile import compile_plan
from duckask.utils.semantic.descriptions import SemanticFileError, load_semantic
from duckask.utils.semantic.draft import convert, draft_documents, render
from duckask.utils.semantic.manifest import load_layer
from duckask.utils.semantic.plan import PlanError, describe, parse_plan, where_filters
from duckask.utils.semantic.reading import as_descriptions, reaches, reaches_list


# ------------------------------------------------------------------------------------------ loading
def test_the_demo_file_loads_with_metricflow(layer):
    assert {"home_runs", "batting_average", "era", "win_pct", "total_salary"} <= set(layer.metrics)
    assert {"player__full_name", "team_season__team_name", "year"} <= set(layer.dimensions)
    assert layer.metrics["batting_average"].kind == "ratio" and layer.metrics["era"].kind == "derived"
    assert layer.dimensions["player__full_name"].entity == "player"     # unique_by_entity
    assert not layer.draft


@pytest.mark.parametrize("text, message", [
    ("semantic_model:\n  name: tt\n  node_relation: {schema_name: main, alias: tt}\n  primary_entity: tt\n"
     "  measures:\n    - {name: h, agg: sum}\n", "line 1: name 'h' is not allowed: use lower-case letters"),
    ("metric: {name: mm, type: simple, type_params: {measure: nope}}\n", "nope"),
    ("semantic_model:\n  name: t\n---\ncube: {name: x}\n", "line 4: unknown document 'cube'"),
    ("metric: [\n", "not valid YAML"),
])
def test_a_bad_file_names_the_file_line_and_fix(tmp_path, text, message):
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    with pytest.raises(SemanticFileError) as e:
        load_layer(f)
    assert message in str(e.value) and ("bad.yaml" in str(e.value) or "semantic file" in str(e.value))


def test_the_sql_path_reads_the_same_file(tmp_path):
    data, _ = as_descriptions(load_layer(DEMO))
    assert "Name a person as one column" in data["instructions"]
    assert data["tables"]["batting"]["columns"]["hr"]["synonyms"] == ["homers", "home runs"]
    assert data["tables"]["batting"]["columns"]["player_id"]["references"] == "people.player_id"
    # Ratios and derived metrics become SQL expressions for the SQL path; a plain SUM(column) does not.
    assert data["metrics"]["era"]["expression"] == "27.0 * SUM(er) / NULLIF(SUM(ip_outs), 0)"
    assert "home_runs" not in data["metrics"]
    cat = get_catalog(str(demo_db_path()), load_settings(None, descriptions=str(DEMO), cache_dir=str(tmp_path)))
    assert cat.tables["people"].column("birth_country").allowed[:2] == ["USA", "D.R."]
    assert "winning percentage" in {m.name: m.description for m in cat.metrics}["win_pct"]


def test_the_setting_answers_to_semantic_too(tmp_path, monkeypatch):
    assert load_settings(None, semantic=str(DEMO)).descriptions == str(DEMO)
    monkeypatch.setenv("DUCKASK_SEMANTIC", str(DEMO))
    assert load_settings(None).descriptions == str(DEMO)


# ------------------------------------------------------------------------------------------ drafts
def test_convert_keeps_everything_of_the_older_file(tmp_path):
    db = open_database(demo_db_path(), load_settings(None, cache_dir=str(tmp_path)))
    cat = get_catalog(db, load_settings(None, cache_dir=str(tmp_path)))
    old = load_semantic(LEGACY)[0]
    out = tmp_path / "converted.yaml"
    out.write_text(render(convert(db, cat, old), "demo"))
    converted = as_descriptions(load_layer(out))[0]
    assert converted["instructions"].strip() == old["instructions"].strip()
    assert converted["metrics"]["win_pct"] == old["metrics"]["win_pct"]
    for tname, spec in old["tables"].items():
        for cname, col in (spec.get("columns") or {}).items():
            col = col if isinstance(col, dict) else {"description": col}
            got = {**converted["tables"][tname]["columns"][cname]}
            assert all(got.get(k) == v for k, v in col.items()), (tname, cname, got, col)
        if spec.get("synonyms"):
            assert converted["tables"][tname]["synonyms"] == spec["synonyms"]


@pytest.mark.slow           # MetricFlow validates a draft of every table (about 13 s)
def test_the_draft_is_valid_and_keys_become_entities(tmp_path):
    settings = load_settings(None, cache_dir=str(tmp_path))
    db = open_database(demo_db_path(), settings)
    docs = draft_documents(db, get_catalog(db, settings))
    f = tmp_path / "draft.yaml"
    f.write_text(render(docs, "demo"))
    layer = load_layer(f)
    assert layer.draft and "DRAFT" in f.read_text()
    models = {d["semantic_model"]["name"]: d["semantic_model"] for d in docs if "semantic_model" in d}
    assert {"name": "people", "type": "primary", "expr": '"player_id"'} in models["people"]["entities"]
    assert {"name": "people", "type": "foreign", "expr": '"player_id"'} in models["batting"]["entities"]
    lg = next(d for d in models["allstar_full"]["dimensions"] if d["name"] == "lg_id")
    assert lg["config"]["meta"]["values"] == ["AL", "NL"]
    assert "batting_hr" in layer.metrics and "allstar_full__lg_id" in layer.dimensions
    assert not __import__("duckask.utils.semantic.verify", fromlist=["x"]).verify_metrics(layer, db)[:1]


# ------------------------------------------------------------------------------------------ plans
@pytest.mark.parametrize("text, expect", [
    ("metrics: [home_runs]\ngroup_by: [full_name]\nwhere: [year = 2019]\norder_by: [-home_runs]\nlimit: 1",
     {"metrics": ["home_runs"], "group_by": ["player__full_name"], "where": ["year = 2019"],
      "order_by": ["-home_runs"], "limit": 1}),
    ("metrics: home_runs, hits\norder_by: [hits desc]",
     {"metrics": ["home_runs", "hits"], "group_by": [], "where": [], "order_by": ["-hits"], "limit": None}),
    ("metrics: [era]\norder_by: [year]", {"metrics": ["era"], "group_by": ["year"], "where": [],
                                          "order_by": ["year"], "limit": None}),
    ("```yaml\nmetrics: [saves]\nwhere: team_name = Boston Red Sox\n```",
     {"metrics": ["saves"], "group_by": [], "where": ["team_season__team_name = Boston Red Sox"],
      "order_by": [], "limit": None}),
    ("metrics: [homers]", {"metrics": ["home_runs"], "group_by": [], "where": [], "order_by": [], "limit": None}),
    ("metrics: [shoe_sales]", "unknown metric"),
    # Filters joined by AND are split; a dimension the filters fix is not grouped by (a constant column);
    # a dimension listed as a metric is grouped by; a column name stands for its dimension.
    ("metrics: [wins, team_season__division]\ngroup_by: [team_name, year]\n"
     "where: [\"team_name = 'New York Yankees' AND metric_time__year = 2009\"]",
     {"metrics": ["team_wins"], "group_by": ["team_season__division"],
      "where": ["team_season__team_name = 'New York Yankees'", "year = 2009"], "order_by": [], "limit": None}),
    ("metrics: [home_runs]\ngroup_by: [people.birth_country]", {"metrics": ["home_runs"], "where": [], "order_by": [],
                                                               "group_by": ["player__birth_country"], "limit": None}),
    ("metrics: [hits]\ngroup_by: [full_name, home_runs]",
     {"metrics": ["hits", "home_runs"], "where": [], "group_by": ["player__full_name"], "order_by": [], "limit": None}),
    ("metrics: [awards_won]\ngroup_by: [award_id]", {"metrics": ["awards_won"], "group_by": ["award_win__award"],
                                                     "where": [], "order_by": [], "limit": None}),
    ("metrics: []", "names no metric"),
    # A plan without a metric lists the values of its dimensions (MetricFlow's dimension-values query).
    ("metrics: []\ngroup_by: [full_name]\nwhere: [birth_country = Japan]",
     {"metrics": [], "group_by": ["player__full_name"], "where": ["player__birth_country = Japan"], "order_by": [],
      "limit": None}),
    ("metrics: []\ngroup_by: [full_name]\nwhere: [year = 2019]", "cannot use year"),
    ("metrics: []\ngroup_by: [birth_country]\nwhere: [birth_country = Japan]", "no dimension to list"),
    ("metrics: [home_runs]\ngroup_by: [shoe_size]", "unknown dimension 'shoe_size'"),
    ("metrics: [home_runs]\nwhere: [home_runs > 30]", "is on a metric"),
    ("metrics: [home_runs]\nwhere: [2019]", "write it as name operator value"),
    ("metrics: [home_runs]\nwhere: [\"people.birth_country = 'CAN'\"]", {"metrics": ["home_runs"], "group_by": [],
     "where": ["player__birth_country = 'CAN'"], "order_by": [], "limit": None}),
    ("metrics: [home_runs]\nlimit: ten", "limit must be a positive whole number"),
    ("metrics: [home_runs]\nhaving: x", "unknown plan key"),
    ("metrics: [home_runs\n", "not valid YAML"),
    ("- home_runs", "must be a mapping"),
])
def test_plan_parsing(layer, text, expect):
    if isinstance(expect, str):
        with pytest.raises(PlanError, match=expect):
            parse_plan(text, layer)
    else:
        assert parse_plan(text, layer).as_dict() == expect


@pytest.mark.parametrize("where, expect", [
    ("year = 2019", "{{ TimeDimension('metric_time', 'year') }} = '2019-01-01'"),
    ("year >= 2000", "{{ TimeDimension('metric_time', 'year') }} >= '2000-01-01'"),
    ("year between 1990 and 1999", "{{ TimeDimension('metric_time', 'year') }} >= '1990-01-01' AND "
                                   "{{ TimeDimension('metric_time', 'year') }} <= '1999-01-01'"),
    ("batting_league = AL", "{{ Dimension('batting_stint__batting_league') }} = 'AL'"),
    ("full_name = \"Babe Ruth\"", "{{ Dimension('player__full_name') }} = 'Babe Ruth'"),
    ("full_name = O'Neil", "{{ Dimension('player__full_name') }} = 'O''Neil'"),
    ("birth_country in (USA, 'D.R.')", "{{ Dimension('player__birth_country') }} IN ('USA', 'D.R.')"),
    ("height > 80", "{{ Dimension('player__height') }} > 80"),
    ("year = 'post'", PlanError),
    ("birth_country is null", "{{ Dimension('player__birth_country') }} IS NULL"),
    ("birth_country IS NOT NULL", "{{ Dimension('player__birth_country') }} IS NOT NULL"),
    ("team_name like '%Sox'", "{{ Dimension('team_season__team_name') }} LIKE '%Sox'"),
])
def test_plain_filters_become_metricflow_where(layer, where, expect):
    plan = parse_plan(f"metrics: [home_runs]\nwhere: [\"{where}\"]" if '"' not in where
                      else f"metrics: [home_runs]\nwhere: ['{where}']", layer)
    if expect is PlanError:
        with pytest.raises(PlanError, match="year must be compared with a year"):
            where_filters(plan, layer)
    else:
        assert where_filters(plan, layer) == [expect]


# Each metric type, run on the demo database: the answers are the databank's records.
@pytest.mark.parametrize("plan, rows", [
    ("metrics: [home_runs]\ngroup_by: [full_name]\nwhere: [year = 2019]\norder_by: [-home_runs]\nlimit: 1",
     [("Pete Alonso", 53)]),
    ("metrics: [home_runs]\ngroup_by: [full_name, year]\norder_by: [-home_runs]\nlimit: 1",
     [("Barry Bonds", 2001, 73)]),
    # Career: the two Frank Thomases stay apart (unique_by_entity), so Bonds leads.
    ("metrics: [home_runs]\ngroup_by: [full_name]\norder_by: [-home_runs]\nlimit: 1", [("Barry Bonds", 762)]),
    ("metrics: [batting_average]\ngroup_by: [team_name]\nwhere: [year = 2019]\norder_by: [-batting_average]\n"
     "limit: 1", [("Houston Astros", pytest.approx(0.274, abs=1e-3))]),
    ("metrics: [era]\ngroup_by: [full_name]\nwhere: [year = 2019, full_name = Gerrit Cole]",
     [(pytest.approx(2.50, abs=0.01),)]),      # the name is fixed by the filter: no name column
    ("metrics: [win_pct]\ngroup_by: [team_name]\nwhere: [year = 2001, team_name = Seattle Mariners]",
     [(pytest.approx(116 / 162, abs=1e-4),)]),
    ("metrics: [players]\nwhere: [birth_country = Venezuela]", None),
])
def test_each_metric_type_compiles_and_answers(layer, demo, plan, rows):
    got = demo.execute(compile_plan(layer, parse_plan(plan, layer))).fetchall()
    if rows is None:   # the count equals a direct count of the same rows
        rows = demo.execute("SELECT count(*) FROM people WHERE birth_country = 'Venezuela'").fetchall()
    assert got == rows


def test_what_metricflow_cannot_join_is_a_plan_error(layer):
    with pytest.raises(PlanError, match="MetricFlow cannot compile"):
        compile_plan(layer, parse_plan("metrics: [attendance]\ngroup_by: [award]", layer))


def test_which_questions_reach_a_metric(layer):
    assert "home_runs" in reaches("Who hit the most home runs in 2019?", layer)
    assert "total_salary" in reaches("Which team had the highest payroll in 2010?", layer)
    assert reaches("Where was Babe Ruth born?", layer) == []
    assert reaches_list("Which players were born in Japan?", layer) == ["people"]
    assert reaches_list("List the teams that won a pennant", layer)
    assert reaches_list("Where was Babe Ruth born?", layer) == []        # not asked as a list
    assert reaches_list("Which months are the warmest?", layer) == []    # names no entity of the file


def test_a_list_plan_compiles_and_runs(layer, demo):
    plan = parse_plan("metrics: []\ngroup_by: [full_name]\nwhere: [birth_country = Japan]", layer)
    assert describe(plan, layer) == "the values of player, birth country is Japan"
    names = [r[0] for r in demo.execute(compile_plan(layer, plan)).fetchall()]
    assert "Yu Darvish" in names and "Ichiro Suzuki" in names and len(names) > 50
