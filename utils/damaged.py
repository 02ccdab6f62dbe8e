"""Damaged files of duckask's own (the knowledge store, prompt states, the audit log), set aside, never deleted.
A damaged file is told apart from one that is only busy or unreadable.

A rebuildable file (the knowledge store, a prompt state) that turns out damaged is renamed to
``<file>.corrupt-<UTC time>`` and a new, empty one is started, with a warning on stderr naming both paths:
nothing is lost, and the next command works. The audit log is never set aside or replaced (it is the record
of past writes): ``audit.AuditLog`` refuses to write to a damaged log instead.
"""
from __future__ import annotations

import datetime as dt
import os
import sys
from pathlib import Path

import duckdb
from tenacity import retry, retry_if_exception, stop_after_delay, wait_random

#: What DuckDB says when a file's bytes are not a database it can read (not a lock held by another process,
#: a permission or a file from a newer DuckDB: those are not damage, and such a file is left as it is).
DAMAGE_MESSAGES = ("not a valid DuckDB database file", "Corrupt database file", "Could not read enough bytes")


def is_damaged(error: BaseException) -> bool:
    """Whether a DuckDB error from opening or reading a file says that the file itself is damaged."""
    return isinstance(error, duckdb.Error) and any(m in str(error) for m in DAMAGE_MESSAGES)


def aside_path(path: Path) -> Path:
    """``<path>.corrupt-<UTC time>``, with a counter when that name is taken."""
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    target, n = path.with_name(f"{path.name}.corrupt-{stamp}"), 1
    while target.exists() or target.with_name(target.name + ".wal").exists():
        n += 1
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
    return target


def set_aside(path: str | os.PathLike, what: str, why: object, after: str = "a new, empty one is used") -> Path | None:
    """Rename the damaged ``path`` (and a DuckDB ``.wal`` beside it) out of the way and warn on stderr, naming
    ``what`` it is, both paths and ``why``; returns where it went (None when another process moved it first)."""
    path = Path(path)
    target = aside_path(path)
    try:
        os.rename(path, target)
    except FileNotFoundError:
        return None
    wal = path.with_name(path.name + ".wal")
    if wal.exists():
        os.rename(wal, target.with_name(target.name + ".wal"))
    print(f"duckask: warning: {what} {path} is damaged ({str(why).splitlines()[0]}); it was moved to {target} "
          f"(nothing in it was deleted) and {after}", file=sys.stderr, flush=True)
    return target


def _opened_otherwise(error: BaseException) -> bool:
    """DuckDB's refusal to open a file this process has open with another configuration (one thread reading it
    read-only while another writes): it passes when the other connection closes."""
    return isinstance(error, duckdb.Error) and "different configuration" in str(error)


@retry(retry=retry_if_exception(_opened_otherwise), stop=stop_after_delay(10), wait=wait_random(0.01, 0.1),
       reraise=True)
def open_own(path: str | os.PathLike, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """A connection to one of duckask's own files (the knowledge store, the audit log), waiting while another thread
    of this process has it open the other way (concurrent requests on one server: a read beside a write)."""
    return duckdb.connect(str(path), read_only=read_only)
