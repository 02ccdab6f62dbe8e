"""The page's threads (``duckask serve``): each browser session's conversation, kept where the state is.

A thread is what ``Conversation`` keeps of each turn (``conversation.turn_record``: enough to resolve a follow-up
such as "and in 2015?") plus the turn as the page showed it (the answer's JSON, its rows cut to ``SHOWN_ROWS``),
so a reload draws the thread again. Threads are keyed by the asker (the user of a key, or the client's address on
an open server) and the page's ``X-Duckask-Session``, so one person never sees another's. Bounded: at most
``MAX_TURNS`` turns a thread (the oldest go), ``MAX_THREADS`` threads (the least recently used go) and
``MAX_AGE_S`` of quiet (a thread older than that starts again).

Two places, as the rest of the state (``state.thread_store``):

- ``MemoryThreads`` (no shared state): in the server's memory; a restart forgets them;
- ``PgThreads`` (``state: postgresql://...``): the tables ``duckask.threads`` (a row per thread) and
  ``duckask.thread_turns`` (a row per turn), so a follow-up sent to another server behind the balancer is
  resolved against the same thread. An append is one transaction holding the thread's row (``SELECT ... FOR
  UPDATE``): two turns of one thread on two servers at once both land, in the order they finished.

Neither keeps a write card's one-time ``approval_token`` (only its sha256 is kept anywhere, in the card store):
a pending write redrawn after a reload is shown, not decidable from the redrawn card.
"""
from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

MAX_TURNS = 50
MAX_THREADS = 500
MAX_AGE_S = 24 * 3600.0
SHOWN_ROWS = 200

Key = tuple[str, str]          # (asker, session)


def as_shown(shown: dict[str, Any]) -> dict[str, Any]:
    """A turn as a thread keeps it for drawing: rows cut to ``SHOWN_ROWS``, no approval token."""
    out = {**shown, "rows": (shown.get("rows") or [])[:SHOWN_ROWS]}
    if isinstance(out.get("write"), dict):
        out["write"] = {k: v for k, v in out["write"].items() if k != "approval_token"}
    return out


@dataclass
class Thread:
    history: list[dict] = field(default_factory=list)     # conversation.turn_record of each turn
    shown: list[dict] = field(default_factory=list)       # each turn's answer JSON as the page drew it
    touched: float = 0.0


class MemoryThreads:
    def __init__(self, max_threads: int = MAX_THREADS, max_turns: int = MAX_TURNS, max_age_s: float = MAX_AGE_S,
                 clock=time.monotonic):
        self.max_threads, self.max_turns, self.max_age_s, self.clock = max_threads, max_turns, max_age_s, clock
        self._threads: OrderedDict[Key, Thread] = OrderedDict()
        self._lock = threading.Lock()

    def _get(self, key: Key) -> Thread:
        now = self.clock()
        thread = self._threads.get(key)
        if thread is None or now - thread.touched > self.max_age_s:
            thread = self._threads[key] = Thread()
        thread.touched = now
        self._threads.move_to_end(key)
        while len(self._threads) > self.max_threads:
            self._threads.popitem(last=False)
        return thread

    def history(self, key: Key, last: int | None = None) -> list[dict]:
        """The turns a follow-up is resolved against, the ``last`` ones or all (copies: a running turn never sees
        another change them)."""
        with self._lock:
            turns = self._get(key).history
            return [dict(t) for t in (turns[-last:] if last else turns)]

    def shown(self, key: Key) -> list[dict]:
        with self._lock:
            return list(self._get(key).shown)

    def add(self, key: Key, record: dict, shown: dict[str, Any]) -> None:
        shown = as_shown(shown)
        with self._lock:
            thread = self._get(key)
            thread.history.append(record)
            thread.shown.append(shown)
            del thread.history[:-self.max_turns], thread.shown[:-self.max_turns]

    def clear(self, key: Key) -> None:
        with self._lock:
            self._threads.pop(key, None)


class PgThreads:
    """Threads in the shared state: ``duckask.threads`` holds one row per database, asker and session (when it was
    last added to, wall-clock: servers share it, not a monotonic clock) and ``duckask.thread_turns`` one row per
    turn (its history record and shown JSON), deleted with its thread. A turn costs one small insert and a
    follow-up reads only the turns it is resolved against, however long the thread (one JSON value per thread,
    read and rewritten whole on every turn, halved two servers' throughput in ``bench/scale_out.py``: 36.9
    requests a second against 68.7 and 75.4 in two runs of this, 2026-11-26). The age and count bounds are
    applied on every append."""

    def __init__(self, state, db: str, max_threads: int = MAX_THREADS, max_turns: int = MAX_TURNS,
                 max_age_s: float = MAX_AGE_S, clock=time.time):
        self.state, self.db = state, db
        self.max_threads, self.max_turns, self.max_age_s, self.clock = max_threads, max_turns, max_age_s, clock

    _KEY = "db = $1 AND asker = $2 AND session = $3"

    def _turns(self, key: Key, column: str, last: int | None) -> list[dict]:
        with self.state.transaction() as cur:
            cur.execute(f"SELECT t.{column} FROM duckask.thread_turns t JOIN duckask.threads h USING (db, asker, "
                        f"session) WHERE t.db = $1 AND t.asker = $2 AND t.session = $3 AND h.touched >= $4 "
                        f"ORDER BY t.id DESC LIMIT {int(last) if last else self.max_turns}",
                        (self.db, *key, self.clock() - self.max_age_s))
            rows = cur.fetchall()
        return [json.loads(r[0]) for r in reversed(rows)]

    def history(self, key: Key, last: int | None = None) -> list[dict]:
        return self._turns(key, "history", last)

    def shown(self, key: Key) -> list[dict]:
        return self._turns(key, "shown", None)

    def add(self, key: Key, record: dict, shown: dict[str, Any]) -> None:
        now = self.clock()
        with self.state.transaction() as cur:
            cur.execute("INSERT INTO duckask.threads (db, asker, session, touched) VALUES ($1, $2, $3, $4) "
                        "ON CONFLICT DO NOTHING", (self.db, *key, now))
            cur.execute(f"SELECT touched FROM duckask.threads WHERE {self._KEY} FOR UPDATE", (self.db, *key))
            if now - cur.fetchone()[0] > self.max_age_s:                       # quiet too long: starts again
                cur.execute(f"DELETE FROM duckask.thread_turns WHERE {self._KEY}", (self.db, *key))
            cur.execute("INSERT INTO duckask.thread_turns (db, asker, session, history, shown) VALUES ($1, $2, $3, "
                        "$4, $5)", (self.db, *key, json.dumps(record, default=str),
                                    json.dumps(as_shown(shown), default=str)))
            cur.execute(f"DELETE FROM duckask.thread_turns WHERE {self._KEY} AND id <= (SELECT id FROM "
                        f"duckask.thread_turns WHERE {self._KEY} ORDER BY id DESC OFFSET $4 LIMIT 1)",
                        (self.db, *key, self.max_turns))
            cur.execute(f"UPDATE duckask.threads SET touched = $4 WHERE {self._KEY}", (self.db, *key, now))
            cur.execute("DELETE FROM duckask.threads WHERE db = $1 AND (touched < $2 OR (asker, session) NOT IN "
                        "(SELECT asker, session FROM duckask.threads WHERE db = $1 ORDER BY touched DESC LIMIT $3))",
                        (self.db, now - self.max_age_s, self.max_threads))

    def clear(self, key: Key) -> None:
        with self.state.transaction() as cur:
            cur.execute(f"DELETE FROM duckask.threads WHERE {self._KEY}", (self.db, *key))
