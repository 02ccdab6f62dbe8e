"""The semantic layer in dbt's spec: MetricFlow parses and compiles, duckask plans, translates and falls back.

Loading (good, a bad line, an unknown document), the SQL path reading the same file, conversion of the older
file, the draft generator, plan parsing and the where translation (tables of cases), plan -> SQL for each
metric type run on the demo database (executed results), every edge of the plan path with a scripted LLM,
and a dbt-style model directory for an orders/customers database built here, answered end to end."""
from __future__ import annotations

import duckdb
import pytest

from duckask.data.lahman import demo_db_path
from duckask.utils.app.api import ask
from duckask.utils.app.cli import main as cli_main
from duckask.utils.config import load_settings
from duckask.utils.db.database import open_database
from duckask.utils.knowledge.demo import DATA
from duckask.utils.llm import ScriptedLLM
from duckask.utils.schema import get_catalog
from duckask.utils.schema.descriptions import SemanticFileError, load_semantic
from duckask.utils.semantic.catalog import as_descriptions, reaches, reaches_list
from duckask.utils.semantic.compile import compile_plan
from duckask.utils.semantic.draft import convert, draft_documents, render
from duckask.utils.semantic.manifest import load_layer
from duckask.utils.semantic.plan import PlanError, describe, parse_plan, where_filters

DEMO = DATA / "lahman_semantic.yaml"
LEGACY = DATA / "lahman_semantic_legacy.yaml"


@pytest.fixture(scope="module")
def layer():
    return load_layer(DEMO)


class _Runner:
    """The demo database through duckask's read-only executor (the connection other tests share)."""

    def __init__(self, db):
        self.db = db

    def execute(self, sql):
        out = self.db.run(sql)
        assert out.ok, out.error
        self.rows = [tuple(r) for r in out.df.itertuples(index=False)]
        return self

    def fetchall(self):
        return self.rows


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return _Runner(open_database(demo_db_path(), load_settings(None, cache_dir=str(tmp_path_factory.mktemp("c")))))


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
    assert describe(plan, layer) == "the values of player__full_name; where player__birth_country = Japan"
    names = [r[0] for r in demo.execute(compile_plan(layer, plan)).fetchall()]
    assert "Yu Darvish" in names and "Ichiro Suzuki" in names and len(names) > 50


# ------------------------------------------------------------------------------------------ the graph
HR_2019 = "home_runs]\ngroup_by: [full_name]\nwhere: [year = 2019]\norder_by: [-home_runs]\nlimit: 1"
SQL_ANSWER = "```sql\nSELECT 'Pete Alonso' AS player, 53 AS home_runs\n```"


def _ask(question, script, **options):
    llm = ScriptedLLM({"DataAnalyzer": ["Pete Alonso hit 53."], "TableSelector": ["tables: [batting, people]"],
                       "SQLGenerator": [SQL_ANSWER], **script})
    return ask(question, llm=llm, analyzer="template", **options), llm


def _nodes(r):
    return [f"{t['node']}:{t['action']}" for t in r.trace]


def test_a_plan_answers(isolated_env):
    r, llm = _ask("Who hit the most home runs in 2019?", {"PlanQuery": [HR_2019]})
    assert r.path == "plan" and r.df.values.tolist() == [["Pete Alonso", 53]]
    assert "PlanQuery:planned" in _nodes(r) and "SQLGenerator:default" not in _nodes(r)
    assert r.derivation.startswith("home_runs = sum of batting.hr; by player__full_name; where year = 2019")
    assert r.plan["plan"]["metrics"] == ["home_runs"] and "Plan (MetricFlow wrote the SQL)" in r.to_text() \
        if hasattr(r, "to_text") else True
    prompt = llm.calls[0]["messages"][1]["content"]
    assert prompt.startswith("Catalog:\nNotes:") and "- home_runs: home runs hit" in prompt


