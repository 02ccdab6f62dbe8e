"""The SQL rules as data: every recorded case in tests/fixtures/sql_rules/ must give exactly the
expected query (the whole text, not a substring).

- ``tidy.sql``: ``tidy_sql`` (the ``RULES`` list) on queries the model wrote, with their question;
- ``repair.sql``: the free repair loop (``run_repaired``: ``REPAIRS``, then ``tidy_sql``) on queries
  DuckDB rejected, run on the real Spider database so that DuckDB writes the error messages.

The cases come from recorded eval runs (``bench/rule_fixtures.py``); the expectations were written by
the code before the rules became lists, and match it case for case. They run in any clone: each case's
database is built empty from its schema (``schemas/<db>.sql``: the tables, keys and foreign keys of the
Spider database, no rows), which is all the rules and DuckDB's binder errors read.
"""
from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from conftest import SHARED, requires_shared

from duckask.utils.config import load_settings
from duckask.utils.db.database import open_database
from duckask.utils.semantic import get_catalog
from duckask.utils.sql.drafts import run_repaired
from duckask.utils.sql.tidy import tidy_sql

FIXTURES = Path(__file__).parent / "fixtures" / "sql_rules"
SPIDER_DBS = SHARED / "benchmarks" / "spider_dev" / "dbs"


def load_cases(name: str) -> list:
    """``-- id | db | question`` then the input and the expected query, one line each."""
    lines = (FIXTURES / name).read_text().splitlines()
    cases = []
    for i, line in enumerate(lines):
        if line.startswith("-- ") and line.count(" | ") >= 2 and i + 2 < len(lines):
            qid, db, question = line[3:].split(" | ", 2)
            cases.append(pytest.param(db, question, lines[i + 1], lines[i + 2], id=f"{qid}-{i + 1}"))
    return cases


SCHEMAS = FIXTURES / "schemas"


@pytest.fixture(scope="module")
def spider(tmp_path_factory):
    """db_id -> (Database, Catalog) of an empty database built from the committed schema, once a module."""
    settings = load_settings(None, cache_dir=str(tmp_path_factory.mktemp("fixture-cache")))
    folder = tmp_path_factory.mktemp("fixture-dbs")
    opened: dict[str, tuple] = {}

    def get(db_id: str):
        if db_id not in opened:
            path = folder / f"{db_id}.duckdb"
            with duckdb.connect(str(path)) as con:
                con.execute((SCHEMAS / f"{db_id}.sql").read_text())
            db = open_database(path, settings)
            opened[db_id] = (db, get_catalog(db, settings))
        return opened[db_id]

    return get


def test_the_fixture_files_hold_cases_of_every_kind():
    tidy, repair = load_cases("tidy.sql"), load_cases("repair.sql")
    assert len(tidy) >= 100 and len(repair) >= 60
    assert sum(c.values[2] != c.values[3] for c in tidy) >= 30      # rewritten, not only left alone
    assert sum(c.values[2] == c.values[3] for c in repair) >= 10    # unfixable queries stay as they are


@pytest.mark.parametrize("db_id, question, sql, expected", load_cases("tidy.sql"))
def test_tidy_rules(spider, db_id, question, sql, expected):
    _, catalog = spider(db_id)
    assert tidy_sql(sql, catalog, question) == expected


@pytest.mark.parametrize("db_id, question, sql, expected", load_cases("repair.sql"))
def test_repair_rules(spider, db_id, question, sql, expected):
    db, catalog = spider(db_id)
    assert run_repaired(db.run, sql, catalog, question).sql == expected


def test_every_case_has_its_schema():
    used = {c.values[0] for name in ("tidy.sql", "repair.sql") for c in load_cases(name)}
    assert used == {p.stem for p in SCHEMAS.glob("*.sql")}


@requires_shared
def test_the_committed_schemas_are_the_spider_databases():
    for path in sorted(SCHEMAS.glob("*.sql")):
        assert path.read_text() == (SPIDER_DBS / path.stem / "schema.sql").read_text(), path.name
