"""What duckask learns about a database beyond its schema: verified example question → SQL pairs.

- ``examples``: the ``Example`` type, example files (YAML/JSONL) and ``verify`` (the SQL must pass the
  safe executor and return rows before it is kept);
- ``store``: the per-database knowledge store, a DuckDB file in the user's cache (never the user's
  database), keyed to the database so that pairs never cross databases;
- ``retrieve``: the few most similar pairs for a question (lexical, deterministic), the one function
  an embedding retriever could replace;
- ``keep``: keeping a pair as a write to the knowledge: who may keep or only suggest, and the audit of both;
- ``templates``: a question that is a kept pair's with other literals gets the pair's SQL with them put in;
- ``index``: the word index over a database's pairs that templates and retrieval read, so a question's matching
  does not grow with the number of pairs;
- ``demo``: what the Lahman demo is taught, and only the demo (``demo_knowledge``).
"""
from __future__ import annotations

import functools
import importlib
import threading
from pathlib import Path

__all__ = ["Example", "ExampleError", "KnowledgeStore", "database_identity", "examples_for", "teach"]

# Re-exported lazily, so that ``python -m duckask.utils.knowledge.<module>`` does not import the
# module twice (once as part of this package, once as __main__).
_LAZY = {"Example": "examples", "ExampleError": "examples", "KnowledgeStore": "store", "database_identity": "store"}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f"duckask.utils.knowledge.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'duckask.utils.knowledge' has no attribute {name!r}")


_FILES: dict[tuple, list] = {}
_LOCK = threading.Lock()


def _mtime(path: Path) -> int:
    return path.stat().st_mtime_ns if path.exists() else 0


def examples_for(db, settings) -> list:
    """Every pair for ``db`` (a ``Database``, or a user's ``ScopedDatabase``) that its asker may run: the settings'
    ``examples`` file (each pair verified once per file version on the database itself, whoever asks first; a pair
    that fails, or is over ``keep.MAX_PAIR_SQL``, is an ``ExampleError`` naming it) and the pairs taught for this
    database (by path and identity) in the knowledge store. A pair whose SQL the asker may not run is left out
    (``offered``): a template, a few-shot example, a suggested question never tells her of a table she may not
    read."""
    from duckask.utils.knowledge.examples import Example, ExampleError, load_examples, verify
    from duckask.utils.knowledge.keep import check_size, pairs_of

    out: list[Example] = []
    whole = db.unscoped
    if settings.examples:
        path = Path(settings.examples).expanduser()
        key = (str(path.resolve()), _mtime(path), whole.key)
        with _LOCK:
            if key not in _FILES:
                checked = []
                for ex in load_examples(path):
                    try:
                        check_size(ex.question, ex.sql)
                        checked.append(Example(question=ex.question, sql=ex.sql, id=ex.id,
                                               tables=verify(whole, ex.question, ex.sql).tables))
                    except ExampleError as e:
                        raise ExampleError(f"{ex.id}: {e} (fix or remove this pair in {path})") from None
                _FILES[key] = checked
            out += _FILES[key]
    if settings.state or settings.resolved_knowledge_file.exists():
        out += pairs_of(db, settings)
    return offered(db, out)


def offered(db, examples: list) -> list:
    """The pairs of ``examples`` the asker of ``db`` may run (all of them for an unscoped database): each decided
    by ``db.refusal`` (the allowlist from DuckDB's parse and binder) once per pair, database state and scope."""
    if db.unscoped is db:
        return examples
    memo = _may_run()
    return [ex for ex in examples
            if memo.get((db.key, db.scope_key, ex.sql), lambda ex=ex: db.refusal(ex.sql) is None)]


@functools.cache
def _may_run():
    """Whether an allowlist lets its asker run a pair, per pair, database state and allowlist."""
    from duckask.utils.knowledge.index import Memo

    return Memo(50_000)


def teach(question: str, sql: str, db: str, settings=None):
    """Verify a pair on ``db`` (it must run through the safe executor and return rows) and store it
    for that database, with an audit entry naming who kept it (``keep``); returns it with its id.
    ``ExampleError`` says why a pair was refused."""
    from duckask.utils.config import load_settings
    from duckask.utils.db.database import open_database
    from duckask.utils.knowledge.keep import keep

    settings = settings or load_settings()
    return keep(open_database(db, settings), settings, question, sql).example
