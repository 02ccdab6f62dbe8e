"""The audit log: every write attempt, approved, rejected or blocked, in a DuckDB file of its own; and every
question/SQL pair kept or suggested (``kind: example``, ``knowledge.keep``), a write to duckask's knowledge.

The file is ``<cache>/audit.duckdb`` (setting ``audit_file``), never the user's database. One row per
attempt, written in steps so that the log never claims more than happened:

1. when the statement is proposed: ``decision`` pending (or blocked, with the reason, and outcome
   ``not_run``: a blocked statement never gets further);
2. when the user decides: rejected (outcome ``not_run``) or approved, **before** the data write;
3. after the data write: ``outcome`` committed, rolled_back or error, with the actual row count.

A process that dies between 2 and 3 leaves an approved row with no outcome, which ``duckask audit``
shows as "started, no outcome". The file is opened per operation and closed at once, so several
duckask processes share it; an operation that finds it locked by another retries for a few seconds.
A damaged log (``utils/damaged.py``) is never replaced or set aside, as it is the record of past writes:
writing it (so every write) and reading it are refused with an ``AuditError`` naming the file, and the file is
left as it is; questions and read-only SQL do not touch the log and still work.

Entries are keyed by ``database_key``: a file's resolved path, or a connection string redacted, the same
when written and when read (``duckask audit --db``). ``render`` escapes control and bidi characters, so that
a statement or request in the log cannot drive the terminal that shows it.
"""
from __future__ import annotations

import datetime as dt
import getpass
import json
import os
import re
import threading
from pathlib import Path
from typing import Any

import duckdb
from tenacity import retry, retry_if_exception, stop_after_delay, wait_random

from duckask.utils.damaged import is_damaged, open_own

SCHEMA = """
CREATE SEQUENCE IF NOT EXISTS write_id START 1;
CREATE TABLE IF NOT EXISTS writes (
    id BIGINT PRIMARY KEY DEFAULT nextval('write_id'),
    proposed_at TIMESTAMPTZ NOT NULL,
    decided_at TIMESTAMPTZ,
    finished_at TIMESTAMPTZ,
    session VARCHAR,
    "user" VARCHAR,
    db VARCHAR,
    tier INTEGER,
    kind VARCHAR,
    sql VARCHAR,
    explanation VARCHAR,
    estimated_rows BIGINT,
    actual_rows BIGINT,
    decision VARCHAR NOT NULL,      -- pending | approved | rejected | blocked | expired (closed, no one decided)
    outcome VARCHAR,                -- NULL (not finished) | not_run | committed | rolled_back | error
    detail VARCHAR                  -- why it was blocked, rolled back or failed
);
-- later columns (a log written by an earlier duckask gains them at its next write)
ALTER TABLE writes ADD COLUMN IF NOT EXISTS request VARCHAR;       -- the plain-English request the model proposed from
ALTER TABLE writes ADD COLUMN IF NOT EXISTS proposed_by VARCHAR;   -- user (typed SQL) | model (from a request)
ALTER TABLE writes ADD COLUMN IF NOT EXISTS decided_by VARCHAR;    -- who approved or rejected it
ALTER TABLE writes ADD COLUMN IF NOT EXISTS runs VARCHAR;          -- every write it runs, as bound ("INSERT on teams")
ALTER TABLE writes ADD COLUMN IF NOT EXISTS user_id VARCHAR;       -- the proposer's identity (a key's, or a name's)
ALTER TABLE writes ADD COLUMN IF NOT EXISTS db_id VARCHAR;         -- the database file's identity (not its path)
"""
COLUMNS = ("id", "proposed_at", "decided_at", "finished_at", "session", "user", "db", "tier", "kind", "sql",
           "explanation", "estimated_rows", "actual_rows", "decision", "outcome", "detail", "request", "proposed_by",
           "decided_by", "runs", "user_id", "db_id")
_WRITABLE = set(COLUMNS) - {"id"}
#: The decisions that close an entry: each is written only over ``pending`` (a write is decided once).
DECIDED = ("approved", "rejected", "expired")


def os_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):      # no name for this uid (a container)
        return f"uid:{os.getuid()}" if hasattr(os, "getuid") else "unknown"


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


