"""Where taught pairs are kept: this machine's knowledge store (``store.KnowledgeStore``, a DuckDB file) or the
shared state several servers use (``PgKnowledge``, on ``state.shared_state``'s Postgres database), chosen by the
``state`` setting (``knowledge_store``). The state package keeps the storage (connections, tables, the audit);
what a pair is, and which store holds it, is decided here, above it."""
from __future__ import annotations

import contextlib
import json

from duckask.utils.config import Settings
from duckask.utils.knowledge.examples import Example, ExampleError
from duckask.utils.knowledge.store import KnowledgeStore
from duckask.utils.state import shared_state
from duckask.utils.state.postgres import PgState, StateError, put_example


def knowledge_store(settings: Settings):
    """Taught pairs: ``add(db, example)``, ``list(db)``, ``remove(db, id)``."""
    state = shared_state(settings)
    return KnowledgeStore(settings.resolved_knowledge_file) if state is None else PgKnowledge(state)


class PgKnowledge:
    """``knowledge.store.KnowledgeStore``'s operations on the shared state."""

    def __init__(self, state: PgState):
        self.state, self.path = state, state.shown

    def add(self, db: str, example: Example, db_id: str = "") -> int:
        with self._errors(), self.state.transaction() as cur:
            return put_example(cur, db, example.question, example.sql, example.tables, renew=True, db_id=db_id)

    def list(self, db: str, db_id: str | None = None) -> list[Example]:
        with self._errors(), self.state.transaction() as cur:
            if db_id is None:
                cur.execute("SELECT id, question, sql, tables FROM duckask.examples WHERE db = $1 ORDER BY id", (db,))
            else:
                cur.execute("SELECT id, question, sql, tables FROM duckask.examples WHERE db = $1 "
                            "AND db_id IN ('', $2) ORDER BY id", (db, db_id))
            rows = cur.fetchall()
        return [Example(question=q, sql=s, id=str(i), tables=json.loads(t or "[]")) for i, q, s, t in rows]

    def remove(self, db: str, example_id: int) -> bool:
        with self._errors(), self.state.transaction() as cur:
            cur.execute("DELETE FROM duckask.examples WHERE db = $1 AND id = $2 RETURNING id", (db, int(example_id)))
            return bool(cur.fetchall())

    @contextlib.contextmanager
    def _errors(self):
        try:
            yield
        except StateError as e:
            raise ExampleError(str(e), public=StateError.PUBLIC) from None
