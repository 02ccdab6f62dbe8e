"""A live source (``source_mode: live``): questions run in the engine where the data lives, not in a copy.

A live ``Database`` opens the source's local catalog (``remote.snapshot(..., sample=N)``: the tables'
structure and a few rows each) and carries a ``LiveEngine``. Everything that reads structure runs on the
catalog file as for any database: the statement allowlist and DuckDB's own binder (``safety.check_sql``), the
schema the model sees, the write tiers. Every query whose rows matter (``Database.run``: the answer, the
checks' counts, a write's estimate) is then handed to ``LiveEngine.run``:

1. ``live_sql.to_engine``: the engine's dialect and table names, the function allowlist on the engine's tree;
2. within the source's session bounds (``live_sessions`` at once, ``live_sessions_per_user`` for one asker; a query
   queues for a place up to its timeout, then is refused saying which bound), on a connection of a small pool
   (Postgres sessions are ``default_transaction_read_only``), in a read-only
   transaction (``BEGIN READ ONLY``), with ``timeout_s`` as the engine's statement timeout (and a cancel
   from here a second later, for engines that have none), the row cap as a fetch limit (the engine is asked
   for one row more than the cap, and no more is read), then a rollback.

``LiveEngine.write``: an approved card's statement in the engine's dialect, in one read-write transaction,
committed only when ``judge`` (``writes._apply``'s row-count rule) finds nothing wrong.
"""
from __future__ import annotations

import contextlib
import decimal
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pyarrow as pa
import sqlglot
from sqlglot import exp

from duckask.utils.db import adbc_source, live_sql, remote
from duckask.utils.db.errors import UnsafeSQLError
from duckask.utils.db.lexing import one_reading
from duckask.utils.db.live_catalog import cancel
from duckask.utils.db.outcome import Budget, QueryOutcome, dedupe, fetch_within
from duckask.utils.redaction import redact_error

POOL = 4                          # idle connections kept per source and process
CANCEL_GRACE_S = 1.0              # past the engine's own statement timeout, cancelled from here


class Busy(RuntimeError):
    """No session of the source came free in time; the message says which bound."""