@pytest.mark.parametrize("reply, why", [
    ("shoe_sales]", "unknown metric"),                                  # a name the catalog lacks
    ("attendance]\ngroup_by: [award]", "MetricFlow cannot compile"),    # names that do not join
    ("home_runs]\ngroup_by: [team_name]\nwhere: [full_name = Nobody At All]", "found nothing"),  # no rows
    ("home_runs]\nwhere: [full_name = Nobody At All]", "only NULL values"),   # one NULL: the grader objects
    (RuntimeError("endpoint down"), "the LLM call failed"),
])
def test_a_plan_that_does_not_hold_goes_to_the_sql_path(isolated_env, reply, why):
    r, _ = _ask("Who hit the most home runs in 2019?", {"PlanQuery": [reply]})
    assert r.path == "sql" and r.status == "answered" and r.df.values.tolist() == [["Pete Alonso", 53]]
    assert why in (r.plan.get("why") or r.plan.get("fallback") or "")
    assert "SQLGenerator:default" in _nodes(r)


def test_the_grader_objecting_sends_a_plan_to_the_sql_path(isolated_env):
    # "How many ..." wants one number: a plan grouped by name returns many rows, the rules grader objects.
    r, _ = _ask("How many home runs did each player hit in 2019?", {"PlanQuery": ["home_runs]\ngroup_by: [full_name]\n"
                                                                                   "where: [year = 2019]"]})
    graded = [g for g in r.grades if g["verdict"] == "fail"]
    assert (r.path == "plan" and not graded) or (r.path == "sql" and "grader objected" in r.plan["fallback"])


def test_a_question_asking_for_a_list_is_answered_by_a_plan_without_a_metric(isolated_env):
    r, llm = _ask("List the franchises that are still active", {"PlanQuery": [
        "]\ngroup_by: [franchise__franchise_name]\nwhere: [franchise__active = Y]"]})
    assert r.path == "plan" and "Boston Red Sox" in r.df.iloc[:, 0].tolist() and len(r.df) == 30
    assert r.plan["reached"] == ["list of franchises"]
    assert r.derivation.startswith("the values of franchise__franchise_name")
    assert "metrics: []" in llm.calls[0]["messages"][1]["content"]          # the list note, after the question


# With candidates on, a plan and the SQL path's drafts are candidates of each other (issue 32).
OTHER = "```sql\nSELECT 'Christian Yelich' AS player, 44 AS home_runs\n```"


def test_a_plan_the_sql_drafts_agree_with_is_confirmed(isolated_env):
    r, llm = _ask("Who hit the most home runs in 2019?", {"PlanQuery": [HR_2019]}, candidates=1)
    assert "PlanQuery:both" in _nodes(r) and "SQLGenerator:default" in _nodes(r)
    assert r.path == "plan" and r.df.values.tolist() == [["Pete Alonso", 53]]
    assert r.derivation.startswith("home_runs = sum of batting.hr")
    plan = [b for b in r.vote if b["plan"]]
    assert len(plan) == 1 and plan[0]["chosen"] and all(b["agrees"] for b in r.vote)
    sig = r.confidence["signals"]
    assert (sig["drafts"], sig["agree"], sig["dissent"]) == (3, 3, 0)
    assert not any("not confirmed" in x for x in r.confidence["reasons"])


def test_sql_drafts_that_outvote_a_plan_answer_on_the_sql_path(isolated_env):
    r, _ = _ask("Who hit the most home runs in 2019?", {"PlanQuery": [HR_2019], "SQLGenerator": [OTHER]},
                candidates=1)
    assert r.path == "sql" and r.df.values.tolist() == [["Christian Yelich", 44]]
    assert [b["agrees"] for b in r.vote if b["plan"]] == [False]
    sig = r.confidence["signals"]
    assert (sig["drafts"], sig["agree"], sig["dissent"]) == (3, 2, 1) and r.confidence["level"] != "high"


