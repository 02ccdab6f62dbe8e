"""The semantic layer in the graph and in a dbt project (the demo's layer, the scripted plans and fixtures:
semantic_support.py): every plan-path edge and fallback, and a dbt-style model directory answered end to end."""
# ruff: noqa: F811  (pytest fixtures are imported from semantic_support and used as parameters by name)
from __future__ import annotations

import duckdb
import pytest
from conftest import demo_db
from semantic_support import LEGACY, layer  # noqa: F401 (fixtures are used by name)

from duckask.utils.api import ask
from duckask.utils.app.cli import main as cli_main
from duckask.utils.llm import ScriptedLLM
from duckask.utils.semantic.manifest import load_layer

# ------------------------------------------------------------------------------------------ the graph
HR_2019 = "home_runs]\ngroup_by: [full_name]\nwhere: [year = 2019]\norder_by: [-home_runs]\nlimit: 1"
SQL_ANSWER = "```sql\nSELECT 'Pete Alonso' AS player, 53 AS home_runs\n```"


def _ask(question, script, **options):
    llm = ScriptedLLM({"DataAnalyzer": ["Pete Alonso hit 53."], "TableSelector": ["tables: [batting, people]"],
                       "SQLGenerator": [SQL_ANSWER], **script})
    return ask(question, demo_db(), llm=llm, analyzer="rules", **options), llm


def _nodes(r):
    return [f"{t['node']}:{t['action']}" for t in r.trace]


def test_a_plan_answers(isolated_env):
    r, llm = _ask("Who hit the most home runs in 2019?", {"PlanQuery": [HR_2019]})
    assert r.path == "plan" and r.df.values.tolist() == [["Pete Alonso", 53]]
    assert "PlanQuery:planned" in _nodes(r) and "SQLGenerator:default" not in _nodes(r)
    assert r.derivation == "home runs (sum of batting.hr) by player, in 2019, highest first, top 1"
    assert r.plan["plan"]["metrics"] == ["home_runs"] and "Plan (MetricFlow wrote the SQL)" in r.to_text() \
        if hasattr(r, "to_text") else True
    prompt = llm.calls[0]["messages"][1]["content"]
    assert prompt.startswith("Catalog:\nNotes:") and "- home_runs: home runs hit" in prompt


NOBODY = "How many home runs did Nobody At All hit for each team in 2019?"


@pytest.mark.parametrize("question, reply, why", [
    (None, "shoe_sales]", "unknown metric"),                                  # a name the catalog lacks
    (None, "attendance]\ngroup_by: [award]", "MetricFlow cannot compile"),    # names that do not join
    (NOBODY, "home_runs]\ngroup_by: [team_name]\nwhere: [full_name = Nobody At All, year = 2019]",
     "found nothing"),                                                         # no rows
    (NOBODY, "home_runs]\nwhere: [full_name = Nobody At All, year = 2019]",
     "only NULL values"),                                                      # one NULL: the grader objects
    (None, RuntimeError("endpoint down"), "the LLM call failed"),
    # the plan does not cover the question (semantic.coverage): sent on without running it
    (None, "home_runs]\ngroup_by: [full_name]\norder_by: [-home_runs]\nlimit: 1", "states a time (2019)"),
    (None, "home_runs]\nwhere: [year = 2019]", "the plan groups by nothing"),
    (None, "home_runs]\ngroup_by: [full_name]\nwhere: [year = 2019, team_name = Boston Red Sox]\n"
           "order_by: [-home_runs]\nlimit: 1", "which the question does not state"),
    ("Which players hit home runs in 2019?", "home_runs]\ngroup_by: [full_name]\nwhere: [year = 2019]\nlimit: 5",
     "the plan keeps 5 rows"),
])
def test_a_plan_that_does_not_hold_goes_to_the_sql_path(isolated_env, question, reply, why):
    r, _ = _ask(question or "Who hit the most home runs in 2019?", {"PlanQuery": [reply]})
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
    assert r.derivation.startswith("the values of franchise")
    assert "metrics: []" in llm.calls[0]["messages"][1]["content"]          # the list note, after the question


# With candidates on, a plan and the SQL path's drafts are candidates of each other (issue 32).
OTHER = "```sql\nSELECT 'Christian Yelich' AS player, 44 AS home_runs\n```"