class LiveEngine:
    """The engine behind a live source: its URL (with the password: kept only here), dialect, and the facts its
    catalog file's side JSON holds (``live_catalog``)."""

    def __init__(self, url: str, file: Path, sessions: int = 4, per_user: int = 2):
        self.url = url
        dialect = adbc_source.dialect_of(url)
        assert dialect is not None, "a live catalog is only made for an ADBC source (remote._read)"
        self.dialect = dialect
        self._idle: queue.LifoQueue = queue.LifoQueue()
        self.sessions, self.per_user = sessions, per_user
        self._open = threading.BoundedSemaphore(sessions)          # sessions open at once, all askers
        self._askers: dict[str, threading.BoundedSemaphore] = {}   # and per asker
        self._askers_lock = threading.Lock()
        self.reload(file)

    @contextlib.contextmanager
    def _turn(self, asker: str, wait_s: float):
        """A place among the source's ``sessions`` (and the asker's ``per_user``), queued up to ``wait_s``;
        ``Busy`` when none came free."""
        with self._askers_lock:
            mine = self._askers.setdefault(asker, threading.BoundedSemaphore(self.per_user))
        deadline = time.monotonic() + wait_s
        if not mine.acquire(timeout=wait_s):
            raise Busy(f"refused: {self.per_user} of this user's queries are already running on the "
                       f"{self.dialect.scheme} source (live_sessions_per_user); wait for one to finish")
        try:
            if not self._open.acquire(timeout=max(0.0, deadline - time.monotonic())):
                raise Busy(f"refused: all {self.sessions} sessions duckask opens on the {self.dialect.scheme} "
                           f"source were busy for {wait_s:g}s (live_sessions); try again")
            try:
                yield
            finally:
                self._open.release()
        finally:
            mine.release()

    def reload(self, file: Path) -> None:
        """Read the catalog's facts again (after a refresh of the catalog file)."""
        self.facts = remote.about(file).get("live") or {}
        self.names = {k: (s, t) for k, (s, t) in (self.facts.get("names") or {}).items()}

    # ---------------------------------------------------------------- connections
    def _connect(self):
        conn = adbc_source.connect(self.url, self.dialect, autocommit=True)
        if self.dialect.scheme == "postgresql":
            with contextlib.closing(conn.cursor()) as cur:
                cur.execute("SET default_transaction_read_only = on")
                cur.execute("SET application_name = 'duckask'")
                cur.execute("SET standard_conforming_strings = on")    # strings as DuckDB's lexer reads them
        return conn

    @contextlib.contextmanager
    def _connection(self):
        try:
            conn = self._idle.get_nowait()
        except queue.Empty:
            conn = self._connect()
        broken = False
        try:
            yield conn
        except BaseException:
            broken = True
            raise
        finally:
            if broken or self._idle.qsize() >= POOL:
                with contextlib.suppress(Exception):
                    conn.close()
            else:
                self._idle.put(conn)

    def close(self) -> None:
        while True:
            try:
                conn = self._idle.get_nowait()
            except queue.Empty:
                return
            with contextlib.suppress(Exception):
                conn.close()

    def _begin(self, timeout_s: float, read_only: bool = True) -> list[str]:
        if self.dialect.scheme == "postgresql":
            return ["BEGIN READ ONLY" if read_only else "BEGIN READ WRITE",
                    f"SET LOCAL statement_timeout = {max(1, int(timeout_s * 1000))}"]
        return ["BEGIN"] if self.dialect.scheme == "sqlite" else []

    def _end(self) -> str | None:
        return "ROLLBACK" if self.dialect.scheme in ("postgresql", "sqlite") else None

    # ---------------------------------------------------------------- reads
    def to_engine(self, sql: str, models: dict[str, str], readable: set[str] | None = None) -> str:
        """``sql`` as the engine runs it (``live_sql.to_engine``); ``readable``: the local tables the asker may read
        (None: every one)."""
        allowed = None if readable is None else {v for k, v in self.names.items() if k.lower() in readable}
        return live_sql.to_engine(sql, self.dialect.scheme, self.names, models, allowed)

    def run(self, stmt: str, models: dict[str, str], *, timeout_s: float, budget: Budget, t0: float,
            readable: set[str] | None = None, asker: str = "", unbound: str | None = None) -> QueryOutcome:
        """``stmt`` (checked, DuckDB's dialect) run in the engine; never raises for SQL problems. ``readable``: the
        local tables (folded names) the asker may read, checked again on the engine's tree (None: every one);
        ``unbound``: what the catalog's binder said of it (``binder.bind_error``), which stops it after the engine's
        checks."""
        try:
            engine_sql = self.to_engine(stmt, models, readable)
        except live_sql.EngineRefusal as e:
            return QueryOutcome(sql=stmt, status="refused", error=str(e))
        except live_sql.EngineError as e:
            return QueryOutcome(sql=stmt, status="error", error=str(e))
        if unbound:             # the catalog's binder could not bind it: not sent on its parse alone (its error)
            return QueryOutcome(sql=stmt, status="error", error=unbound)
        limited = f"SELECT * FROM ({engine_sql}) AS duckask_rows LIMIT {int(budget.rows) + 1}"
        fired = threading.Event()
        try:
            with self._turn(asker, timeout_s), self._connection() as conn, contextlib.closing(conn.cursor()) as cur:
                def stop() -> None:
                    fired.set()
                    cancel(cur)

                timer = threading.Timer(timeout_s + CANCEL_GRACE_S, stop)
                timer.daemon = True
                timer.start()
                try:
                    for s in self._begin(timeout_s):
                        cur.execute(s)
                    cur.execute(limited)
                    reader = cur.fetch_record_batch()
                    cols = dedupe([f.name for f in reader.schema])
                    rows, truncated, cut = fetch_within(_rows_of(reader), budget)
                finally:
                    timer.cancel()
                    self._finish(cur)
        except Busy as e:
            return QueryOutcome(sql=stmt, status="refused", error=str(e), engine_sql=engine_sql,
                                ms=(time.perf_counter() - t0) * 1000)
        except Exception as e:           # the driver's errors share no base class: each is an outcome
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            return self._failed(stmt, engine_sql, e, timeout_s, fired.is_set(), t0)
        df = pd.DataFrame.from_records(rows, columns=cols)
        return QueryOutcome(sql=stmt, status="ok", df=df, truncated=truncated, engine_sql=engine_sql, cut=cut,
                            ms=(time.perf_counter() - t0) * 1000)

    def _finish(self, cur) -> None:
        end = self._end()
        if end:
            cur.execute(end)

    def _failed(self, stmt: str, engine_sql: str, e: Exception, timeout_s: float, fired: bool,
                t0: float) -> QueryOutcome:
        ms = (time.perf_counter() - t0) * 1000
        msg = redact_error(" ".join(str(e).split())[:500], self.url)
        if fired or "statement timeout" in msg or "canceling statement" in msg:
            return QueryOutcome(sql=stmt, status="timeout", engine_sql=engine_sql, ms=ms,
                                error=f"refused: the query ran longer than the {timeout_s:g}s timeout and the "
                                      f"{self.dialect.scheme} server stopped it")
        read_only = "read-only transaction" in msg
        return QueryOutcome(sql=stmt, status="refused" if read_only else "error", engine_sql=engine_sql, ms=ms,
                            error=(f"refused: the {self.dialect.scheme} server refused a write in a read-only "
                                   f"transaction ({msg})") if read_only else f"{self.dialect.scheme}: {msg}")

    # ---------------------------------------------------------------- writes
    def write(self, sql: str, timeout_s: float,
              judge: Callable[[int], str | None]) -> tuple[str, int | None, str | None]:
        """(outcome, rows changed, detail): the write in the engine's dialect, in one transaction, committed
        when ``judge(rows)`` returns None (else rolled back, saying why)."""
        try:
            engine_sql = self.write_sql(sql)
        except (UnsafeSQLError, live_sql.EngineError, sqlglot.errors.SqlglotError) as e:
            return "error", None, f"not run: {e}"
        try:
            with self._turn("", timeout_s), self._connection() as conn, contextlib.closing(conn.cursor()) as cur:
                for s in self._begin(timeout_s, read_only=False):
                    cur.execute(s)
                try:
                    cur.execute(engine_sql)
                    actual = max(int(cur.rowcount or 0), 0)
                    why = judge(actual)
                    cur.execute("ROLLBACK" if why else "COMMIT")
                except BaseException:
                    with contextlib.suppress(Exception):
                        cur.execute("ROLLBACK")
                    raise
        except Exception as e:
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            msg = redact_error(" ".join(str(e).split())[:300], self.url)
            timed = "statement timeout" in msg or "canceling statement" in msg
            return "error", None, f"rolled back: {f'the {timeout_s:g}s timeout' if timed else msg}"
        return ("rolled_back", actual, why) if why else ("committed", actual, None)

    def write_sql(self, sql: str) -> str:
        """A write statement (DuckDB's dialect, its card approved) in the engine's dialect and names; its
        expressions hold only allowed functions (``live_sql``)."""
        write = live_sql.engine_dialect(self.dialect.scheme)
        tree = sqlglot.parse_one(one_reading(sql), read="duckdb")
        created = {t.name.lower() for t in [tree.find(exp.Table)] if t is not None} if isinstance(tree, exp.Create) \
            else set()                                     # the table a CREATE makes is not the source's yet
        live_sql.rename_tables(tree, self.names, created, alias=False)
        for node in tree.find_all(exp.Func):
            live_sql.check_function(node, self.dialect.scheme)
        out = tree.sql(dialect=write, unsupported_level=sqlglot.ErrorLevel.RAISE, comments=False)
        one_reading(out, write)                            # the engine reads the text sqlglot wrote as sqlglot does
        return out


