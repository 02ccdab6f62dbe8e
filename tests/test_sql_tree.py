"""db.tree: the one tree (sqlglot's) every reader of a query's meaning starts from, and the readers moved onto it
from DuckDB's JSON parse (which stays for security reads and the in-place rules only: tests/test_layers.py)."""
from __future__ import annotations

import pytest
from sqlglot import exp

from duckask.utils.checks.shape import _AGGREGATES, _shape
from duckask.utils.db import tree
from duckask.utils.knowledge.examples import columns_of, tables_of
from duckask.utils.sql.describe import describe_sql, has_top_level_order_by
from duckask.utils.trust.signals import query_shape

CTE = ("WITH pay AS (SELECT player_id, sum(salary) AS s FROM salaries WHERE team_id IN "
       "(SELECT team_id FROM teams_franchises)) SELECT p.name, pay.s FROM pay JOIN people p USING (player_id)")


def test_a_fresh_tree_each_call_and_none_for_what_does_not_parse():
    one, two = tree.sql_tree("SELECT 1"), tree.sql_tree("SELECT 1")
    assert isinstance(one, exp.Select) and one is not two
    assert tree.sql_tree("SELECT FROM WHERE (") is None
    assert tree.sql_tree(None) is None and tree.sql_tree("") is None


def test_tables_in_the_order_the_text_names_them_ctes_read_counted_once():
    t = tree.sql_tree(CTE)
    assert tree.table_names(t) == ["salaries", "teams_franchises", "pay", "people"]
    assert tree.base_tables(t) == ["salaries", "teams_franchises", "people"]
    assert tree.cte_names(t) == {"pay"}
    assert tables_of(CTE) == ["salaries", "teams_franchises", "people"]


def test_a_table_function_is_no_table():
    assert tree.table_names(tree.sql_tree("SELECT * FROM range(10) r JOIN t ON r.range = t.id")) == ["t"]


def test_columns_named_not_those_an_exclude_leaves_out():
    assert columns_of("SELECT * EXCLUDE (comment, weight) FROM r WHERE T1.overall = 1") == {"overall"}
    assert columns_of("SELECT count(*) FROM o WHERE at >= CURRENT_DATE - 30") == {"at"}


@pytest.mark.parametrize("sql, nested", [
    ("SELECT a FROM t", 0),
    ("SELECT name FROM players WHERE team_id IN (SELECT id FROM teams)", 1),
    ("SELECT a FROM t UNION SELECT b FROM u", 1),
    (CTE, 2),
])
def test_nested_selects(sql, nested):
    assert tree.nested_selects(tree.sql_tree(sql)) == nested


def test_query_shape_for_the_trust_signals():
    assert query_shape(CTE) == {"tables": 4, "nested": 2}
    assert query_shape("not sql") == {"tables": 0, "nested": 0}


@pytest.mark.parametrize("sql, ordered", [
    ("SELECT a FROM t ORDER BY a", True),
    ("SELECT a FROM t UNION SELECT b FROM u ORDER BY 1", True),
    ("SELECT * FROM (SELECT a FROM t ORDER BY a) LIMIT 3", False),
    ("not sql", False),
])
def test_a_top_level_order_by_is_the_outer_querys_own(sql, ordered):
    assert has_top_level_order_by(sql) is ordered


@pytest.mark.parametrize("sql, calls, grouped, partitioned", [
    ("SELECT avg(x) FROM t", {"avg"}, False, False),
    ("SELECT fsum(x) FROM t", {"fsum"}, False, False),          # DuckDB's own aggregate, by name
    ("SELECT a, count(*) FROM t GROUP BY ALL", {"count"}, True, False),
    ("SELECT a FROM t QUALIFY rank() OVER (ORDER BY b DESC) = 1", set(), False, False),   # a ranking is per row
    ("SELECT a, sum(b) OVER (PARTITION BY a) FROM t", {"sum"}, False, True),
    ("PIVOT t ON a USING sum(b)", {"sum"}, True, False),
    ("SUMMARIZE t", set(), True, False),
    ("not sql at all (", set(), True, True),                    # unreadable: claims nothing
])
def test_the_checks_read_a_querys_aggregates_and_grouping(sql, calls, grouped, partitioned):
    assert _shape(sql) == (calls, grouped, partitioned)
    assert "fsum" in _AGGREGATES


def test_a_set_operation_is_described_by_its_tables_order_and_limit():
    shape = describe_sql("WITH c AS (SELECT 1 FROM z) SELECT a FROM x UNION SELECT b FROM c ORDER BY 1 DESC LIMIT 3")
    assert (shape.tables, shape.order_by, shape.limit) == (["z", "x"], ["1 DESC"], "3")
    assert describe_sql("not sql (") == describe_sql("")
