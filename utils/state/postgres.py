"""The shared state in Postgres (``--state postgresql://...``): taught pairs, the audit log and pending writes in
one database that several duckask servers use at once, through Apache Arrow's ADBC driver.

Tables in the schema ``duckask``: ``examples`` (unique per database and question, case folded), ``writes``
(the audit log, the same columns as the local file's, plus ``origin`` for an entry migrated from a file) and
``pending`` (a card waiting for its decision, the sha256 of its approval token, when it was held), ``threads``
and ``thread_turns`` (the page's threads, ``state.threads.PgThreads``). Every
operation is one transaction. Deciding is taking: ``DELETE ... RETURNING`` removes a pending card for exactly one
server, and the audit's decision is written only where it is still ``pending``, so a second approval of the same
write, through any server, is refused and never runs. Room for a new card is counted under a transaction-level
advisory lock, so two servers cannot both take the last place.

The connection string's password is never shown: messages carry ``remote.redact(url)``.
"""
from __future__ import annotations

import atexit
import contextlib
import json
import threading
import weakref
from collections.abc import Iterator
from typing import Any

from duckask.utils.db.quoting import quote_ident as _q
from duckask.utils.db.remote import redact, redact_error
from duckask.utils.writes.audit import COLUMNS, DECIDED, AuditError, already_decided

SCHEMA = [
    "CREATE SCHEMA IF NOT EXISTS duckask",
    """CREATE TABLE IF NOT EXISTS duckask.examples (
        id BIGSERIAL PRIMARY KEY, db TEXT NOT NULL, question TEXT NOT NULL, question_key TEXT NOT NULL,
        sql TEXT NOT NULL, tables TEXT NOT NULL DEFAULT '[]', created TIMESTAMPTZ NOT NULL DEFAULT now(),
        UNIQUE (db, question_key))""",
    """CREATE TABLE IF NOT EXISTS duckask.writes (
        id BIGSERIAL PRIMARY KEY, proposed_at TIMESTAMPTZ NOT NULL, decided_at TIMESTAMPTZ, finished_at TIMESTAMPTZ,
        session TEXT, "user" TEXT, db TEXT, tier INTEGER, kind TEXT, sql TEXT, explanation TEXT,
        estimated_rows BIGINT, actual_rows BIGINT, decision TEXT NOT NULL, outcome TEXT, detail TEXT, request TEXT,
        proposed_by TEXT, decided_by TEXT, origin TEXT UNIQUE)""",
    """CREATE TABLE IF NOT EXISTS duckask.pending (
        id BIGINT PRIMARY KEY REFERENCES duckask.writes (id), proposer TEXT NOT NULL, db TEXT, card TEXT NOT NULL,
        token_sha256 TEXT NOT NULL, since DOUBLE PRECISION NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS duckask.threads (
        db TEXT NOT NULL, asker TEXT NOT NULL, session TEXT NOT NULL, touched DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (db, asker, session))""",
    """CREATE TABLE IF NOT EXISTS duckask.thread_turns (
        id BIGSERIAL PRIMARY KEY, db TEXT NOT NULL, asker TEXT NOT NULL, session TEXT NOT NULL, history TEXT NOT NULL,
        shown TEXT NOT NULL, FOREIGN KEY (db, asker, session) REFERENCES duckask.threads ON DELETE CASCADE)""",
    "CREATE INDEX IF NOT EXISTS thread_turns_by_thread ON duckask.thread_turns (db, asker, session, id)",
    "ALTER TABLE duckask.thread_turns ADD COLUMN IF NOT EXISTS bytes INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE duckask.writes ADD COLUMN IF NOT EXISTS runs TEXT",
    "ALTER TABLE duckask.writes ADD COLUMN IF NOT EXISTS user_id TEXT",
    "ALTER TABLE duckask.writes ADD COLUMN IF NOT EXISTS db_id TEXT",
    "ALTER TABLE duckask.examples ADD COLUMN IF NOT EXISTS db_id TEXT NOT NULL DEFAULT ''",
]
_LOCK_ID = 7_240_513          # pg_advisory_xact_lock key: the schema's creation, a card's room check


_ALL: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for state in list(_ALL):
        state.close()


class StateError(RuntimeError):
    """The shared state could not be reached or read; the message names it (password hidden) and why, for the
    deployer (the server's log, the CLI). ``PUBLIC`` is what a request is told: which setting, nothing of it."""

    PUBLIC = ("the shared state cannot be reached (the server's state setting: --state or DUCKASK_STATE); "
              "the server's log says why")