def test_a_raced_plan_the_checks_reject_moves_to_the_sql_group(isolated_env):
    # One number asked, the plan groups by player: the checks reject it, and the SQL drafts' group is served.
    many = "home_runs]\ngroup_by: [full_name]\nwhere: [year = 2019]"
    r, llm = _ask("How many home runs were hit in 2019 in all?", {"PlanQuery": [many],
                  "SQLGenerator": ["```sql\nSELECT 6776 AS home_runs\n```", SQL_ANSWER]}, candidates=1)
    assert "ResponseGrader:fallback" not in _nodes(r) and "PlanQuery:both" in _nodes(r)
    assert r.path == "sql" or r.df.values.tolist() != []
    assert llm.count("SQLGenerator") == 2 and llm.count("PlanQuery") == 1


def test_with_confirm_on_a_plan_is_not_raced(isolated_env):
    r, llm = _ask("Who hit the most home runs in 2019?", {"PlanQuery": [HR_2019]}, candidates=1, confirm=True)
    assert "PlanQuery:planned" in _nodes(r) and r.status == "pending" and not llm.count("SQLGenerator")


def test_when_the_sql_path_cannot_draft_the_raced_plan_answers(isolated_env):
    r, _ = _ask("Who hit the most home runs in 2019?", {"PlanQuery": [HR_2019],
                                                        "SQLGenerator": [RuntimeError("endpoint down")]}, candidates=1)
    assert r.path == "plan" and r.df.values.tolist() == [["Pete Alonso", 53]]


@pytest.mark.parametrize("question, options, why", [
    ("Where was Babe Ruth born?", {}, "names no metric"),
    ("Who hit the most home runs in 2019?", {"plan_path": "off"}, "plan_path is off"),
    ("Who hit the most home runs in 2019?", {"descriptions": str(LEGACY)}, "no semantic file in dbt's format"),
])
def test_no_plan_without_a_metric_or_a_layer(isolated_env, question, options, why):
    r, llm = _ask(question, {"PlanQuery": [AssertionError("no plan call expected")]}, **options)
    assert r.path == "sql" and why in r.plan["why"]
    assert not [c for c in llm.calls if c["node"] == "PlanQuery"]


# ------------------------------------------------------------------------------------------ a dbt project
MODELS = {
    "customers.yml": """\
semantic_model:
  name: customers
  description: One row per customer
  node_relation: {schema_name: main, alias: customers}
  defaults: {agg_time_dimension: signed_up}
  entities:
    - {name: customer, type: primary, expr: id}
  dimensions:
    - {name: customer_name, type: categorical, expr: name, config: {meta: {unique_by_entity: true}}}
    - {name: region, type: categorical, config: {meta: {values: [North, South]}}}
    - {name: signed_up, type: time, expr: signup_date, type_params: {time_granularity: day}}
  measures:
    - {name: customer_rows, agg: sum, expr: "1"}
""",
    "orders.yml": """\
semantic_model:
  name: orders
  description: One row per order
  node_relation: {schema_name: main, alias: orders}
  defaults: {agg_time_dimension: ordered_at}
  entities:
    - {name: order_id, type: primary, expr: id}
    - {name: customer, type: foreign, expr: customer_id}
  dimensions:
    - {name: ordered_at, type: time, expr: order_date, type_params: {time_granularity: day}}
    - {name: status, type: categorical}
  measures:
    - {name: amount_sum, agg: sum, expr: amount}
    - {name: order_rows, agg: sum, expr: "1"}
""",
    "metrics/revenue.yml": """\
metric: {name: revenue, description: order amounts, type: simple, type_params: {measure: amount_sum},
         config: {meta: {synonyms: [sales]}}}
---
metric: {name: orders, description: number of orders, type: simple, type_params: {measure: order_rows}}
---
metric:
  name: average_order_value
  type: ratio
  type_params: {numerator: {name: revenue}, denominator: {name: orders}}
""",
}


