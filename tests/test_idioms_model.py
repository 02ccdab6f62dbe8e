"""DuckDB's own SQL end to end with the real embedded model (issue 31): dev-half questions on databases
bench/idioms_dbs.py builds (no examples, no semantic file), each asserted on the executed result against
the gold query's. The dev half is the tuned half: these say that the pieces work together, not how often."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from duckask.utils.config import load_settings
from duckask.utils.db.database import open_database
from duckask.utils.sql.compare import results_match
from duckask.utils.sql.describe import has_top_level_order_by

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import idioms_dbs  # noqa: E402

pytestmark = pytest.mark.model
DEV = {q["id"]: q for q in yaml.safe_load((ROOT / "bench" / "idioms_dev.yaml").read_text())}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("idioms")
    idioms_dbs.build(out)
    return out


# One idiom with the real model in CI (the idioms-dev suite, bench/suites.yaml, asks all of them; tr03, ss13 and su07
# were tests here until CI was held to 25 minutes).
@pytest.mark.parametrize("qid, idiom", [
    ("ca08", "['color']"),          # a MAP column's key
])
def test_a_duckdb_idiom_answers_a_fresh_database(built, model_opts, qid, idiom):
    from duckask import ask

    q = DEV[qid]
    db = str(built / Path(q["db"]).name)
    r = ask(q["question"], db=db, **model_opts)
    assert r.status == "answered", r.answer
    gold = open_database(db, load_settings(None, cache_dir=model_opts["cache_dir"])).run(q["gold_sql"])
    assert gold.ok, gold.error
    assert results_match(r.df, gold.df, order_matters=has_top_level_order_by(q["gold_sql"])), (
        f"\nSQL:  {r.sql}\nGOLD: {q['gold_sql']}\npred:\n{r.df}\ngold:\n{gold.df}")
    assert idiom.lower() in r.sql.lower()