def test_a_plan_the_sql_drafts_agree_with_is_confirmed(isolated_env):
    r, llm = _ask("Who hit the most home runs in 2019?", {"PlanQuery": [HR_2019]}, candidates=1)
    assert "PlanQuery:both" in _nodes(r) and "SQLGenerator:default" in _nodes(r)
    assert r.path == "plan" and r.df.values.tolist() == [["Pete Alonso", 53]]
    assert r.derivation.startswith("home runs (sum of batting.hr)")
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
    r = ask("What were paid sales by region in 2024?", db=str(db), llm=llm, semantic=str(models),
            analyzer="rules")
    assert r.path == "plan" and r.df.values.tolist() == [["North", 150.0], ["South", 70.0]]
    r = ask("Which customer has the highest average order value?", db=str(db), semantic=str(models),
            analyzer="rules", llm=ScriptedLLM({"PlanQuery": ["average_order_value]\ngroup_by: [customer_name]\n"
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


# -- the plan gate (semantic.coverage, issue 53): a plan answers only what it covers --------------------------------
@pytest.mark.parametrize("question, plan, rule", [
    ("Which team won the 2016 World Series?", "team_wins]\ngroup_by: [team_name]\nwhere: [won_world_series = Y, "
     "year = 2016]\nlimit: 1", None),                                   # a Y/N flag whose dimension is named
    ("Which team won the 2016 World Series?", "team_wins]\ngroup_by: [team_name]\nwhere: [won_world_series = N, "
     "year = 2016]\nlimit: 1", "unstated_filter"),                     # the White Sox plan: not won
    ("How many major league players were born in Canada?", "players]\nwhere: [birth_country = CAN]", None),
    ("Who won the American League MVP award in 2012?", "awards_won]\nwhere: [award = Most Valuable Player, "
     "award_league = AL, year = 2012]", "names_no_entity"),
    ("Who won the American League MVP award in 2012?", "awards_won]\ngroup_by: [full_name]\nwhere: [award = Most "
     "Valuable Player, award_league = AL, year = 2012]\norder_by: [-awards_won]\nlimit: 1", None),   # MVP, AL linked
    ("Which players were inducted into the Hall of Fame in 2018?", "hall_of_fame_inductions]\ngroup_by: "
     "[full_name]\nwhere: [year = 2018]\nlimit: 5", "unstated_limit"),
    ("Who hit the most home runs in 2001?", "home_runs]\ngroup_by: [full_name]\nwhere: [year = 2002]\n"
     "order_by: [-home_runs]\nlimit: 1", "missing_year"),
    ("Who hit the most home runs this season?", "home_runs]\ngroup_by: [full_name]\norder_by: [-home_runs]\n"
     "limit: 1", "missing_time"),
])
def test_the_plan_gate_holds_a_plan_to_its_question(layer, question, plan, rule):
    from duckask.utils.semantic.coverage import gate
    from duckask.utils.semantic.plan import parse_plan

    said = gate(question, parse_plan("metrics: [" + plan, layer), layer, ["AL"])    # "American League" -> AL
    assert (said[0] if said else None) == rule, said


@pytest.mark.parametrize("question, plan, rule", [
    ("What was the attendance of the Chicago Cubs in 2016?", "attendance]\nwhere: [team_name = Chicago Cubs, "
     "year = 2016]", None),
    ("What was the attendance of the Chicago Cubs in 2016?", "team_wins]\nwhere: [team_name = Chicago Cubs, "
     "year = 2016]", "unused_words"),                                   # a column the plan never reads
    ("Who hit the most home runs in 2001?", "home_runs]\ngroup_by: [full_name]\nwhere: [year = 2001]\n"
     "order_by: [-home_runs]\nlimit: 1", None),
    ("How many major league players were born in Canada?", "players]\nwhere: [birth_country = CAN]", None),
    ("What was the ERA of the New York Yankees in 2016?", "team_wins]\nwhere: [team_name = New York Yankees, "
     "year = 2016]", "unused_words"),
])
def test_the_plan_gate_holds_a_question_word_no_part_of_the_plan_stands_for(layer, question, plan, rule):
    """unused_words (issue 53, item 2): a word of the question that names a column of the database, with nothing in the
    plan standing for it (its metrics, dimensions, synonyms, values, models), sends the question to the SQL path."""
    from duckask.data.lahman import demo_db_path
    from duckask.utils.semantic import get_catalog
    from duckask.utils.semantic.coverage import column_words, gate
    from duckask.utils.semantic.plan import parse_plan

    columns = column_words(get_catalog(str(demo_db_path())))
    said = gate(question, parse_plan("metrics: [" + plan, layer), layer, ["Chicago Cubs", "New York Yankees"], columns)
    assert (said[0] if said else None) == rule, said
