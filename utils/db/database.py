"""DuckDB access: open a database locked down for untrusted SQL, and run one query safely.

``open_database(db)`` opens the DuckDB file ``sources.resolve_db_file`` finds for ``db`` (a DuckDB file;
an EXPORT DATABASE folder, a SQLite file or a remote database through a cached copy) ``read_only``,
one shared connection per file and process. A remote database asked live (``source_mode``) opens its catalog
file the same way, with a ``live.LiveEngine`` that ``Database.run`` hands each checked query to.

Every connection has ``enable_external_access=false`` (no read_csv/read_text/COPY/ATTACH of files),
a memory limit and ``lock_configuration=true`` (no SET/PRAGMA can undo it). ``Database.run`` adds the
statement allowlist (``duckask.utils.db.safety``), a wall-clock timeout that interrupts the query, a row cap
and a byte budget (``outcome.fetch_within``: ``result_bytes`` a result, ``cell_bytes`` a value).
"""
from __future__ import annotations

import atexit
import contextlib
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pandas as pd
from tenacity import retry, retry_if_exception, stop_after_delay, wait_random

from duckask.utils.config import Settings, load_settings
from duckask.utils.db import remote
from duckask.utils.db.binder import ConnectionScope, bind_error, catalog_of, user_table_names
from duckask.utils.db.lexing import one_reading
from duckask.utils.db.live import LiveEngine
from duckask.utils.db.models import ModelError, build_views, models_for, models_stamp
from duckask.utils.db.outcome import Budget, QueryOutcome, dedupe, fetch_within
from duckask.utils.db.quoting import quote_ident
from duckask.utils.db.reads import fold
from duckask.utils.db.safety import UnsafeSQLError, check_sql
from duckask.utils.db.sources import LIVE_PREFIX, DatabaseError, is_export_dir, resolve_db_file  # noqa: F401 (re-exported)

#: How long opening the file read-only waits while another process holds its write lock.
LOCK_WAIT_S = 10.0


