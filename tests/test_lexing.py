"""One reading of a statement's text (issue 62): DuckDB's lexer and sqlglot's must read the same text alike, or it is
refused. The differential test generates texts from fragments (comments nested and not, quotes, dollar quotes, escape
strings, Unicode spaces, operators) and asserts, for each text ``one_reading`` lets through, that DuckDB's reading of
the original (its parse: the tables read, the statement type) and sqlglot's reading of the one reading are the
same; the texts it refuses are counted, and must not be most of them."""
from __future__ import annotations

import random

import duckdb
import pytest
import sqlglot
from sqlglot import exp

from duckask.utils.db.ast import statement_types
from duckask.utils.db.lexing import TwoReadings, one_reading, strip_comments
from duckask.utils.db.live_sql import cte_tables
from duckask.utils.db.reads import resolve

NESTED = ("SELECT name FROM teams WHERE false /*/* */ UNION ALL SELECT name || chr(58) || salary FROM salaries "
          "/* /* */* */ */")


def test_the_nested_comment_probe_reads_as_duckdb_reads_it():
    text = one_reading(NESTED)
    assert "salaries" not in text and "UNION" not in text
    assert {t.name for t in sqlglot.parse_one(text, read="duckdb").find_all(exp.Table)} == {"teams"}
    assert {t.name for t in resolve(NESTED).tables} == {"teams"}


@pytest.mark.parametrize("sql, why", [
    ("SELECT 1 /* never closed", "never closed"),
    ("SELECT\u00a0a FROM t", "where DuckDB reads none"),          # a no-break space: one word to DuckDB
    ("SELECT 'abc", "cannot read"),
])
def test_what_the_two_read_differently_is_refused(sql, why):
    with pytest.raises(TwoReadings, match=why):
        one_reading(sql)


@pytest.mark.parametrize("sql", [
    "SELECT 'x\\' AS s, '; DROP TABLE t; --' AS u", "SELECT $tag$ a $$ b $tag$ AS s", "SELECT E'\\'; DROP' AS x",
    "SELECT a.b, t.\"x\"\"y\", 1.5, .5, 1e3, a::int, x->>'k' FROM t ORDER BY 1 DESC", "SELECT x'ff', 'a' 'b'",
    "SELECT [1,2,3][1:2], {'a': 1}, COLUMNS('^a') FROM t", "SELECT * EXCLUDE (a) REPLACE (lower(b) AS b) FROM t",
    "SELECT a FROM t WHERE b ILIKE '%x%' AND c !~~ 'y'", "SELECT café FROM t WHERE s = 'é/*'",
])
def test_ordinary_and_unusual_text_passes_unchanged(sql):
    assert one_reading(sql) == sql


def test_comments_become_spaces_and_nothing_else_changes():
    assert one_reading("SELECT 1 /* a /* nested */ still */ + 2 -- x\nFROM t") == "SELECT 1   + 2  \nFROM t"
    assert strip_comments("SELECT '/* not a comment */' AS s") == "SELECT '/* not a comment */' AS s"


def test_the_engine_text_is_read_in_its_dialect():
    assert one_reading('SELECT "a" FROM "public"."t" WHERE s = $$x$$', "postgres")
    assert one_reading('SELECT "a" FROM "public"."t" /* /* */ UNION SELECT 1 */', "postgres") == \
        'SELECT "a" FROM "public"."t"  '          # PostgreSQL's scanner nests comments as DuckDB's does
    with pytest.raises(TwoReadings):
        one_reading("SELECT 1 AS \u00a0x", "postgres")


# ---------------------------------------------------------------- the differential test
FRAGMENTS = [
    " ", "  ", "\n", "\t", "\u00a0", "\u2003", "\u3000", "/*", "*/", "/* c */", "/*/*", "*/*", "--", "-- c\n", "'",
    "''",
    "'x'", "\"", "\"q\"", "$$", "$t$", "E'", "\\'", "\\", "e'\\''", "U&'", "x'", "b'", ";", "(", ")", ",", "*", "/",
    "-", "+", "||", "::", "->>", "!~~", "=", "1", ".5", "1e3", "SELECT", "FROM", "WHERE", "UNION ALL", "WITH", "AS",
    "teams", "salaries", "s", "t", "name", "chr(58)", "true", "false", "NULL",
]
BASES = ["SELECT name FROM teams WHERE false {x} UNION ALL SELECT name FROM salaries {y}",
         "SELECT {x} name FROM teams {y}", "SELECT 'a{x}' AS s, name FROM teams WHERE name = '{y}'",
         "WITH s AS (SELECT name FROM teams {x}) SELECT * FROM s {y}", "SELECT name {x} FROM teams, salaries {y}",
         "SELECT \"{x}\" FROM teams {y}", "SELECT $${x}$$ AS v FROM teams {y}", "SELECT E'{x}' AS v {y} FROM teams"]


def _texts(n: int, seed: int = 62) -> list[str]:
    rng = random.Random(seed)

    def bit() -> str:
        return "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 5)))

    return [rng.choice(BASES).format(x=bit(), y=bit()) for _ in range(n)]


def _duck_reading(sql: str) -> tuple | None:
    """DuckDB's reading of the original text: statement types and tables read (None: DuckDB does not parse it)."""
    try:
        if len(duckdb.extract_statements(sql)) != 1:
            return ("many",)
    except duckdb.Error:
        return None
    reads = resolve(sql)
    return (tuple(statement_types(sql) or ()), frozenset(t.name for t in reads.tables) if reads else None)


def _glot_reading(text: str) -> tuple | None:
    try:
        trees = [t for t in sqlglot.parse(text, read="duckdb") if t is not None]
    except sqlglot.errors.SqlglotError:
        return None
    if len(trees) != 1:
        return ("many",)
    tree = trees[0]
    ctes = cte_tables(tree, fold_all=True)
    kind = "SELECT" if isinstance(tree, exp.Query) else type(tree).__name__.upper()
    return ((kind,), frozenset(t.name.lower() for t in tree.find_all(exp.Table) if id(t) not in ctes))


def test_differential_two_readers_agree_or_the_text_is_refused():
    agreed = refused = unparsed = 0
    for sql in _texts(3000):
        try:
            text = one_reading(sql)
        except TwoReadings:
            refused += 1
            continue
        duck = _duck_reading(sql)
        if duck is None:                 # DuckDB does not parse it: nothing runs, whatever sqlglot makes of it
            unparsed += 1
            continue
        assert _duck_reading(text) == duck, sql          # taking the comments out changed nothing DuckDB reads
        glot = _glot_reading(text)
        if glot is None:                 # sqlglot does not parse what DuckDB does: the live path refuses it
            unparsed += 1
            continue
        assert glot == duck, (sql, text, glot, duck)
        agreed += 1
    assert agreed >= 400, (agreed, refused, unparsed)     # a good share of the texts is read, not refused
    assert refused >= 400, (agreed, refused, unparsed)    # the hostile fragments are refused, not only passed
