"""What test_semantic_layer.py and test_semantic_graph.py share: the question set, the scripted models, the fixtures."""
from __future__ import annotations

import pytest

from duckask.data.lahman import demo_db_path
from duckask.utils.config import load_settings
from duckask.utils.db.database import open_database
from duckask.utils.knowledge.demo import DATA
from duckask.utils.semantic.manifest import load_layer

DEMO = DATA / "lahman_semantic.yaml"
LEGACY = DATA / "lahman_semantic_legacy.yaml"


@pytest.fixture(scope="module")
def layer():
    return load_layer(DEMO)


class _Runner:
    """The demo database through duckask's read-only executor (the connection other tests share)."""

    def __init__(self, db):
        self.db = db

    def execute(self, sql):
        out = self.db.run(sql)
        assert out.ok, out.error
        self.rows = [tuple(r) for r in out.df.itertuples(index=False)]
        return self

    def fetchall(self):
        return self.rows


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return _Runner(open_database(demo_db_path(), load_settings(None, cache_dir=str(tmp_path_factory.mktemp("c")))))
