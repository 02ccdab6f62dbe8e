"""Plans that name only what exists (issue 33): a GBNF grammar of the semantic file's names, used by PlanQuery
on the embedded model; on the real model, fixture prompts that tempt unknown names still give only catalog
names."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import demo_db

from duckask.utils.api import ask
from duckask.utils.llm import ScriptedLLM
from duckask.utils.semantic.grammar import plan_grammar
from duckask.utils.semantic.manifest import load_layer

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "lahman_semantic.yaml"
HR_2019 = "home_runs]\ngroup_by: [player__full_name]\nwhere: [year = 2019]\norder_by: [-home_runs]\nlimit: 1"


@pytest.fixture(scope="module")
def layer():
    return load_layer(DEMO)


def test_the_grammar_lists_exactly_the_catalogs_names(layer):
    g = plan_grammar(layer)
    rules = dict(line.split(" ::= ", 1) for line in g.strip().splitlines())
    assert set(re.findall(r'"([^"]+)"', rules["metric"])) == set(layer.metrics)
    assert set(re.findall(r'"([^"]+)"', rules["dim"])) == set(layer.dimensions)
    assert rules["root"].endswith('"\\n"? "\\n"?')   # the end: the model's "\n\n" token stays allowed


def test_llama_cpp_compiles_the_grammar(layer):
    pytest.importorskip("llama_cpp")
    from llama_cpp import LlamaGrammar

    text = plan_grammar(layer)
    compiled = LlamaGrammar.from_string(text, verbose=False)     # raises on a grammar llama.cpp cannot read
    assert compiled._root == "root" and compiled._grammar == text


class _Endpoint(ScriptedLLM):
    is_endpoint = True


@pytest.mark.parametrize("llm_class, option, sent", [
    (ScriptedLLM, {}, False),                         # off by default (it cost the Lahman demo 20 points)
    (ScriptedLLM, {"plan_grammar": "auto"}, True),    # auto and on: the embedded model only
    (ScriptedLLM, {"plan_grammar": "on"}, True),
    (ScriptedLLM, {"plan_grammar": "off"}, False),
    (_Endpoint, {}, False),                           # endpoints have no portable grammar
    (_Endpoint, {"plan_grammar": "on"}, False),
])
def test_plan_query_sends_the_grammar_where_it_holds(isolated_env, llm_class, option, sent):
    llm = llm_class({"PlanQuery": [HR_2019], "DataAnalyzer": ["Pete Alonso hit 53."]})
    r = ask("Who hit the most home runs in 2019?", demo_db(), llm=llm, analyzer="rules", **option)
    call = next(c for c in llm.calls if c["node"] == "PlanQuery")
    assert bool(call["grammar"]) is sent and r.path == "plan"


@pytest.mark.model
@pytest.mark.parametrize("question", [
    "What is the average shoe size of players by birth country?",     # no such metric: the nearest name
    "Which 3 teams had the most wins in 2016?",
    "How many home runs did players born in Japan hit?",
])
def test_on_the_real_model_a_held_plan_names_only_catalog_names(layer, question, tmp_path):
    from conftest import embedded_model_path

    from duckask.utils.config import load_settings
    from duckask.utils.llm.local import LocalBackend
    from duckask.utils.semantic.plan import parse_plan
    from duckask.utils.semantic.plan_prompt import PREFIX, build_messages

    backend = LocalBackend(load_settings(model_path=embedded_model_path(), cache_dir=str(tmp_path)))
    msgs, stable = build_messages(layer, question)
    reply = backend.complete(msgs, node="PlanQuery", prefix=PREFIX, stop=["\n\n", "```", "Question:"],
                             max_tokens=96, stable=stable, grammar=plan_grammar(layer))
    plan = parse_plan(reply.text, layer)          # parses: every name is the catalog's
    assert set(plan.metrics) <= set(layer.metrics)
    assert set(plan.group_by) <= set(layer.dimensions)
    assert {d for d, _, _ in plan.where} <= set(layer.dimensions)


@pytest.mark.parametrize("question, links", [
    ("What was the win-loss record of the 1927 New York Yankees?",
     [("team_season__team_name", "New York Yankees"), ("franchise__franchise_name", "New York Yankees")]),
    ("How many home runs did players born in Japan hit?", [("player__birth_country", "Japan")]),
    ("Which pitchers won the Cy Young Award in 2014?", [("award_win__award", "Cy Young Award")]),
    ("Which team had the most wins in 2016?", []),          # no value named
    ("How many home runs did Babe Ruth hit?", []),          # only inside 'Babe Ruth Award': the player is meant
    ("Which team won the World Series in 2016?", []),       # names the dimension won_world_series, not a value
])
def test_the_values_a_question_names_are_tied_to_the_dimensions_that_read_them(question, links):
    from duckask.utils.api import prepare
    from duckask.utils.schema.values import match_values
    from duckask.utils.semantic.manifest import layer_for
    from duckask.utils.semantic.reading import value_links

    prep = prepare(demo_db())
    assert value_links(layer_for(prep.settings), match_values(prep.catalog, question)) == links


YANKEES = "What was the win-loss record of the 1927 New York Yankees?"


@pytest.mark.parametrize("reply, filtered, rows", [
    # grouped by the team the question names, limit 1: any team's row; made the filter the question states
    ("team_wins, team_losses]\ngroup_by: [team_season__team_name]\nwhere: [year = 1927]\nlimit: 1",
     ["team_season__team_name = 'New York Yankees'"], [(110, 44)]),
    # already filtered: left as it is
    ("team_wins, team_losses]\nwhere: [team_season__team_name = 'New York Yankees', year = 1927]", [],
     [(110, 44)]),
])
def test_a_plan_grouping_by_a_value_the_question_names_filters_on_it(isolated_env, reply, filtered, rows):
    """The plan path's forward links (issue 44) repair the plan, never the prompt: shown as "values found" lines
    they made the model group by the linked dimension more often (Lahman: 2 of 5 such questions lost)."""
    llm = ScriptedLLM({"PlanQuery": [reply], "DataAnalyzer": ["The Yankees went 110-44."]})
    r = ask(YANKEES, demo_db(), llm=llm, analyzer="rules")
    user = next(c for c in llm.calls if c["node"] == "PlanQuery")["messages"][-1]["content"]
    assert "Values found" not in user and r.path == "plan" and r.plan["filtered"] == filtered
    assert [tuple(x) for x in r.df.itertuples(index=False)] == rows and r.plan["plan"]["group_by"] == []


def test_a_list_of_values_and_a_filtered_dimension_are_left_as_they_are(layer):
    from duckask.utils.semantic.plan import filter_named, parse_plan

    listing = parse_plan("metrics: []\ngroup_by: [team_season__team_name]", layer)
    assert filter_named(listing, [("team_season__team_name", "New York Yankees")]) == []
    assert listing.group_by == ["team_season__team_name"] and listing.where == []
    ordered = parse_plan("metrics: [team_wins]\ngroup_by: [team_season__team_name]\n"
                         "order_by: [-team_season__team_name]", layer)
    assert filter_named(ordered, [("team_season__team_name", "O'Brien's")]) == ["team_season__team_name = 'O'Brien's'"]
    assert ordered.where == [("team_season__team_name", "=", "'O''Brien''s'")] and ordered.order_by == []