class AuditError(RuntimeError):
    """The audit log could not be written; no write runs without its record. The message names the file and why,
    for the deployer (the CLI, the server's log); ``public`` is what a request is told (no path, no driver's text),
    with ``status`` (503: the log is damaged or out of reach; 409: the entry was decided already)."""

    PUBLIC = ("the audit log cannot be written or read, so nothing that needs a record runs; the server's log says "
              "why")

    def __init__(self, message: str, public: str | None = None, status: int = 503):
        super().__init__(message)
        self.public, self.status = public or self.PUBLIC, status


def already_decided(entry_id: int, where: str) -> AuditError:
    """The AuditError for a decision over an entry that is no longer pending (``where``: which log)."""
    said = f"write #{entry_id} was already decided: a write is decided once; nothing ran again"
    return AuditError(f"{said} ({where} says so)", public=said, status=409)


def _busy(error: BaseException) -> bool:
    """Locked by another process (worth a retry), not damaged."""
    return isinstance(error, duckdb.IOException) and not is_damaged(error)


def damaged_log(path: Path, error: Exception, writing: bool) -> AuditError:
    """The AuditError for a damaged log (``is_damaged(error)``): what is wrong, that it is left as it is, what to do."""
    refused = " no write runs while it is;" if writing else ""
    return AuditError(f"cannot {'write' if writing else 'read'} the audit log {path}: it is damaged "
                      f"({str(error).splitlines()[0]});{refused} duckask leaves it as it is and never replaces it (it "
                      "is the record of past writes): move it aside, or restore it from a backup, to start a new log")


_WRITERS: dict[str, threading.Lock] = {}
_WRITERS_LOCK = threading.Lock()


def _writer(path: Path) -> threading.Lock:
    """The lock that lets one thread of this process write the log at ``path`` at a time (another process is
    kept out by DuckDB's file lock, which ``_locked`` waits for)."""
    with _WRITERS_LOCK:
        return _WRITERS.setdefault(str(path.resolve()), threading.Lock())


_locked = retry(retry=retry_if_exception(_busy), stop=stop_after_delay(5), wait=wait_random(0.05, 0.25),
                reraise=True)


