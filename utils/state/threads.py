"""The page's threads (``duckask serve``): each browser session's conversation, kept where the state is.

A thread is what ``Conversation`` keeps of each turn (``conversation.turn_record``: enough to resolve a follow-up
such as "and in 2015?") plus the turn as the page showed it (the answer's JSON, its rows cut to ``SHOWN_ROWS``),
so a reload draws the thread again. Threads are keyed by the asker (the user of a key, or the client's address on
an open server) and the page's ``X-Duckask-Session``, so one person never sees another's; the asker is
``access.User.id`` (the key, never the name: another server's "rita" with another key is another person).
Bounded, and one asker can never push out another's thread:

- a turn is at most ``MAX_TURN_BYTES`` (texts cut to ``CELL_CHARS``, rows to ``SHOWN_ROWS`` and then as many as
  fit, the rest counted: ``rows_kept``), a thread at most ``MAX_TURNS`` turns and ``MAX_THREAD_BYTES`` (the
  oldest turns go);
- an asker has at most ``MAX_USER_THREADS`` threads (a new one pushes out *their own* least recently used);
  a database at most ``MAX_THREADS`` (past it a new thread is not kept, ``ThreadsFull``: the answer stands);
- ``MAX_AGE_S`` of quiet ends a thread; reading a thread (``GET /api/thread``) never makes one.

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
MAX_THREADS = 500              # in all, for one database: a new thread past it is not kept (nobody else's goes)
MAX_USER_THREADS = 8           # per asker: a ninth thread pushes out that asker's own least recently used
MAX_AGE_S = 24 * 3600.0
SHOWN_ROWS = 200
MAX_TURN_BYTES = 128 * 1024    # one turn as kept (JSON): rows past it are counted, not kept
MAX_THREAD_BYTES = 1024 * 1024  # one thread: its oldest turns go first
CELL_CHARS = 1000              # a text kept for drawing (a cell, an answer, a SQL text), at most
MAX_ITEMS = 500                # a list kept (columns, trace, calls), at most

Key = tuple[str, str]          # (asker's identity: access.User.id, session)


class ThreadsFull(RuntimeError):
    """The server keeps as many threads as it may: the answer stands, the turn is not kept (no one else's thread
    is pushed out to make room)."""


def _cut(value: Any) -> Any:
    """``value`` with every text cut to ``CELL_CHARS`` and every list to ``MAX_ITEMS``, however nested (walked
    without recursion: a deeply nested value cannot exhaust the stack)."""
    root = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        holder, key = stack.pop()
        v = holder[key]
        if isinstance(v, str) and len(v) > CELL_CHARS:
            holder[key] = v[:CELL_CHARS - 1] + "…"
        elif isinstance(v, dict):
            holder[key] = v = dict(v)
            stack.extend((v, k) for k in v)
        elif isinstance(v, list | tuple):
            holder[key] = v = list(v[:MAX_ITEMS])
            stack.extend((v, i) for i in range(len(v)))
    return root[0]


def size(value: Any) -> int:
    return len(json.dumps(value, default=str))


def as_shown(shown: dict[str, Any]) -> dict[str, Any]:
    """A turn as a thread keeps it for drawing: no approval token, texts and lists cut (``_cut``), rows to
    ``SHOWN_ROWS`` and then to ``MAX_TURN_BYTES`` in all; ``rows_kept`` says how many of ``row_count`` are kept
    when that is fewer."""
    out = {**shown, "rows": (shown.get("rows") or [])[:SHOWN_ROWS]}
    if isinstance(out.get("write"), dict):
        out["write"] = {k: v for k, v in out["write"].items() if k != "approval_token"}
    out = _cut(out)
    rows = out["rows"]
    while rows and size(out) > MAX_TURN_BYTES:
        rows = out["rows"] = rows[:len(rows) // 2]
    if size(out) > MAX_TURN_BYTES:         # even without rows: the parts a turn is drawn from, the rest dropped
        out = {k: out.get(k) for k in ("status", "question", "answer", "sql", "columns", "row_count", "seconds")}
        out["columns"] = (out["columns"] or [])[:50]
    total = shown.get("row_count", len(shown.get("rows") or []))
    if len(out.get("rows") or []) < total:
        out["rows_kept"] = len(out.get("rows") or [])
    return out


def as_record(record: dict[str, Any]) -> dict[str, Any]:
    """A turn's history record as kept: texts and lists cut, and at most ``MAX_TURN_BYTES``."""
    out = _cut(record)
    if size(out) > MAX_TURN_BYTES:
        out = {k: out.get(k) for k in ("text", "resolved_question", "intent", "status", "sql", "answer")}
    return out