class Database:
    """A read-only, locked-down DuckDB connection plus the safe query runner."""

    def __init__(self, file: Path, settings: Settings, source: str | None = None, engine: LiveEngine | None = None):
        self.file = file
        self.source = source or str(file)
        self.settings = settings
        self.engine = engine            # a live source: queries run there (``live``), the file is its catalog
        self._idle = threading.Condition()
        self._in_flight = 0
        self._reopening = False
        self._open()

    def _open(self) -> None:
        self.con = self._connect(self.settings)
        # The semantic directory's model files, as TEMP views of every cursor (never in the user's file).
        self.models, stamp = models_for(self.settings)
        try:
            self.model_rows = build_views(self.con, self.models)
        except ModelError as e:
            self.con.close()
            raise DatabaseError(f"a model of the semantic directory does not build: {e}") from e
        self.key = file_key(self.file) + stamp
        if self.engine is not None:
            self.engine.reload(self.file)
        self.identity = file_identity(self.file)
        self.user_tables = user_table_names(self.con)
        self.catalog = catalog_of(self.con)       # what the binder's scans of this file's tables are in
        self.user_types = frozenset(fold(f"{s}.{t}") for s, t in self.con.execute(     # an enum's labels are data
            "SELECT schema_name, type_name FROM duckdb_types() WHERE NOT internal AND database_name = "
            "current_database()").fetchall())

    def _connect(self, settings: Settings) -> duckdb.DuckDBPyConnection:
        config = {
            "enable_external_access": False,
            "memory_limit": settings.memory_limit,
            "lock_configuration": True,
        }
        try:
            return _connect_waiting(str(self.file), config)
        except duckdb.Error as e:
            raise DatabaseError(f"cannot open {self.file} as a DuckDB database: {str(e).splitlines()[0]}") from e

    @contextlib.contextmanager
    def cursor(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor of the caller's own (cursors are never shared between threads), counted so that
        ``reconfigure`` waits for it."""
        with self._idle:
            self._idle.wait_for(lambda: not self._reopening)
            self._in_flight += 1
            cur = self.con.cursor()
        try:
            for m in self.models:       # temp views belong to one connection: each cursor gets its own
                cur.execute(f"CREATE TEMP VIEW {quote_ident(m.name)} AS {m.sql}")
            yield cur
        finally:
            cur.close()
            with self._idle:
                self._in_flight -= 1
                self._idle.notify_all()

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """No query on this database while the block runs: waits for running ones, closes the read-only
        connection, and reopens it after with ``self.settings`` (re-reading the file's key and tables, which
        a write may have changed). New queries wait for the reopened connection."""
        with self._idle:
            self._reopening = True
            try:
                self._idle.wait_for(lambda: self._in_flight == 0)
                self.con.close()
                try:
                    yield
                finally:
                    self._open()
            finally:
                self._reopening = False
                self._idle.notify_all()

    def reconfigure(self, settings: Settings) -> None:
        """Reopen with ``settings``' connection-level options (the memory limit: DuckDB fixes them per
        open database, and the configuration is locked against SET), or after the file changed."""
        with self.exclusive():
            self.settings = settings

    @contextlib.contextmanager
    def scope(self) -> Iterator[ConnectionScope]:
        """One cursor to bind statements on (``binder.bind``), for as many checks as the caller makes."""
        with self.cursor() as cur:
            yield ConnectionScope(cur, self.catalog)

    @property
    def unscoped(self) -> Database:
        """The database as no allowlist limits it (itself; a ``ScopedDatabase`` answers with what it wraps)."""
        return self

    @property
    def live(self) -> bool:
        """Whether queries run in the source's engine (``source_mode: live``) rather than in this file."""
        return self.engine is not None

    def unreadable(self, bound, scope) -> str | None:
        """Why a bound statement scans a table its asker may not read: never, without an allowlist
        (``ScopedDatabase`` has one)."""
        return None

    #: Who the answers of this object are for, in caches that hold what a query returned (every reader: "").
    scope_key = ""

    def refusal(self, sql: str, scope: ConnectionScope | None = None) -> str | None:
        """Why ``sql`` would be refused here (not one read-only SELECT, or it reads files or the server's
        state: ``safety.check_sql``, names resolved by this database's binder, on ``scope`` or a cursor of its
        own), or None."""
        if scope is None:
            with self.scope() as scope:
                return self.refusal(sql, scope)
        try:
            check_sql(sql, scope)
        except UnsafeSQLError as e:
            return str(e)
        return None

    def run(self, sql: str, *, timeout_s: float | None = None, row_cap: int | None = None,
            readable: set[str] | None = None, result_bytes: int | None = None, asker: str = "") -> QueryOutcome:
        """Run one untrusted query; never raises for SQL problems, the outcome says what happened. ``readable``: on
        a live source, the tables (folded local names) the asker may read, checked again on the engine's tree
        (``ScopedDatabase`` passes its user's; None: every table); ``asker``: who asks, for the live source's sessions
        per user."""
        timeout_s = self.settings.timeout_s if timeout_s is None else timeout_s
        row_cap = self.settings.row_cap if row_cap is None else row_cap
        budget = Budget(row_cap, self.settings.result_bytes if result_bytes is None else result_bytes,
                        self.settings.cell_bytes)
        t0 = time.perf_counter()
        with self.cursor() as cur:
            try:
                if self.engine is not None:     # one reading: the checks read the text the engine is sent
                    sql = one_reading(sql)
                stmt = check_sql(sql, ConnectionScope(cur, self.catalog))     # bound on the cursor it runs on
            except UnsafeSQLError as e:
                return QueryOutcome(sql=sql, status="refused", error=str(e))
            if self.engine is not None:         # checked here, run there; not sent if the catalog cannot bind it
                return self.engine.run(stmt, {m.name: m.sql for m in self.models}, timeout_s=timeout_s,
                                       budget=budget, t0=t0, readable=readable, asker=asker,
                                       unbound=bind_error(cur, stmt))
            timed_out = threading.Event()

            def interrupt() -> None:
                timed_out.set()
                cur.interrupt()

            timer = threading.Timer(timeout_s, interrupt)
            timer.daemon = True
            timer.start()
            try:
                res = cur.execute(stmt)
                cols = [d[0] for d in (res.description or [])]
                rows, truncated, cut = fetch_within(res.fetchmany, budget)
            except duckdb.Error as e:
                ms = (time.perf_counter() - t0) * 1000
                if timed_out.is_set():
                    return QueryOutcome(sql=stmt, status="timeout", ms=ms,
                                        error=f"refused: the query ran longer than the {timeout_s:g}s timeout "
                                              "and was interrupted")
                msg = str(e).strip()
                if isinstance(e, duckdb.PermissionException):
                    msg = ("refused: the query tries to read or write files or settings, which is disabled ("
                           + msg.splitlines()[0] + ")")
                return QueryOutcome(sql=stmt, status="refused" if msg.startswith("refused") else "error", error=msg,
                                    ms=ms)
            finally:
                timer.cancel()
        df = pd.DataFrame.from_records(rows, columns=dedupe(cols))
        return QueryOutcome(sql=stmt, status="ok", df=df, truncated=truncated, cut=cut,
                            ms=(time.perf_counter() - t0) * 1000)

    def close(self) -> None:
        self.con.close()
        if self.engine is not None:
            self.engine.close()


