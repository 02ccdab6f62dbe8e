"""The peer's harness (bench/peer.py, issue 53 item 7): its reply cleaning is what the chain's users do, no more, and
the sets it asks are the runner's own question files."""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import bench_module

ROOT = Path(__file__).resolve().parents[1]
peer = bench_module("peer")


@pytest.mark.parametrize("reply,sql", [
    ("SELECT count(*) FROM players", "SELECT count(*) FROM players"),
    ("SQLQuery: SELECT count(*) FROM players", "SELECT count(*) FROM players"),
    ("SQLQuery:SELECT 1;\nSQLResult: 1\nAnswer: one", "SELECT 1"),
    ("```sql\nSELECT team FROM teams LIMIT 1;\n```", "SELECT team FROM teams LIMIT 1"),
    ("Question: x\n\nSQLQuery:\nSELECT 2\nSQLResult: [(2,)]", "SELECT 2"),        # the question echoed first
    ("SELECT a FROM t WHERE b = 'x'\n\nAnswer: the a", "SELECT a FROM t WHERE b = 'x'"),
])
def test_the_reply_is_cleaned_as_the_chains_users_do(reply, sql):
    assert peer.clean_sql(reply) == sql


def test_the_peer_asks_the_runners_own_sets():
    import yaml

    suites = yaml.safe_load((ROOT / "bench" / "suites.yaml").read_text())["suites"]
    for name, (questions, db, models) in peer.SETS.items():
        suite = suites[name]
        assert suite["questions"] == questions, name
        assert db == suite.get("db"), name
        assert models is None or models in suite["configs"].get("models", []), name
    assert suites["peer"]["kind"] == "script" and "bench/peer.py" in suites["peer"]["command"]
