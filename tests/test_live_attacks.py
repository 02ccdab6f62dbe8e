"""Every hostile case of the attack tables, run on a source asked live in PostgreSQL (issue 54): the cases of
tests/fixtures/attacks.yaml, then those of attacks_live.yaml (what is harmless in DuckDB and would not be in
Postgres, and what only the engine can stop). None may answer where it should have been refused or stopped, and
afterwards Postgres's rows, relations, settings and sequence are as they were (checked in Postgres)."""
from __future__ import annotations

import pytest
from attack_cases import LIVE_FILE, LIVE_TABLES, PG_DB, TIMEOUT_S, live_as_expected, load_cases, pg_state, run_case

from duckask.utils.config import load_settings
from duckask.utils.db.database import open_database

CASES = load_cases()
LIVE = load_cases(LIVE_FILE)


@pytest.fixture(scope="module")
def attacked(postgres, tmp_path_factory):
    """(the live Database, the state before); after the module's last case, the state is unchanged."""
    url = postgres.create_database("attacked", *PG_DB)
    before = pg_state(postgres, "attacked")
    settings = load_settings(None, cache_dir=str(tmp_path_factory.mktemp("live-attack-cache")), source_mode="live",
                             source_tables=LIVE_TABLES)
    db = open_database(url, settings)
    assert db.live
    yield db
    assert pg_state(postgres, "attacked") == before, "an attack changed PostgreSQL"


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_every_case_of_the_table_run_live(attacked, case):
    record = run_case(attacked, case)
    assert not record["harmful"], record
    assert live_as_expected(case, record), record


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in LIVE])
def test_the_live_cases(attacked, case):
    record = run_case(attacked, case)
    assert record["as_expected"], (record["status"], record["error"])
    assert record["seconds"] < TIMEOUT_S + 5


def test_the_live_table_covers_what_postgres_adds():
    assert len(LIVE) >= 20 and {c.category for c in LIVE} >= {"live-functions", "live-catalog", "live-quoting",
                                                              "live-runaway", "live-one-reading", "live-unbound"}
