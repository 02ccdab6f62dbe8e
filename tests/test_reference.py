"""DuckDB's reference at question time (``utils/sql/reference.py``, ``data/duckdb_reference.yaml``) and nested
columns in the schema text (``utils/schema/nested.py``): every example of the sheet runs, every function it
names is DuckDB's, retrieval finds the entries fixture questions need (and none for plain ones), the lines
reach the prompt after the schema only when the setting asks, and each nested type is shown as it is read."""
from __future__ import annotations

import duckdb
import pytest

from duckask.utils.api import ask
from duckask.utils.llm import ScriptedLLM
from duckask.utils.schema.nested import kind_of, literal, shape
from duckask.utils.sql.reference import MAX_CHARS, MAX_ENTRIES, functions, lookup, rank, sheet

T = """CREATE TABLE t AS SELECT * FROM (VALUES
  (1, 'a', 2023, 10.0, ['x', 'y', 'z'], {'city': 'Oslo', 'zip': '01'}, MAP {'color': 'red'},
   '{"a": {"b": 1}, "items": [{"sku": "s1"}]}'::JSON, TIMESTAMP '2024-01-01 10:00', TIMESTAMP '2024-01-01 10:45',
   'ann@mail.com', 'a/b/c1.txt', 3, 4),
  (2, 'b', 2024, 20.0, ['x'], {'city': 'Rome', 'zip': '02'}, MAP {'size': 'L'},
   '{"a": {"b": 2}, "items": []}'::JSON, TIMESTAMP '2024-02-01 10:00', TIMESTAMP '2024-02-01 12:00',
   'bo@web.org', 'd/e2.txt', 5, 6))
  v(id, name, year, amount, tags, addr, attrs, payload, start_ts, end_ts, email, path, score_q1, score_q2)"""


@pytest.fixture(scope="module")
def con():
    c = duckdb.connect()
    c.execute(T)
    yield c
    c.close()


@pytest.mark.parametrize("entry", sheet(), ids=[e.name for e in sheet()])
def test_every_example_runs_and_every_function_is_duckdbs(con, entry):
    assert entry.text and entry.words and entry.example, entry.name
    assert con.execute(entry.example).fetchall(), f"{entry.name}: its example returns no row on the fixture table"
    known = {r[0] for r in con.execute("SELECT function_name FROM duckdb_functions()").fetchall()}
    assert set(entry.functions) <= known, set(entry.functions) - known


def test_functions_come_from_the_installed_duckdb():
    table = functions()
    assert len(table) > 300
    assert table["median"].startswith("median(") and "middle" in table["median"]


#: (question, column types of the selected tables, entries that must come first, in any order)
RETRIEVAL = [
    ("How many minutes did each trip take?", ["TIMESTAMP"], {"date_diff"}),
    ("Give me a random sample of 10 percent of the rides", [], {"sample"}),
    ("Summarize the trips table", [], {"summarize"}),
    ("What columns does the survey table have, and of which types?", [], {"describe"}),
    ("What are the first two tags of each product?", ["VARCHAR[]"], {"list_index"}),
    ("Show every column except the payload", [], {"exclude"}),
    ("Which email domain is most common?", [], {"split"}),
    ("Show the revenue with one column per year", [], {"pivot"}),
    ("What is the average fare per zone?", [], {"grain"}),
    ("Which city does each customer live in?", ["STRUCT(city VARCHAR)"], {"struct"}),
    ("How many events came from iOS?", ["JSON"], {"json"}),
    ("What is the color attribute of each product?", ["MAP(VARCHAR, VARCHAR)"], {"map"}),
    ("Rank the stores by revenue", [], {"window"}),
    ("What is the median fare?", [], {"quantiles"}),
]


@pytest.mark.parametrize("question, types, expected", RETRIEVAL, ids=[r[0] for r in RETRIEVAL])
def test_retrieval_finds_what_the_question_needs(question, types, expected):
    top = {h.entry.name for h in rank(question, types)[:len(expected)]}
    assert top == expected, [(h.entry.name, round(h.score, 2), h.why) for h in rank(question, types)]
    lines = lookup(question, types)
    assert 1 <= len(lines) <= MAX_ENTRIES and sum(map(len, lines)) <= MAX_CHARS


@pytest.mark.parametrize("question, types", [
    ("How many players are there?", ["INTEGER", "VARCHAR"]),
    ("How many players hit more than 30 home runs in 2019?", ["INTEGER", "DATE"]),
    ("List the names of the singers", ["VARCHAR"]),
    # Worded as ordinary questions are (Spider-like, written for this test): common words that are also in
    # the sheet ("first", "type", "different", "average", "highest") call for nothing on their own.
    ("Find the first name and last name of all students.", ["VARCHAR", "INTEGER", "DATE"]),
    ("What are the different types of documents?", ["VARCHAR", "INTEGER", "DATE"]),
    ("Which singer has the highest net worth?", ["VARCHAR", "DOUBLE"]),
    ("What is the average age of all singers?", ["VARCHAR", "INTEGER"]),
    ("Find the number of concerts in each stadium.", ["VARCHAR", "INTEGER"]),
    ("What are the first two names in the list of members?", ["VARCHAR"]),
])
def test_a_plain_question_gets_no_reference(question, types):
    assert lookup(question, types) == []