def _rows_of(reader: pa.RecordBatchReader) -> Callable[[int], list[tuple]]:
    """``fetch(n)`` over the stream's rows, as ``outcome.fetch_within`` reads them: a batch is read from the engine
    only when the rows before it are taken (the rest of the stream is never read)."""
    pending: list[tuple] = []
    batches = iter(reader)

    def fetch(n: int) -> list[tuple]:
        while len(pending) < n:
            batch = next(batches, None)
            if batch is None:
                break
            pending.extend(zip(*(_python(batch.column(i), batch.schema.field(i)) for i in range(batch.num_columns))))
        out = pending[:n]
        del pending[:n]
        return out

    return fetch


def _python(column: pa.ChunkedArray | pa.Array, field: pa.Field) -> list:
    """A column's values as DuckDB's Python client gives them. Postgres's NUMERIC comes as text (its type in the
    field's metadata): a whole number (a SUM of integers) as an int, a value of a few decimal places (a
    ``numeric(10,2)``, its SUM) as a Decimal, as DuckDB gives a DECIMAL, and a long division (an AVG) as a float,
    as DuckDB gives a DOUBLE. A type the driver hands over in Postgres's binary form is decoded where duckask knows
    it (``bytea`` as bytes, ``xid`` as a number, ``inet`` as an address) and otherwise said, never shown as bytes;
    a date or time Python cannot hold (``'infinity'``) is its text."""
    meta = {k.decode(): v.decode() for k, v in (field.metadata or {}).items()}
    typname = meta.get("ADBC:postgresql:typname") or meta.get("POSTGRESQL:type") or ""
    storage = field.type.storage_type if isinstance(field.type, pa.BaseExtensionType) else field.type
    if pa.types.is_binary(storage) or pa.types.is_large_binary(storage):
        decode = _BINARY.get(typname)
        return [None if v is None else decode(v) if decode else f"<{typname or 'binary'} value: cast it to text to "
                f"see it>" for v in column.to_pylist()]
    try:
        values = column.to_pylist()
    except (OverflowError, ValueError, pa.ArrowException):      # a date past Python's (Postgres's infinity)
        whole = pa.int32() if pa.types.is_date32(field.type) else pa.int64()
        values = [_beyond(v) for v in column.cast(whole).to_pylist()] if pa.types.is_temporal(field.type) \
            else [str(v) for v in column.cast(pa.string()).to_pylist()]
    if typname == "numeric":
        return [_number(v) for v in values]
    return values