class AuditLog:
    def __init__(self, path: str | os.PathLike):
        self.path = Path(path).expanduser()

    @_locked
    def _write(self, sql: str, params: list[Any]) -> Any:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with _writer(self.path):    # one writer per file in this process: concurrent DDL or UPDATEs would conflict
            con = open_own(self.path)
            try:
                con.execute(SCHEMA)
                row = con.execute(sql, params).fetchone()
                con.execute("CHECKPOINT")    # on disk now, not only in the WAL
                return row
            finally:
                con.close()

    def record(self, **fields: Any) -> int:
        """A new attempt; returns its id. ``fields``: any of ``COLUMNS`` but id (``decision`` needed)."""
        fields.setdefault("proposed_at", _now())
        self._check(fields)
        cols = list(fields)
        try:
            row = self._write(f"INSERT INTO writes ({', '.join(_q(c) for c in cols)}) VALUES "
                              f"({', '.join('?' for _ in cols)}) RETURNING id", [fields[c] for c in cols])
        except (duckdb.Error, OSError) as e:
            if is_damaged(e):
                raise damaged_log(self.path, e, writing=True) from e
            raise AuditError(f"cannot write the audit log {self.path}: {e}; nothing was changed") from e
        return int(row[0])

    def update(self, entry_id: int, **fields: Any) -> None:
        """Change entry ``entry_id``; a decision (approved, rejected, expired) only over ``pending``: an AuditError
        when another process decided it first, so a write is decided once."""
        self._check(fields)
        only_pending = fields.get("decision") in DECIDED
        try:
            row = self._write(f"UPDATE writes SET {', '.join(f'{_q(c)} = ?' for c in fields)} WHERE id = ?"
                              + (" AND decision = 'pending'" if only_pending else "") + " RETURNING id",
                              [*fields.values(), entry_id])
        except (duckdb.Error, OSError) as e:
            if is_damaged(e):
                raise damaged_log(self.path, e, writing=True) from e
            raise AuditError(f"cannot write the audit log {self.path}: {e}") from e
        if row is None and only_pending:
            raise already_decided(entry_id, f"the audit log {self.path}")

    @staticmethod
    def _check(fields: dict[str, Any]) -> None:
        unknown = set(fields) - _WRITABLE
        if unknown:
            raise ValueError(f"unknown audit field(s): {', '.join(sorted(unknown))}")

    def entries(self, db: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        """The attempts, newest first (only ``db``'s when given); AuditError when the log is damaged."""
        try:
            return self._entries(db, limit)
        except duckdb.Error as e:
            if not is_damaged(e):
                raise
            raise damaged_log(self.path, e, writing=False) from e

    @_locked
    def _entries(self, db: str | None, limit: int | None) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        con = open_own(self.path, read_only=True)
        try:
            where, params = ("WHERE db = ?", [db]) if db else ("", [])
            res = con.execute(f"SELECT * FROM writes {where} ORDER BY id DESC"
                              + (f" LIMIT {int(limit)}" if limit else ""), params)
            names, rows = [d[0] for d in res.description], res.fetchall()
        except duckdb.CatalogException:
            names, rows = [], []
        finally:
            con.close()
        # an older log lacks the later columns until its next write: they read as None
        return [{c: dict(zip(names, r)).get(c) for c in COLUMNS} for r in rows]


def _q(column: str) -> str:
    return f'"{column}"'


def database_key(source: str | os.PathLike) -> str:
    """What entries are keyed by, the same when written (``writes.propose``) and when read (``audit --db``): a
    file's or folder's resolved path; a connection string (postgres://, mysql://, md:) as ``remote.redact``
    shows it (never its password, and never taken for a path under the working directory)."""
    from duckask.utils.db import remote

    if remote.kind_of(str(source)):
        return remote.redact(str(source).strip())
    return str(Path(source).expanduser().resolve())


#: C0 and C1 control characters (tab and newline too: each stored value shows on its own line) and Unicode's
#: bidi controls: embeddings and overrides U+202A-U+202E, isolates U+2066-U+2069, marks U+200E, U+200F, U+061C.
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")


def printable(text: object) -> str:
    """``text`` safe for a terminal: every control and bidi character escaped (``\\x1b``, ``\\u202e``)."""
    def escape(m: re.Match) -> str:
        c = ord(m.group())
        return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"

    return _UNSAFE.sub(escape, str(text))


def status_of(entry: dict[str, Any]) -> str:
    """One word or phrase for an entry's state; an approved write with no outcome is "started, no outcome"."""
    if entry["decision"] == "approved" and entry["outcome"] is None:
        return "started, no outcome"
    return entry["decision"] if entry["outcome"] in (None, "not_run") else entry["outcome"]


def render(entries: list[dict[str, Any]]) -> str:
    """The entries as text for a terminal: each stored text through ``printable``, the SQL on one line."""
    if not entries:
        return "no write attempts recorded"
    entries = [_printable_entry(e) for e in entries]
    lines = []
    for e in entries:
        when = e["proposed_at"].strftime("%Y-%m-%d %H:%M:%S") if e["proposed_at"] else "?"
        rows = f"est {e['estimated_rows']}" if e["estimated_rows"] is not None else "est -"
        if e["actual_rows"] is not None:
            rows += f", actual {e['actual_rows']}"
        if e["kind"] == "example":          # a kept (or suggested) question/SQL pair: a write to the knowledge
            state = {"approved": "kept", "pending": "suggested"}.get(e["decision"], e["decision"])
            lines.append(f"#{e['id']} {when} pair {state:<20} {'':<22} {e['user']} ({e['session']})")
            lines.append(f"    question: \"{e['request']}\"")
        else:
            lines.append(f"#{e['id']} {when} T{e['tier']} {status_of(e):<20} {rows:<22} {e['user']} ({e['session']})")
        if e.get("request") and e["kind"] != "example":
            lines.append(f"    asked: \"{e['request']}\" (proposed by the model)")
        lines.append(f"    {e['sql']}")
        if e.get("runs") and e["kind"] != "example":
            lines.append(f"    runs: {e['runs']}")
        if e.get("decided_by") and e["decided_by"] != e["user"]:
            lines.append(f"    {e['decision']} by {e['decided_by']}")
        if e["detail"]:
            lines.append(f"    {e['detail']}")
    return "\n".join(lines)


def _printable_entry(entry: dict[str, Any]) -> dict[str, Any]:
    shown = {k: printable(v) if isinstance(v, str) else v for k, v in entry.items()}
    shown["sql"] = printable(" ".join((entry["sql"] or "").split()))
    return shown


def as_json(entries: list[dict[str, Any]]) -> str:
    return json.dumps([{**e, "status": status_of(e)} for e in entries], default=str)