@dataclass
class Thread:
    history: list[dict] = field(default_factory=list)     # conversation.turn_record of each turn
    shown: list[dict] = field(default_factory=list)       # each turn's answer JSON as the page drew it
    sizes: list[int] = field(default_factory=list)        # each turn's bytes (history and shown)
    touched: float = 0.0


class MemoryThreads:
    def __init__(self, max_threads: int = MAX_THREADS, max_turns: int = MAX_TURNS, max_age_s: float = MAX_AGE_S,
                 clock=time.monotonic, max_user_threads: int = MAX_USER_THREADS,
                 max_thread_bytes: int = MAX_THREAD_BYTES):
        self.max_threads, self.max_turns, self.max_age_s, self.clock = max_threads, max_turns, max_age_s, clock
        self.max_user_threads, self.max_thread_bytes = max_user_threads, max_thread_bytes
        self._threads: OrderedDict[Key, Thread] = OrderedDict()
        self._lock = threading.Lock()

    def _live(self, key: Key) -> Thread | None:
        """The thread of ``key`` if it is there and not quiet too long; reading never makes one."""
        thread = self._threads.get(key)
        if thread is not None and self.clock() - thread.touched > self.max_age_s:
            del self._threads[key]
            return None
        return thread

    def _room(self, key: Key) -> None:
        """Room for a new thread of ``key``: the quiet ones go, then the asker's own least recently used one past
        ``max_user_threads``; ThreadsFull when the server holds ``max_threads`` still (nobody else's goes)."""
        now = self.clock()
        for k in [k for k, t in self._threads.items() if now - t.touched > self.max_age_s]:
            del self._threads[k]
        mine = [k for k in self._threads if k[0] == key[0]]          # least recently used first
        for k in mine[:max(0, len(mine) - self.max_user_threads + 1)]:
            del self._threads[k]
        if len(self._threads) >= self.max_threads:
            raise ThreadsFull(f"this server keeps {self.max_threads} threads, the most it may: the answer stands, "
                              "the turn was not kept in a thread")

    def history(self, key: Key, last: int | None = None) -> list[dict]:
        """The turns a follow-up is resolved against, the ``last`` ones or all (copies: a running turn never sees
        another change them)."""
        with self._lock:
            thread = self._live(key)
            turns = thread.history if thread else []
            return [dict(t) for t in (turns[-last:] if last else turns)]

    def shown(self, key: Key) -> list[dict]:
        with self._lock:
            thread = self._live(key)
            return list(thread.shown) if thread else []

    def add(self, key: Key, record: dict, shown: dict[str, Any]) -> None:
        record, shown = as_record(record), as_shown(shown)
        with self._lock:
            thread = self._live(key)
            if thread is None:
                self._room(key)
                thread = self._threads[key] = Thread()
            thread.touched = self.clock()
            self._threads.move_to_end(key)
            thread.history.append(record)
            thread.shown.append(shown)
            thread.sizes.append(size(record) + size(shown))
            keep = total = 0                    # the newest turns within max_turns and max_thread_bytes
            for n in reversed(thread.sizes):
                if keep >= self.max_turns or (keep and total + n > self.max_thread_bytes):
                    break
                keep, total = keep + 1, total + n
            for part in (thread.history, thread.shown, thread.sizes):
                del part[:-keep]

    def clear(self, key: Key) -> None:
        with self._lock:
            self._threads.pop(key, None)