def test_a_named_function_is_looked_up_but_an_english_word_is_not():
    assert any(line.startswith("median(") for line in lookup("What is the median amount?"))
    assert not any(line.startswith(("first(", "random(")) for line in lookup("Show the first random row"))


@pytest.mark.parametrize("mode, shown", [("auto", True), ("off", False)])
def test_the_reference_reaches_the_prompt_after_the_schema_only_when_asked(small_db, isolated_env, mode, shown):
    llm = ScriptedLLM({"SQLGenerator": ["SELECT name FROM teams"]})
    ask("Rank the teams by the points of their players.", db=str(small_db), llm=llm, dialect_notes=mode)
    prompt = llm.calls[0]["messages"][-1]["content"]
    assert ("DuckDB reference that may help:\n- rank() OVER" in prompt) is shown
    if shown:
        assert prompt.index("Schema:") < prompt.index("DuckDB reference") < prompt.index("Question:")


# -- nested columns in the schema text ----------------------------------------------------------------------
@pytest.mark.parametrize("column, type_, note", [
    ("tags", "VARCHAR[]", "e.g. ['x', 'y', 'z'] (1-based: tags[1] is the first, tags[-1] the last"),
    ("addr", "STRUCT(city VARCHAR, zip VARCHAR)", "read a field as addr.city; e.g. {'city': 'Oslo', 'zip': '01'}"),
    ("attrs", "MAP(VARCHAR, VARCHAR)", "read a key as attrs['color']; e.g. MAP {'color': 'red'}"),
    ("payload", "JSON", "read as payload->>'$.a.b'; keys $.a.b, $.items[*].sku"),
    ("name", "VARCHAR", ""),
])
def test_each_nested_type_is_shown_as_it_is_read(con, column, type_, note):
    got = shape(con, "t", column, type_)
    assert got.startswith(note) if note else got == ""
    if note:
        reads = note.split("read ")[-1].split(";")[0].replace("a field as ", "").replace("a key as ", "")
        reads = reads.replace("as ", "")
        if kind_of(type_) != "list":
            assert con.execute(f"SELECT {reads} FROM t").fetchall()       # what the note says to write runs


def test_literals_are_duckdbs():
    value = {"a": [1, 2], "b": "it's", "c": None, "d": True}
    text = literal(value)
    assert text == "{'a': [1, 2], 'b': 'it''s', 'c': NULL, 'd': true}"
    assert duckdb.connect().execute(f"SELECT {text}").fetchone()[0] == value


def test_the_schema_text_carries_the_nested_notes(tmp_path, isolated_env):
    from duckask.utils.db.database import open_database
    from duckask.utils.schema.ddl import render_ddl
    from duckask.utils.semantic import get_catalog

    path = tmp_path / "nested.duckdb"
    with duckdb.connect(str(path)) as c:
        c.execute(T)
    ddl = render_ddl(get_catalog(open_database(path)))
    assert "read as payload->>'$.a.b'" in ddl and "read a field as addr.city" in ddl
    assert "tags[1] is the first" in ddl and "read a key as attrs[" in ddl


# --------------------------------------------------------------------------- column families (issue 63, item 4)
def test_a_column_family_the_question_names_gets_its_own_columns_regex_first():
    from types import SimpleNamespace as Col

    from duckask.utils.sql.reference import families, lookup

    cols = [Col(name=f"score_q{i}", type="INTEGER") for i in range(1, 13)] + [Col(name="nps", type="INTEGER")]
    assert families([c.name for c in cols]) == {"score_q": [f"score_q{i}" for i in range(1, 13)]}
    lines = lookup("For each of the twelve score questions, how many respondents gave it a 5?", columns=cols)
    assert lines[0].startswith("score_q1 ... score_q12 (12 columns) are one family: COLUMNS('^score_q\\d+$')")
    assert "UNPIVOT t ON COLUMNS('^score_q\\d+$')" in lines[0]
    assert not any("family" in x for x in lookup("What is the average nps?", columns=cols))   # not named: no line
    three = [Col(name=f"x{i}", type="INTEGER") for i in range(1, 4)]
    assert families([c.name for c in three]) == {}                    # three columns are no family


def test_the_family_line_runs_in_duckdb():
    import duckdb

    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT range AS id, range % 6 AS score_q1, (range + 1) % 6 AS score_q2, "
                "(range + 2) % 6 AS score_q3, (range + 3) % 6 AS score_q4 FROM range(12)")
    assert con.execute(r"SELECT count_if(COLUMNS('^score_q\d+$') = 5) FROM t").fetchone() == (2, 2, 2, 2)
    rows = con.execute(r"SELECT item, count(*) FROM (UNPIVOT t ON COLUMNS('^score_q\d+$') INTO NAME item VALUE answer) "
                       "WHERE answer = 5 GROUP BY item ORDER BY item").fetchall()
    assert rows == [("score_q1", 2), ("score_q2", 2), ("score_q3", 2), ("score_q4", 2)]
