"""The hostile-SQL table (tests/fixtures/attacks.yaml, over 100 cases) against the real executor and
against the whole flow, and afterwards nothing on disk has changed.

- Executor: each case on a DuckDB file and on an EXPORT DATABASE folder, from an empty working
  directory; refused cases must say the expected reason, runaway ones stop at the timeout, harmless
  ones answer.
- Flow: a scripted model that writes the attack as its SQL (and again as every fix) through ``ask``:
  no refused or runaway case may end with an answer.
- Disk: the database file's bytes and mtime, and every file under the watched folders, are the same
  before and after the whole table; the working directory stays empty.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from attack_cases import TIMEOUT_S, load_cases, run_case

from duckask import ask
from duckask.utils.config import Settings
from duckask.utils.db.ast import statement_types
from duckask.utils.db.database import open_database
from duckask.utils.llm import ScriptedLLM

CASES = load_cases()


def _params(cases):
    """One parameter a case; a runaway one waits for the timeout, so it is slow (pytest -m "" runs it)."""
    return [pytest.param(c, id=c.id, marks=[pytest.mark.slow] if c.expect == "timeout" else []) for c in cases]


def _snapshot(roots: list[Path]) -> dict[str, tuple[int, int, bytes]]:
    """{path: (size, mtime_ns, bytes)} of every file under the roots."""
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns, p.read_bytes())
            for root in roots for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def target(db_source, test_cache_dir):
    """(db argument, settings); checks after the module's last case that no file under the watched
    folders changed (bytes, size or mtime)."""
    db_arg, watched = db_source
    before = _snapshot(watched)
    yield db_arg, Settings(cache_dir=str(test_cache_dir))
    assert _snapshot(watched) == before, "an attack changed a file on disk"


def test_the_table_is_big_and_covers_every_category():
    assert len(CASES) >= 60
    assert {c.category for c in CASES} >= {"ddl-dml", "multi-statement", "files", "settings", "metadata",
                                           "runaway", "odd-text"}
    assert all(c.reason for c in CASES if c.expect == "refused")


@pytest.mark.parametrize("case", _params(CASES))
def test_executor(target, empty_cwd, case):
    db = open_database(target[0], target[1])
    rec = run_case(db, case)
    assert rec["as_expected"], f"expected {case.expect} ({case.reason}), got {rec['status']}: {rec['error']}"
    if case.expect == "timeout":
        assert rec["seconds"] < 1.5 * TIMEOUT_S + 0.25     # stopped within 1.5x the timeout (+ scheduling)
    assert os.listdir(empty_cwd) == []
    # The connection is still usable and the data intact.
    after = db.run("SELECT count(*) AS n, sum(i) AS s FROM t")
    assert after.ok and after.df.values.tolist() == [[3, 6]]


@pytest.mark.parametrize("case", _params([c for c in CASES if c.expect in ("refused", "timeout")]))
def test_flow(target, empty_cwd, case):
    """The model itself writes the attack, first draft and every fix: the flow never answers with it."""
    llm = ScriptedLLM({"SQLGenerator": [case.sql], "ErrorFixer": [case.sql], "ClarifyQuery": ["CLEAR"],
                       "TableSelector": ["t"], "ResponseGrader": ["verdict: pass"], "DataAnalyzer": ["ok"]})
    t0 = time.perf_counter()
    r = ask("How many rows does t have?", db=target[0], llm=llm, settings=target[1], timeout_s=TIMEOUT_S)
    if r.status == "answered":
        # The model's reply is cut to its first statement (extract_sql), so "SELECT 1; DROP TABLE t"
        # may answer as the harmless "SELECT 1": never with the rest, and the data is intact.
        assert statement_types(r.sql) == ["SELECT"] and r.sql != case.sql, f"the flow answered with {r.sql!r}"
        assert case.sql.lstrip().upper().startswith("SELECT") and ";" in case.sql
    else:
        assert r.df is None
    assert time.perf_counter() - t0 < 15
    assert os.listdir(empty_cwd) == []
    after = open_database(target[0], target[1]).run("SELECT count(*) AS n, sum(i) AS s FROM t")
    assert after.ok and after.df.values.tolist() == [[3, 6]]


@pytest.mark.parametrize("case", _params([c for c in CASES if c.expect in ("refused", "timeout")]))
def test_user_sql(target, empty_cwd, case):
    """The same SQL handed in by the user (``ask --sql``, pasted in chat): run as given, so refused
    whole; the model is never asked to rewrite it."""
    llm = ScriptedLLM({})
    if not case.sql.strip():
        with pytest.raises(ValueError, match="needs a question or sql"):  # nothing handed in: a usage error
            ask(sql=case.sql, db=target[0], llm=llm, settings=target[1])
        return
    r = ask(sql=case.sql, db=target[0], llm=llm, settings=target[1], timeout_s=TIMEOUT_S)
    assert r.status != "answered" and r.df is None, f"the user's {case.sql!r} was answered"
    assert r.intent == "sql" and llm.count() == 0
    assert os.listdir(empty_cwd) == []
