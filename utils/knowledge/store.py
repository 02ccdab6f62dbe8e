"""The knowledge store: example pairs a user taught duckask, per database, in a DuckDB file of its own.

The file is ``<cache>/knowledge.duckdb`` (setting ``knowledge_file``), never the user's database,
which duckask only ever opens read-only. Every pair is keyed to its database by the database's
resolved path and its identity (``owner_identity``: the path with the file's device and inode), so pairs for one
database never reach another, not even a file put later at the same path. Teaching the same question again
replaces its SQL. The file is opened for each operation and closed at once, so several duckask
processes can share it. A damaged file (not a DuckDB file DuckDB can read) is set aside as
``knowledge.duckdb.corrupt-<time>``, never deleted, and a new, empty store is used, with a warning naming
both paths (``utils/damaged.py``).

``duckask examples --db PATH`` lists the pairs taught for a database (through ``shared.knowledge_store``, which
picks this store or the shared one; this module knows nothing above it).
"""
from __future__ import annotations

import builtins
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import duckdb

from duckask.utils.damaged import is_damaged, open_own, set_aside
from duckask.utils.knowledge.examples import Example, ExampleError

T = TypeVar("T")

SCHEMA = """
CREATE SEQUENCE IF NOT EXISTS example_id START 1;
CREATE TABLE IF NOT EXISTS examples (
    id INTEGER PRIMARY KEY DEFAULT nextval('example_id'),
    db VARCHAR NOT NULL,            -- the database's resolved path
    question VARCHAR NOT NULL,
    sql VARCHAR NOT NULL,
    tables VARCHAR[],
    created TIMESTAMP DEFAULT current_timestamp
);
-- the database's identity beside its path (``owner_identity``): another file put at the same path is another
-- database, whose questions these pairs do not answer ('' for a pair kept before issue 52: its path alone)
ALTER TABLE examples ADD COLUMN IF NOT EXISTS db_id VARCHAR DEFAULT '';
"""


def database_identity(source: str | os.PathLike) -> str:
    """What pairs are keyed by: ``audit.database_key`` (a file's resolved path; a connection string redacted, the
    same on every server that shares a state)."""
    from duckask.utils.writes.audit import database_key

    return database_key(source)


def owner_identity(database) -> str:
    """The identity pairs and suggestions are bound to beside their key, as cards and threads are: a local file's
    (or folder's) resolved path with its device and inode (``database.file_identity``), so another database put at
    the same path is another database; a connection string, as redacted."""
    from duckask.utils.db.database import file_identity
    from duckask.utils.writes.audit import database_key

    source = Path(str(database.source)).expanduser()
    try:
        return file_identity(source) if source.exists() else database_key(database.source)
    except OSError:
        return database_key(database.source)


class KnowledgeStore:
    def __init__(self, path: str | os.PathLike):
        self.path = Path(path).expanduser()

    def _connect(self) -> duckdb.DuckDBPyConnection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = open_own(self.path)
        con.execute(SCHEMA)
        return con

    def _recovering(self, operation: Callable[[], T], after_set_aside: Callable[[], T]) -> T:
        """``operation``; when it finds the file damaged, the file is set aside (a warning names both paths) and
        ``after_set_aside`` gives the result on the new, empty store."""
        try:
            return operation()
        except duckdb.Error as e:
            if not is_damaged(e):
                raise
            try:
                set_aside(self.path, "the knowledge store", e, "a new, empty store is used (the taught pairs are in "
                                                               "the moved file)")
            except OSError as moved:
                raise ExampleError(f"the knowledge store {self.path} is damaged ({e}) and could not be moved aside "
                                   f"({moved}); move it away to start a new one") from e
            return after_set_aside()

    def add(self, db: str, example: Example, db_id: str = "") -> int:
        """Store a verified pair for ``db`` (a ``database_identity``) and ``db_id`` (``owner_identity``); returns its
        id. A pair of the same question (any case) on that database is replaced."""
        return self._recovering(lambda: self._add(db, example, db_id), lambda: self._add(db, example, db_id))

    def _add(self, db: str, example: Example, db_id: str) -> int:
        con = self._connect()
        try:
            con.execute("BEGIN")
            old = con.execute("SELECT id FROM examples WHERE db = ? AND lower(question) = lower(?)",
                              [db, example.question]).fetchone()
            if old:
                con.execute("UPDATE examples SET sql = ?, tables = ?, db_id = ?, created = current_timestamp "
                            "WHERE id = ?", [example.sql, example.tables, db_id, old[0]])
                new_id = old[0]
            else:
                row = con.execute("INSERT INTO examples (db, question, sql, tables, db_id) VALUES (?, ?, ?, ?, ?) "
                                  "RETURNING id", [db, example.question, example.sql, example.tables, db_id]).fetchone()
                assert row is not None              # one row inserted, its id returned
                new_id = row[0]
            con.execute("COMMIT")
            return int(new_id)
        finally:
            con.close()

    def list(self, db: str, db_id: str | None = None) -> list[Example]:
        """The pairs of ``db``; with ``db_id``, only those kept for that identity (and those kept before pairs had
        one)."""
        if not self.path.exists():
            return []
        return self._recovering(lambda: self._list(db, db_id), lambda: [])

    def _list(self, db: str, db_id: str | None) -> builtins.list[Example]:     # list: the method above
        # Read-only, so that any number of duckask processes can read while none writes.
        con = open_own(self.path, read_only=True)
        try:
            names = {r[0] for r in con.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = "
                                               "'examples'").fetchall()}
            mine = " AND coalesce(db_id, '') IN ('', ?)" if db_id is not None and "db_id" in names else ""
            rows = con.execute(f"SELECT id, question, sql, tables FROM examples WHERE db = ?{mine} ORDER BY id",
                               [db, db_id] if mine else [db]).fetchall()
        except duckdb.CatalogException:      # a file that was never written to
            rows = []
        finally:
            con.close()
        return [Example(question=q, sql=s, id=str(i), tables=list(t or [])) for i, q, s, t in rows]

    def remove(self, db: str, example_id: int) -> bool:
        """Delete one pair of ``db``; False when ``db`` has no pair with that id."""
        if not self.path.exists():
            return False
        return self._recovering(lambda: self._remove(db, example_id), lambda: False)

    def _remove(self, db: str, example_id: int) -> bool:
        con = self._connect()
        try:
            hit = con.execute("DELETE FROM examples WHERE db = ? AND id = ? RETURNING id", [db, example_id]).fetchall()
        finally:
            con.close()
        return bool(hit)
