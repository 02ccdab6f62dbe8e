"""DuckDB dialect notes: every function they name is DuckDB's, every idiom they show runs, they fire on
what calls for them, and they reach the prompt only when the setting asks."""
from __future__ import annotations

import datetime

import duckdb
import pytest

from duckask.utils.app.api import ask
from duckask.utils.llm import ScriptedLLM
from duckask.utils.schema.catalog import Column, Table
from duckask.utils.sql.dialect import ARGMAX, DATES, JSON, LIST, NOTES, STRINGS, STRUCT, WINDOW, dialect_notes

OPERATORS = {"json_extract_string": "->>", "json_extract": "->", "struct_extract": "address.city"}


def test_every_function_a_note_names_is_duckdbs():
    con = duckdb.connect()
    known = {r[0] for r in con.execute("SELECT function_name FROM duckdb_functions()").fetchall()}
    for note in NOTES:
        assert set(note.functions) <= known, note.name
        for f in note.functions:     # some are written as operators: ->> / -> for JSON, col.field for a struct
            assert f in note.text or OPERATORS.get(f, "@") in note.text, (note.name, f)


#: One runnable query per note, written the way the note tells the model to write it.
IDIOMS = {
    "json": ("SELECT (p->>'$.price')::DOUBLE, p->>'$.device.os', json_array_length(p->'$.items') "
             "FROM (SELECT '{\"price\": 2.5, \"device\": {\"os\": \"ios\"}, \"items\": [1, 2]}'::JSON AS p)",
             [(2.5, "ios", 2)]),
    "list": ("SELECT len(l), list_contains(l, 2), list_sum(l), list_avg(l), (SELECT count(*) FROM unnest(l)) "
             "FROM (SELECT [1, 2, 3] AS l)", [(3, True, 6, 2.0, 3)]),
    "struct": ("SELECT address.city FROM (SELECT {'city': 'Oslo', 'zip': '0150'} AS address)", [("Oslo",)]),
    "dates": ("SELECT date_trunc('month', d), year(d), month(d), date_diff('day', d, d + INTERVAL 30 DAY), "
              "strftime(d, '%Y-%m') FROM (SELECT DATE '2024-03-15' AS d)",
              [(datetime.datetime(2024, 3, 1), 2024, 3, 30, "2024-03")]),
    "window": ("SELECT g, x, sum(x) OVER (ORDER BY x) FROM (VALUES ('a', 1), ('a', 3), ('b', 2)) t(g, x) "
               "QUALIFY row_number() OVER (PARTITION BY g ORDER BY x DESC) = 1 ORDER BY g", [("a", 3, 6), ("b", 2, 3)]),
    "argmax": ("SELECT g, arg_max(n, x), arg_min(n, x) FROM (VALUES ('a', 'p', 1), ('a', 'q', 3)) t(g, n, x) "
               "GROUP BY g", [("a", "q", "p")]),
    "strings": ("SELECT regexp_extract(s, 'SKU-(\\d+)', 1), regexp_matches(s, '^S'), split_part(e, '@', 2), "
                "string_agg(s, ', ') FROM (SELECT 'SKU-00123' AS s, 'a@b.com' AS e) GROUP BY ALL",
                [("00123", True, "b.com", "SKU-00123")]),
}


@pytest.mark.parametrize("name", [n.name for n in NOTES])
def test_each_idiom_runs_in_duckdb(name):
    sql, expected = IDIOMS[name]
    assert duckdb.connect().execute(sql).fetchall() == expected


def table(*types: str) -> Table:
    return Table("t", [Column(f"c{i}", t) for i, t in enumerate(types)])


@pytest.mark.parametrize("question, types, notes", [
    ("What operating system do most visitors use?", ["JSON", "INTEGER"], [JSON]),
    ("Which recipes use garlic?", ["VARCHAR[]"], [LIST]),
    ("How many customers live in Oslo?", ["STRUCT(city VARCHAR, zip VARCHAR)"], [STRUCT]),
    ("How many orders were placed per month in 2024?", ["DATE", "INTEGER"], [DATES]),
    ("How many orders were placed per month in 2024?", ["INTEGER"], []),       # no date column
    ("Rank the stores by revenue.", ["INTEGER"], [WINDOW]),
    ("What is the running total of sales?", ["DATE"], [WINDOW]),
    ("Which product sold the most in each region?", ["INTEGER"], [ARGMAX]),
    ("Which customers have an email at the example.com domain?", ["VARCHAR"], [STRINGS]),
    ("How many players are there?", ["INTEGER", "VARCHAR"], []),
])
def test_notes_fire_on_what_calls_for_them(question, types, notes):
    assert dialect_notes(question, [table(*types)]) == [n.text for n in notes]


def test_at_most_three_notes():
    busy = dialect_notes("Rank the most common device per month since 2024 by domain code in each region",
                         [table("JSON", "VARCHAR[]", "STRUCT(a INTEGER)", "DATE")])
    assert len(busy) == 3


@pytest.mark.parametrize("mode, shown", [("auto", True), ("off", False)])
def test_notes_reach_the_prompt_only_when_asked(small_db, isolated_env, mode, shown):
    llm = ScriptedLLM({"SQLGenerator": ["SELECT name FROM teams"]})
    ask("Rank the teams by the points of their players.", db=str(small_db), llm=llm, dialect_notes=mode)
    prompt = llm.calls[0]["messages"][-1]["content"]
    assert ("DuckDB syntax that may help:\n- Windows: rank() OVER" in prompt) is shown
    assert prompt.index("Question:") > (prompt.find("DuckDB syntax") if shown else -1)


def test_nested_columns_show_enough_of_a_value_to_see_its_keys():
    from duckask.utils.schema.catalog import Catalog
    from duckask.utils.schema.ddl import render_ddl

    payload = '{"device": {"os": "ios"}, "price": 12.5, "items": [1, 2]}'
    cat = Catalog("k", {"t": Table("t", [Column("payload", "JSON", samples=[payload]),
                                         Column("tags", "VARCHAR[]", samples=["[garden, eco]"]),
                                         Column("n", "INTEGER", samples=["1234567890123"])])})
    ddl = render_ddl(cat)
    assert f"e.g. {payload}" in ddl and "e.g. [garden, eco]" in ddl and "e.g. 1234567890," not in ddl