class PgThreads:
    """Threads in the shared state: ``duckask.threads`` holds one row per database, asker and session (when it was
    last added to, wall-clock: servers share it, not a monotonic clock) and ``duckask.thread_turns`` one row per
    turn (its history record, shown JSON and bytes), deleted with its thread. A turn costs one small insert and a
    follow-up reads only the turns it is resolved against, however long the thread (one JSON value per thread,
    read and rewritten whole on every turn, halved two servers' throughput in ``bench/scale_out.py``: 36.9
    requests a second against 68.7 and 75.4 in two runs of this, 2026-11-26). The bounds are the memory store's,
    applied on every append in the same transaction."""

    def __init__(self, state, db: str, max_threads: int = MAX_THREADS, max_turns: int = MAX_TURNS,
                 max_age_s: float = MAX_AGE_S, clock=time.time, max_user_threads: int = MAX_USER_THREADS,
                 max_thread_bytes: int = MAX_THREAD_BYTES):
        self.state, self.db = state, db
        self.max_threads, self.max_turns, self.max_age_s, self.clock = max_threads, max_turns, max_age_s, clock
        self.max_user_threads, self.max_thread_bytes = max_user_threads, max_thread_bytes

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
        record_text = json.dumps(as_record(record), default=str)
        shown_text = json.dumps(as_shown(shown), default=str)
        with self.state.transaction() as cur:
            cur.execute(f"SELECT pg_advisory_xact_lock({_THREADS_LOCK}, hashtext($1))", (self.db,))
            cur.execute("DELETE FROM duckask.threads WHERE db = $1 AND touched < $2", (self.db, now - self.max_age_s))
            cur.execute(f"SELECT 1 FROM duckask.threads WHERE {self._KEY} FOR UPDATE", (self.db, *key))
            if not cur.fetchall():                                          # a new thread: room for it
                self._room(cur, key)
                cur.execute("INSERT INTO duckask.threads (db, asker, session, touched) VALUES ($1, $2, $3, $4)",
                            (self.db, *key, now))
            cur.execute("INSERT INTO duckask.thread_turns (db, asker, session, history, shown, bytes) VALUES ($1, $2, "
                        "$3, $4, $5, $6)", (self.db, *key, record_text, shown_text, len(record_text) + len(shown_text)))
            cur.execute(f"DELETE FROM duckask.thread_turns WHERE id IN (SELECT id FROM (SELECT id, row_number() OVER w "
                        f"AS n, sum(bytes) OVER w AS total FROM duckask.thread_turns WHERE {self._KEY} WINDOW w AS "
                        f"(ORDER BY id DESC)) x WHERE n > $4 OR (n > 1 AND total > $5))",
                        (self.db, *key, self.max_turns, self.max_thread_bytes))
            cur.execute(f"UPDATE duckask.threads SET touched = $4 WHERE {self._KEY}", (self.db, *key, now))

    def _room(self, cur, key: Key) -> None:
        """The asker's own least recently used threads past ``max_user_threads`` go; ThreadsFull when the database
        still has ``max_threads`` (no one else's thread goes)."""
        cur.execute("DELETE FROM duckask.threads WHERE (db, asker, session) IN (SELECT db, asker, session FROM "
                    "duckask.threads WHERE db = $1 AND asker = $2 ORDER BY touched DESC OFFSET $3)",
                    (self.db, key[0], self.max_user_threads - 1))
        cur.execute("SELECT count(*) FROM duckask.threads WHERE db = $1", (self.db,))
        if int(cur.fetchone()[0]) >= self.max_threads:
            raise ThreadsFull(f"the shared state keeps {self.max_threads} threads for this database, the most it "
                              "may: the answer stands, the turn was not kept in a thread")

    def clear(self, key: Key) -> None:
        with self.state.transaction() as cur:
            cur.execute(f"DELETE FROM duckask.threads WHERE {self._KEY}", (self.db, *key))


_THREADS_LOCK = 7_240_514      # pg_advisory_xact_lock's first key: a database's threads counted for room