def _wrapped(v: int, bits: int) -> int:
    return (v + 2 ** (bits - 1)) % 2 ** bits - 2 ** (bits - 1)


#: Postgres's infinite dates and times are the extremes of its integers counted from 2000-01-01; the driver moves
#: them to 1970 (10,957 days, 946,684,800 s in microseconds), past the extreme for ``infinity``.
_INFINITE = {_wrapped(2**31 - 1 + 10_957, 32): "infinity", -(2**31) + 10_957: "-infinity",
             _wrapped(2**63 - 1 + 946_684_800_000_000, 64): "infinity", -(2**63) + 946_684_800_000_000: "-infinity",
             2**31 - 1: "infinity", -(2**31): "-infinity", 2**63 - 1: "infinity", -(2**63): "-infinity"}


def _beyond(v: int | None) -> str | None:
    return None if v is None else _INFINITE.get(v, f"<a date or time beyond what Python holds ({v})>")


def _inet(v: bytes) -> str:
    """Postgres's binary inet/cidr: family, bits, is_cidr, length, address."""
    import ipaddress

    address = ipaddress.ip_address(bytes(v[4:4 + v[3]]))
    full = 32 if address.version == 4 else 128
    return str(address) if v[1] == full and not v[2] else f"{address}/{v[1]}"


_BINARY: dict[str, Callable[[bytes], object]] = {
    "bytea": bytes, "xid": lambda v: int.from_bytes(v, "big"), "xid8": lambda v: int.from_bytes(v, "big"),
    "cid": lambda v: int.from_bytes(v, "big"), "inet": _inet, "cidr": _inet,
}


DECIMAL_PLACES = 6          # more places than this: a division's result, a float


def _number(v):
    if v is None:
        return None
    try:
        d = decimal.Decimal(str(v))
    except decimal.InvalidOperation:
        return v
    if not d.is_finite():
        return float(d)
    exponent = d.as_tuple().exponent
    places = -exponent if isinstance(exponent, int) else 0
    if places <= 0:
        return int(d)
    return d if places <= DECIMAL_PLACES else float(d)