def write_models(folder, change=lambda text: text):
    """MODELS as a dbt-style directory (subfolders included), each file passed through ``change``."""
    for name, text in MODELS.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(change(text))
    return folder


@pytest.fixture
def shop(tmp_path):
    db = tmp_path / "shop.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name VARCHAR, region VARCHAR, signup_date DATE)")
    con.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), "
                "order_date DATE, status VARCHAR, amount DOUBLE)")
    con.execute("INSERT INTO customers VALUES (1, 'Ada', 'North', '2024-01-05'), (2, 'Bo', 'South', '2024-02-01'),"
                " (3, 'Ada', 'South', '2024-03-01')")
    con.execute("INSERT INTO orders VALUES (1, 1, '2024-01-10', 'paid', 100), (2, 1, '2024-02-10', 'paid', 50),"
                " (3, 2, '2024-02-11', 'paid', 70), (4, 3, '2024-03-12', 'refunded', 30),"
                " (5, 3, '2025-01-02', 'paid', 40)")
    con.close()
    return db, write_models(tmp_path / "models")


def test_a_dbt_model_directory_answers_end_to_end(isolated_env, shop):
    db, models = shop
    plan = "revenue]\ngroup_by: [region]\nwhere: [status = paid, year = 2024]\norder_by: [-revenue]"
    llm = ScriptedLLM({"PlanQuery": [plan]})
    r = ask("What were sales by region in 2024?", db=str(db), llm=llm, semantic=str(models), analyzer="template")
    assert r.path == "plan" and r.df.values.tolist() == [["North", 150.0], ["South", 70.0]]
    r = ask("Which customer has the highest average order value?", db=str(db), semantic=str(models),
            analyzer="template", llm=ScriptedLLM({"PlanQuery": ["average_order_value]\ngroup_by: [customer_name]\n"
                                                                "order_by: [-average_order_value]"]}))
    # The two customers named Ada stay apart: (100 + 50) / 2 = 75, then Bo 70, then the other Ada 35.
    assert r.path == "plan" and r.df.values.tolist() == [["Ada", 75.0], ["Bo", 70.0], ["Ada", 35.0]]


def test_semantic_init_and_check_on_the_command_line(isolated_env, shop, tmp_path, capsys):
    db, models = shop
    assert cli_main(["semantic", "check", str(models), "--db", str(db)]) == 0
    assert "3 of 3 metrics compile and run" in capsys.readouterr().out
    out = tmp_path / "draft.yaml"
    assert cli_main(["semantic", "init", "--db", str(db), "-o", str(out)]) == 0
    assert cli_main(["semantic", "init", "--db", str(db), "-o", str(out)]) != 0     # no silent overwrite
    assert cli_main(["semantic", "check", str(out), "--db", str(db)]) == 0
    assert "orders_amount" in capsys.readouterr().out
    bad = write_models(tmp_path / "bad", lambda text: text.replace("alias: orders", "alias: purchases"))
    assert cli_main(["semantic", "check", str(bad), "--db", str(db)]) != 0
    assert "no table 'purchases'" in capsys.readouterr().err
    assert cli_main(["schema", "--db", str(db), "--semantic", str(models)]) == 0
    assert "- revenue: order amounts" in capsys.readouterr().out


def test_a_draft_never_uses_a_name_metricflow_reserves(tmp_path, isolated_env, capsys):
    db = tmp_path / "concerts.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE concert (id INTEGER PRIMARY KEY, name VARCHAR, \"Year\" VARCHAR, month INTEGER, "
                "attendance INTEGER)")
    con.execute("INSERT INTO concert VALUES (1, 'A', '2014', 5, 100), (2, 'B', '2015', 6, 80)")
    con.close()
    out = tmp_path / "draft.yaml"
    assert cli_main(["semantic", "init", "--db", str(db), "-o", str(out)]) == 0
    layer = load_layer(out)
    assert "concert__year_value" in layer.dimensions and "concert_attendance" in layer.metrics