class PgState:
    """One Postgres database as duckask's shared state: a small pool of connections (a connection costs ~80 ms
    to open, with SCRAM authentication; an operation ~1 ms), each operation a transaction on one of them."""

    POOL = 8          # idle connections kept

    def __init__(self, url: str):
        self.url, self.shown = url, redact(url)
        self._idle: list = []
        self._lock = threading.Lock()
        self._ready = False
        self._init_lock = threading.Lock()
        _ALL.add(self)

    def close(self) -> None:
        """Close the idle connections (at exit: an ADBC connection left to the interpreter's teardown complains)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            _close(conn)

    def _why(self, e: BaseException) -> str:
        """The driver's message, first line, with nothing of the URL's secrets (``remote.redact_error``)."""
        return redact_error(_first_line(e), self.url)

    def _connect(self):
        try:
            import adbc_driver_postgresql.dbapi as pg
        except ImportError:
            raise StateError(f"the shared state {self.shown} needs the ADBC driver: pip install "
                             "'duckask[postgres]'") from None
        try:
            return pg.connect("postgresql://" + self.url.split("://", 1)[1])
        except Exception as e:
            raise StateError(f"cannot reach the shared state {self.shown}: {self._why(e)}") from None

    def _take(self):
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return self._connect()

    def _give_back(self, conn) -> None:
        with self._lock:
            if len(self._idle) < self.POOL:
                self._idle.append(conn)
                return
        _close(conn)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Any]:
        """A cursor in one transaction: committed at the end, rolled back on any error (StateError when the server
        cannot be reached; a broken connection is closed, so the next operation connects again)."""
        self._ensure_schema()
        conn = self._take()
        cur = conn.cursor()
        broken = False
        try:
            yield cur
            conn.commit()
        except BaseException as e:
            with contextlib.suppress(Exception):
                conn.rollback()
            broken = _is_connection_error(e)
            if broken:
                raise StateError(f"lost the shared state {self.shown}: {self._why(e)}") from None
            raise
        finally:
            _close(cur)
            if broken:
                _close(conn)
            else:
                self._give_back(conn)

    def _ensure_schema(self) -> None:
        if self._ready:
            return
        with self._init_lock:
            if self._ready:
                return
            conn = self._connect()
            try:
                cur = conn.cursor()
                cur.execute(f"SELECT pg_advisory_xact_lock({_LOCK_ID})")   # two servers starting at once
                for ddl in SCHEMA:
                    cur.execute(ddl)
                conn.commit()
                cur.close()
            except Exception as e:
                _close(conn)
                raise StateError(f"cannot set up the shared state {self.shown}: {self._why(e)}") from None
            self._give_back(conn)
            self._ready = True


def _close(conn) -> None:
    with contextlib.suppress(Exception):
        conn.close()


def _first_line(e: BaseException) -> str:
    return " ".join(str(e).split())[:300]


def _is_connection_error(e: BaseException) -> bool:
    try:
        from adbc_driver_manager import OperationalError
    except ImportError:
        return False
    return isinstance(e, OperationalError)


def put_example(cur, db: str, question: str, sql: str, tables, renew: bool = False, db_id: str = "") -> int:
    """Insert a taught pair, or replace the one for the same database and question (``renew``: dated now)."""
    cur.execute("INSERT INTO duckask.examples (db, question, question_key, sql, tables, db_id) "
                "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (db, question_key) DO UPDATE SET "
                "question = excluded.question, sql = excluded.sql, tables = excluded.tables, db_id = excluded.db_id"
                + (", created = now()" if renew else "") + " RETURNING id",
                (db, question, question.lower(), sql, json.dumps(list(tables or [])), db_id))
    return int(cur.fetchone()[0])


def put_entry(cur, fields: dict[str, Any]) -> int | None:
    """Insert an audit entry; its id, or None when one with the same ``origin`` is there (a migration re-run)."""
    cols = list(fields)
    cur.execute(f"INSERT INTO duckask.writes ({', '.join(_q(c) for c in cols)}) VALUES "
                f"({', '.join(f'${i + 1}' for i in range(len(cols)))})"
                + (" ON CONFLICT (origin) DO NOTHING" if "origin" in fields else "") + " RETURNING id",
                [fields[c] for c in cols])
    row = cur.fetchone()
    return int(row[0]) if row else None


class PgAudit:
    """``audit.AuditLog``'s operations on the shared state; a decision is written only over ``pending``."""

    def __init__(self, state: PgState):
        self.state, self.path = state, state.shown

    def record(self, **fields: Any) -> int | None:
        """A new entry's id (None only for an ``origin`` already there: ``put_entry``)."""
        from duckask.utils.writes.audit import AuditLog, _now

        fields.setdefault("proposed_at", _now())
        AuditLog._check({k: v for k, v in fields.items() if k != "origin"})
        with self._errors(writing=True), self.state.transaction() as cur:
            return put_entry(cur, fields)

    def update(self, entry_id: int, **fields: Any) -> None:
        from duckask.utils.writes.audit import AuditLog

        AuditLog._check(fields)
        sets = ", ".join(f"{_q(c)} = ${i + 1}" for i, c in enumerate(fields))
        only_pending = fields.get("decision") in DECIDED
        where = f"id = ${len(fields) + 1}" + (" AND decision = 'pending'" if only_pending else "")
        with self._errors(writing=True), self.state.transaction() as cur:
            cur.execute(f"UPDATE duckask.writes SET {sets} WHERE {where} RETURNING id", [*fields.values(), entry_id])
            if not cur.fetchall() and only_pending:
                raise already_decided(entry_id, f"the shared audit log {self.path}")

    def entries(self, db: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        where, params = ("WHERE db = $1", [db]) if db else ("", [])
        with self._errors(writing=False), self.state.transaction() as cur:
            cur.execute(f"SELECT {', '.join(_q(c) for c in COLUMNS)} FROM duckask.writes {where} ORDER BY id DESC"
                        + (f" LIMIT {int(limit)}" if limit else ""), params)
            rows = cur.fetchall()
        return [dict(zip(COLUMNS, r)) for r in rows]

    @contextlib.contextmanager
    def _errors(self, writing: bool):
        try:
            yield
        except StateError as e:
            raise AuditError(f"{e}; " + ("nothing was changed" if writing else "the log cannot be read"),
                             public=StateError.PUBLIC) from None
