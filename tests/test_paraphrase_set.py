"""Issue 65's paraphrase set (bench/paraphrase_pairs.yaml) holds: every gold runs on the demo and answers something,
a paraphrase's values are literals of its pair's SQL, a near-miss's answer differs from its pair's, and the two halves
share no question."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import duckdb
import pandas as pd
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))   # bench/learning_curve.py: the substitution the benchmarks use
from learning_curve import substitute  # noqa: E402

SPEC = yaml.safe_load((ROOT / "bench" / "paraphrase_pairs.yaml").read_text())
DB = ROOT / SPEC["db"]
PAIRS = [(half, pair) for half, pairs in SPEC["halves"].items() for pair in pairs]
pytestmark = pytest.mark.skipif(not DB.exists(), reason=f"{DB} is built by .ci/setup (python -m duckask.data.lahman)")


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    """A copy of the demo: another test's process may hold the file's write lock while this one reads it."""
    copy = tmp_path_factory.mktemp("paraphrase") / "lahman.duckdb"
    shutil.copyfile(DB, copy)
    return copy


def _rows(db: Path, sql: str) -> pd.DataFrame:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).df()


@pytest.mark.parametrize("half,pair", PAIRS, ids=[p["id"] for _, p in PAIRS])
def test_every_gold_runs_and_near_misses_differ(half, pair, demo):
    kept = _rows(demo, pair["sql"])
    assert len(kept), pair["id"]
    for para in pair["paraphrases"]:
        assert len(_rows(demo, substitute(pair["sql"], para["sub"]))), para["question"]
    assert len(pair["near_misses"]) >= 2
    for near in pair["near_misses"]:
        other = _rows(demo, near["gold"])
        assert len(other), near["question"]
        assert not other.reset_index(drop=True).equals(kept.reset_index(drop=True)), near["question"]


def test_the_halves_share_no_question_and_hold_five_pairs_each():
    texts = {half: {p["question"] for p in pairs} | {q["question"] for p in pairs
                                                     for q in p["paraphrases"] + p["near_misses"]}
             for half, pairs in SPEC["halves"].items()}
    assert not texts["dev"] & texts["heldout"]
    assert [len(SPEC["halves"][h]) for h in ("dev", "heldout")] == [5, 5]
