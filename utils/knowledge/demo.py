"""What the Lahman demo is taught, and when: the demo's knowledge policy (the database itself is built by
``data/lahman.py``). ``ask`` on the demo database uses its verified example pairs and its semantic file, each
unless the caller chose one ("" chooses none); any other database is left as it is.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from duckask.data.lahman import DEFAULT_PATH

DATA = Path(DEFAULT_PATH).parent
#: What the demo is taught: verified example pairs written from the databank's documentation.
DEMO_EXAMPLES = DATA / "lahman_examples.yaml"
#: ... and its semantic file: instructions, metrics, synonyms and values from the same documentation.
DEMO_SEMANTIC = DATA / "lahman_semantic.yaml"


def is_demo_db(db: str | Path) -> bool:
    """Whether ``db`` is the demo database (which ``ask`` then teaches: ``demo_knowledge``)."""
    return Path(db).expanduser().resolve() == Path(DEFAULT_PATH).resolve()   # a linked install too


def demo_knowledge(settings, db: str | Path):
    """``settings`` with the demo's knowledge when ``db`` is the demo database: its example pairs and its
    semantic file, each unless the caller chose one ("" chooses none). Other databases: unchanged."""
    if not is_demo_db(db):
        return settings
    chosen = {"examples": str(DEMO_EXAMPLES), "descriptions": str(DEMO_SEMANTIC)}
    return dataclasses.replace(settings, **{k: v for k, v in chosen.items() if getattr(settings, k) is None})