def _locked_by_another(error: BaseException) -> bool:
    return isinstance(error, duckdb.IOException) and "lock" in str(error).lower()


@retry(retry=retry_if_exception(_locked_by_another), stop=stop_after_delay(LOCK_WAIT_S), wait=wait_random(0.05, 0.3),
       reraise=True)
def _connect_waiting(file: str, config: dict) -> duckdb.DuckDBPyConnection:
    """A read-only connection, waiting up to ``LOCK_WAIT_S`` while another process writes the file (a write
    approved on another server sharing it): its lock is held for that write only."""
    return duckdb.connect(file, read_only=True, config=config)


_OPEN: dict[str, Database] = {}
_OPEN_LOCK = threading.Lock()


@atexit.register
def close_all() -> None:
    """Close every shared connection at exit (one alive at teardown prints "nanobind: leaked ...")."""
    with _OPEN_LOCK:
        for database in _OPEN.values():
            database.close()
        _OPEN.clear()


def file_identity(file: Path) -> str:
    """What no two database files share, for the state several servers keep (a pending write's card, a thread):
    the resolved absolute path with the file's device and inode, so ``shop.duckdb`` opened from two working
    directories, or a file replaced by another at the same path, are two databases, never one."""
    resolved = file.expanduser().resolve()
    st = resolved.stat()
    return f"{resolved}#{st.st_dev}:{st.st_ino}"


def file_key(file: Path) -> str:
    """What identifies the file's state: path, size and mtime (and its WAL's, which a write may leave)."""
    wal, st = Path(f"{file}.wal"), file.stat()
    return f"{file}:{st.st_size}:{st.st_mtime_ns}:{wal.stat().st_mtime_ns if wal.exists() else ''}"


def _open_by_name(db: str) -> Database | None:
    """The remote database this process opened under the redacted name ``db`` (a Result's or a session's
    ``db``: the password is kept by nobody but the open connection, so the name finds that connection)."""
    if not remote.kind_of(db):
        return None
    with _OPEN_LOCK:
        return next((d for d in _OPEN.values() if d.source == db), None)


def open_database(db: str | os.PathLike, settings: Settings | None = None) -> Database:
    """One shared locked-down connection per database file and process (reopened when a caller asks
    for another memory limit, or when the file changed since it was opened)."""
    settings = settings or load_settings()
    shown = _open_by_name(str(db))
    file = shown.file if shown else resolve_db_file(db, settings)
    with _OPEN_LOCK:
        if str(file) not in _OPEN:
            asked_live = remote.kind_of(str(db)) and file.name.startswith(LIVE_PREFIX)   # not a file named so
            engine = LiveEngine(str(db), file, settings.live_sessions, settings.live_sessions_per_user) \
                if asked_live else None
            _OPEN[str(file)] = Database(file, settings, source=remote.redact(str(db)), engine=engine)  # no password
        database = _OPEN[str(file)]
    if database.settings.memory_limit != settings.memory_limit or \
            database.key != file_key(file) + models_stamp(settings):     # the file or its models changed
        database.reconfigure(settings)  # the latest caller's memory limit holds, not the first opener's
    return database
