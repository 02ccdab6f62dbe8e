"""SQL a person reads (issue 36; ``utils/sql/readable.py``): MetricFlow's nested SQL for every demo metric, and
the plan fixtures, made readable, and giving exactly the rows the original gives."""
from __future__ import annotations

import pytest
from semantic_support import demo, layer  # noqa: F401 (fixtures)

from duckask.utils.semantic.compile import compile_plan
from duckask.utils.semantic.plan import PlanError, parse_plan
from duckask.utils.sql.readable import readable

PLANS = [
    "metrics: [home_runs]\ngroup_by: [full_name]\nwhere: [year = 2019]\norder_by: [-home_runs]\nlimit: 1",
    "metrics: [team_wins]\ngroup_by: [team_name, won_world_series]\nwhere: [year = 2016]\norder_by: [-team_wins]\n"
    "limit: 1",
    "metrics: [home_runs]\ngroup_by: [full_name, year]\norder_by: [-home_runs]\nlimit: 1",
    "metrics: [batting_average]\ngroup_by: [team_name]\nwhere: [year = 2019]\norder_by: [-batting_average]\nlimit: 1",
    "metrics: [era]\ngroup_by: [full_name]\nwhere: [year = 2019, full_name = Gerrit Cole]",
    "metrics: [win_pct]\ngroup_by: [team_name]\nwhere: [year = 2001, team_name = Seattle Mariners]",
    "metrics: [players]\nwhere: [birth_country = Venezuela]",
    "metrics: []\ngroup_by: [full_name]\nwhere: [birth_country = Japan]",
]


@pytest.fixture(scope="module")
def schema(demo):  # noqa: F811
    with demo.db.cursor() as cur:
        rows = cur.execute("SELECT table_name, column_name, data_type FROM duckdb_columns() "
                           "WHERE schema_name = 'main'").fetchall()
    out: dict = {}
    for t, c, ty in rows:
        out.setdefault(t, {})[c] = ty
    return out


def _same(demo, original, shown):  # noqa: F811
    """The same rows; under a LIMIT, ties may pick other rows with the same value: then the ranked values match."""
    a, b = demo.execute(original).fetchall(), demo.execute(shown).fetchall()
    if "LIMIT" in original and a != b:
        a, b = [r[-1] for r in a], [r[-1] for r in b]
    assert sorted(map(repr, a)) == sorted(map(repr, b)) and len(a) == len(b)


def _every_metric_plan(layer):  # noqa: F811
    for m in layer.metrics:
        yield f"metrics: [{m}]"
        yield f"metrics: [{m}]\ngroup_by: [year]\norder_by: [-{m}]\nlimit: 3"


def test_every_demo_metric_reads_plainly_and_gives_the_same_rows(layer, demo, schema):  # noqa: F811
    checked = 0
    for text in _every_metric_plan(layer):
        try:
            original = compile_plan(layer, parse_plan(text, layer))
        except PlanError:
            continue      # a metric without a year grain: nothing to compare
        shown = readable(original, schema)
        assert shown != original and "subq_" not in shown and "_src_" not in shown, text
        assert shown.count("\n") < original.count("\n"), text
        _same(demo, original, shown)
        checked += 1
    assert checked >= len(layer.metrics)


@pytest.mark.parametrize("text", PLANS)
def test_the_plan_fixtures_give_the_same_rows(layer, demo, schema, text):  # noqa: F811
    original = compile_plan(layer, parse_plan(text, layer))
    _same(demo, original, readable(original, schema))


def test_the_demo_question_reads_as_a_person_writes_it(layer, schema):  # noqa: F811
    shown = readable(compile_plan(layer, parse_plan(PLANS[0], layer)), schema)
    assert shown == ("SELECT\n  p.name_first || ' ' || p.name_last AS player,\n  SUM(b.hr) AS home_runs\n"
                     "FROM batting AS b\nLEFT JOIN people AS p\n  ON b.player_id = p.player_id\nWHERE\n"
                     "  b.year_id = 2019\nGROUP BY\n  b.player_id,\n  p.name_first || ' ' || p.name_last\n"
                     "ORDER BY\n  home_runs DESC\nLIMIT 1")


@pytest.mark.parametrize("sql, expected", [
    ("SELECT * FROM (SELECT a FROM t AS t_src_1) AS subq_1", "SELECT\n  t.a AS a\nFROM t AS t"),
    # a keyword keeps its quotes; names fold to lower case as DuckDB folds them (plan SQL's names are lower case)
    ('SELECT "select", "Mixed" FROM t', 'SELECT\n  t."select" AS "select",\n  t.mixed AS mixed\nFROM t AS t'),
    ("SELECT x.a, y.a FROM team_season AS x JOIN teams AS y ON x.id = y.id",
     "SELECT\n  ts.a AS a,\n  t.a AS a\nFROM team_season AS ts\nJOIN teams AS t\n  ON ts.id = t.id"),
    ("SELECT a.id FROM bat AS a JOIN bat AS z ON a.id = z.id",
     "SELECT\n  b.id AS id\nFROM bat AS b\nJOIN bat AS b2\n  ON b.id = b2.id"),
    ("SELECT (", "SELECT ("),                           # cannot be read: shown as it is
    # MetricFlow's year grain on an integer year column (NBA's season), with or without a cast
    ("SELECT a.id FROM bat AS a WHERE DATE_TRUNC('YEAR', MAKE_DATE(a.season, 1, 1)) = '2016-01-01'",
     "SELECT\n  b.id AS id\nFROM bat AS b\nWHERE\n  b.season = 2016"),
])
def test_rules(sql, expected):
    schema = {"t": {"a": "INT", "select": "INT", "Mixed": "INT", "id": "INT"},
              "team_season": {"a": "INT", "id": "INT"}, "teams": {"a": "INT", "id": "INT"},
              "bat": {"id": "INT", "season": "INT"}}
    assert readable(sql, schema) == expected


def test_every_demo_metric_is_described_in_plain_words(layer):  # noqa: F811
    from duckask.utils.semantic.plan import describe, label

    for m, metric in layer.metrics.items():
        for text in (f"metrics: [{m}]\ngroup_by: [team_name]\nwhere: [year = 2019]\norder_by: [-{m}]\nlimit: 3",
                     f"metrics: [{m}]"):
            try:
                words = describe(parse_plan(text, layer), layer)
            except PlanError:
                continue
            assert words.startswith(f"{label(m)} ({metric.formula})") and "__" not in words.replace(metric.formula, "")
            if "team_name" in text:
                assert words.endswith("by team, in 2019, highest first, top 3")


@pytest.mark.parametrize("name, words", [("home_runs", "home runs"), ("player__full_name", "player"),
                                         ("team_season__team_name", "team"), ("franchise__franchise_name", "franchise"),
                                         ("team_season__won_world_series", "won world series"), ("year", "year")])
def test_labels(name, words):
    from duckask.utils.semantic.plan import label

    assert label(name) == words
