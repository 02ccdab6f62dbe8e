"""Gated writes: nothing changes without a human saying yes to exactly what will run.

1. ``propose(sql, database, settings)``: the tier (``writes.tiers.classify``); T3, writes off
   (``allow_writes``), a database that is not a DuckDB file of the user's, a statement that reads
   files or server state, or a row estimate that cannot be made: **blocked**. Otherwise the estimate
   and explanation (``writes.plan``). Either way the attempt is recorded in the audit log
   (``audit.AuditLog``), and the returned ``WriteCard`` (``writes/card.py``: sql, tier, kind, explanation,
   estimated_rows, decision, ...) is what every surface shows for approval.
2. ``reject(card)``: recorded, nothing runs. ``approve(card, database)``: the approval is recorded
   **before** the data write; then the statement runs on a separate read-write connection (the
   read-only one is closed meanwhile: ``Database.exclusive``), inside a transaction that rolls back
   when the actual row count differs from the estimate by more than ``write_tolerance``, on any
   error, or at the timeout; the outcome is recorded after.

Run on its own (the card and a terminal approval, as ``duckask sql --allow-writes`` does)::

    python -m duckask.utils.state.writes --db PATH "DELETE FROM t WHERE id = 3"
"""
from __future__ import annotations

import contextlib
import datetime as dt
import threading
import uuid
from pathlib import Path

import duckdb

from duckask.utils.config import Settings
from duckask.utils.db.binder import bind
from duckask.utils.db.database import Database
from duckask.utils.db.sources import refresh_live
from duckask.utils.state import audit_log
from duckask.utils.writes.audit import AuditLog, database_key, os_user
from duckask.utils.writes.card import WriteCard
from duckask.utils.writes.plan import counted_rows, estimate_sql, explain, reads_sql
from duckask.utils.writes.tiers import classify, engine_writes

#: This process's session id in the audit log, unless a caller names its own (a chat, an HTTP client).
PROCESS_SESSION = f"pid-{uuid.uuid4().hex[:8]}"


def parse_tolerance(text: str | int | None) -> tuple[int, float]:
    """``"5"`` -> 5 rows; ``"10%"`` -> a share of the estimate. ValueError says what is expected."""
    t = str(text if text is not None else "0").strip()
    try:
        if t.endswith("%"):
            share = float(t[:-1])
            if share < 0:
                raise ValueError
            return 0, share
        rows = int(t)
        if rows < 0:
            raise ValueError
        return rows, 0.0
    except ValueError:
        raise ValueError(f"write_tolerance must be a number of rows (e.g. 5) or a share (e.g. 10%), not {t!r}") \
            from None


def allowed_difference(estimate: int, tolerance: str | int | None) -> float:
    """Rows the actual count may differ from ``estimate`` by (a share of 3 rows may allow 0.99 of a row)."""
    rows, share = parse_tolerance(tolerance)
    return max(float(rows), abs(estimate) * share / 100)


def not_writable(database: Database) -> str | None:
    """Why ``database`` cannot take a write, or None: a folder or SQLite file is answered from an imported
    copy in the cache, and a write there would never reach the user's data."""
    if database.live:               # a live source: the write runs in its engine (``live.LiveEngine.write``)
        return None
    if Path(database.source).expanduser().resolve() != database.file.resolve():
        return (f"writes need a DuckDB file: {database.source} is answered from an imported copy in the cache, "
                "which a write would not reach; make a DuckDB file with `duckask import` and write to that")
    return None


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _estimate(c, database: Database) -> tuple[int | None, int | None, str | None]:
    """(estimated rows, the join's matches when more, why it cannot be estimated or must not run)."""
    query = estimate_sql(c)
    for read in [*reads_sql(c), *([query] if query else [])]:
        why = database.refusal(read)       # a ScopedDatabase adds its user's allowlist
        if why:
            return None, None, why
    known = counted_rows(c)
    if query is None:
        return known, None, None
    out = database.run(query, row_cap=1)
    if not out.ok:
        assert out.error is not None                # a failed outcome always says why
        return None, None, f"refused: cannot count the rows it would change ({out.error.splitlines()[0]})"
    assert out.df is not None                       # an ok outcome holds its rows
    counts = [int(v) for v in out.df.iloc[0]]
    return counts[0], (counts[-1] if counts[-1] > counts[0] else None), None


def propose(sql: str, database: Database, settings: Settings, *, session: str | None = None,
            user: str | None = None, audit: AuditLog | None = None, request: str | None = None) -> WriteCard:
    """Classify, check, estimate and explain ``sql``, record the attempt, and return its card. ``request``:
    the plain-English request the model wrote ``sql`` from (then the card and the audit say so)."""
    c = classify(sql)
    if c.tier == 0:
        raise ValueError("this is a read (a SELECT), not a write: run it as a query")
    parse_tolerance(settings.write_tolerance)
    card = WriteCard.of(c, sql or "", db=database.source, session=session or PROCESS_SESSION,
                        user=user or os_user(), request=request, proposed_by="model" if request else "user",
                        db_id=database.identity)
    blocked = None
    if c.tier == 3:
        blocked = f"refused: T3, always blocked: {c.reason}"
    elif not settings.allow_writes:
        blocked = (f"refused: writes are off ({c.tier_name}: {c.kind}); turn them on with --allow-writes (or "
                   "allow_writes: true in the config), and each write then waits for your approval")
    else:
        engine, unreadable = _binder_refusals(c, database)
        if engine:                      # the binder reads more writes than the card names: T3 after all
            card.tier, card.tier_name, card.runs = 3, "T3 blocked", []
        blocked = not_writable(database) or _created_exists(c, database) or engine or unreadable
        if not blocked:
            card.estimated_rows, card.matched_rows, blocked = _estimate(c, database)
    card.explanation = explain(c, card.estimated_rows)
    card.blocked, card.detail = blocked, blocked
    card.decision, card.outcome = ("blocked", "not_run") if blocked else ("pending", None)
    log = audit or audit_log(settings)
    card.id = log.record(session=card.session, user=card.user, db=_identity(database), tier=card.tier,
                         kind=c.kind, sql=card.sql, explanation=card.explanation,
                         estimated_rows=card.estimated_rows, decision=card.decision,
                         outcome=card.outcome, detail=blocked, request=request, proposed_by=card.proposed_by,
                         runs="; ".join(card.runs) or None)
    return card


def _binder_refusals(c, database: Database) -> tuple[str | None, str | None]:
    """The statement bound once by DuckDB's own binder on this database: (why it runs more or other writes than its
    card names, ``tiers.engine_writes``; why it scans a table its proposer may not read, every scan and not only those
    ``plan.reads_sql`` lists), each None when it does not."""
    with database.scope() as scope:
        bound = scope.bind(c.statement)
        why = engine_writes(bound, c)
        unreadable = database.unreadable(bound, scope) if bound is not None else None
    return (f"refused: T3, always blocked: {why}" if why else None), unreadable


def _identity(database: Database) -> str:
    return database_key(database.source)


def _created_exists(c, database: Database) -> str | None:
    if c.kind in ("CREATE TABLE", "CREATE VIEW") and c.target and not c.tree.args.get("exists") \
            and not c.tree.args.get("replace") and c.target.split(".")[-1].lower() in database.user_tables:
        return f"refused: {c.target} already exists; choose another name (replacing a table is T3, always blocked)"
    return None


def recorded(entry_id: int, database: Database, settings: Settings) -> WriteCard:
    """A write recorded as pending in the audit log by another process (an agent's ``propose_write``), as its
    card, for a person to decide here; ValueError says why it cannot be (not found, another database)."""
    log = audit_log(settings)
    entry = next((e for e in log.entries() if e["id"] == entry_id), None)
    if entry is None or entry["db"] != _identity(database):
        where = f"for {database.source} " if entry else ""
        raise ValueError(f"no write #{entry_id} {where}in the audit log {log.path} (`duckask audit --db ...` "
                         "lists them)")
    card = WriteCard.from_entry(entry, database.source)
    card.db_id = database.identity            # the entry's resolved path is this file's, checked above
    return card


def _pending(card: WriteCard) -> None:
    if card.decision != "pending":
        raise ValueError(f"write #{card.id} is {card.decision}, not pending: only a pending write "
                         "can be approved or rejected, once")


def reject(card: WriteCard, settings: Settings, audit: AuditLog | None = None,
           reason: str | None = None, by: str | None = None) -> WriteCard:
    """Record the rejection (``reason``: why, when no one could say yes; ``by``: who, default the proposer's
    side of this process); nothing runs."""
    _pending(card)
    assert card.id is not None                      # a pending card is recorded (``propose``, ``recorded``)
    by = by or card.user
    (audit or audit_log(settings)).update(card.id, decision="rejected", outcome="not_run",
                                                             decided_at=_now(), detail=reason, decided_by=by)
    card.decision, card.outcome, card.detail, card.decided_by = "rejected", "not_run", reason, by
    return card


def expire(card: WriteCard, settings: Settings, reason: str, audit: AuditLog | None = None) -> WriteCard:
    """Record that a pending write was closed without anyone deciding it (a server held it too long, or had
    no room for it): decision "expired", outcome not_run, ``reason`` as the detail, no ``decided_by`` (no
    person decided); nothing runs, and it can no longer be approved."""
    _pending(card)
    assert card.id is not None                      # a pending card is recorded (``propose``, ``recorded``)
    (audit or audit_log(settings)).update(card.id, decision="expired", outcome="not_run",
                                                             finished_at=_now(), detail=reason)
    card.decision, card.outcome, card.detail = "expired", "not_run", reason
    return card


def approve(card: WriteCard, database: Database, settings: Settings,
            audit: AuditLog | None = None, by: str | None = None) -> WriteCard:
    """Record the approval (``by``: who; default the card's user), run the write, record its outcome; returns
    the card with outcome and rows."""
    _pending(card)
    assert card.id is not None                      # a pending card is recorded (``propose``, ``recorded``)
    if card.db_id and card.db_id != database.identity:
        raise ValueError(f"write #{card.id} was proposed for another database file than {database.source}: it is "
                         "decided where it was proposed; nothing ran")
    by = by or card.user
    log = audit or audit_log(settings)
    log.update(card.id, decision="approved", decided_at=_now(), decided_by=by)   # before the data write
    card.decision, card.decided_by = "approved", by
    card.outcome, card.actual_rows, card.detail = _apply(card, database, settings)
    outcome, actual, detail = card.outcome, card.actual_rows, card.detail
    log.update(card.id, outcome=outcome, actual_rows=actual, detail=detail, finished_at=_now())
    return card


def _affected(res: duckdb.DuckDBPyConnection) -> int:
    cols = [d[0] for d in res.description or []]
    if cols == ["Count"]:
        row = res.fetchone()
        return int(row[0]) if row else 0
    if cols == ["Success"]:
        return 0
    return len(res.fetchall())                      # RETURNING rows


def _off_estimate(card: WriteCard, actual: int, settings: Settings) -> str | None:
    """Why a write that changed ``actual`` rows must be rolled back (off its estimate), or None."""
    est = card.estimated_rows
    if not card.checks_rows or est is None:
        return None
    allowed = allowed_difference(est, settings.write_tolerance)
    # DuckDB may count an UPDATE ... FROM once per matching source row: the matches pass too
    if abs(actual - est) > allowed and actual != card.matched_rows:
        return (f"rolled back: it changed {actual} rows where {est} were estimated (allowed difference {allowed:g}, "
                "write_tolerance)")
    return None


def _apply_live(card: WriteCard, database: Database, settings: Settings) -> tuple[str, int | None, str | None]:
    """A live source's write: in its engine, in one transaction (``LiveEngine.write``); after a change of
    structure (T2), the local catalog is read again so the next question sees it."""
    with database.scope() as scope:
        now = classify(card.sql)
        why = engine_writes(scope.bind(card.sql), now)        # bound again on the catalog, as it reads now
    if why or now.runs != card.runs:
        return "error", None, f"not run: {why or 'the statement no longer reads as its card'}"
    engine = database.engine
    assert engine is not None                       # called for a live database only
    result = engine.write(card.sql, settings.timeout_s, lambda actual: _off_estimate(card, actual, settings))
    if result[0] == "committed" and card.tier == 2:
        with database.exclusive():
            refresh_live(engine.url, database.settings)
    return result


def _apply(card: WriteCard, database: Database, settings: Settings) -> tuple[str, int | None, str | None]:
    """(outcome, actual rows, detail): the statement in a transaction on its own read-write connection."""
    if database.live:
        return _apply_live(card, database, settings)
    config: dict[str, str | bool | int | float | list[str]] = {
        "enable_external_access": False, "memory_limit": settings.memory_limit, "lock_configuration": True}
    with database.exclusive():
        try:
            con = duckdb.connect(str(database.file), read_only=False, config=config)
        except duckdb.Error as e:        # DuckDB's message names the absolute path and the holder's PID: not kept
            held = "another process holds its write lock" if "lock" in str(e).lower() else "DuckDB refused it"
            return "error", None, (f"cannot open {database.file.name} for writing ({held}); another process (a "
                                   "duckask serve or chat) may hold it open: write through that one")
        timed_out = threading.Event()

        def stop() -> None:
            timed_out.set()
            con.interrupt()

        timer = threading.Timer(settings.timeout_s, stop)
        timer.daemon = True
        try:
            con.execute("BEGIN TRANSACTION")
            now = classify(card.sql)
            why = engine_writes(bind(con, card.sql), now)     # bound again where it runs
            if why or now.runs != card.runs:
                con.execute("ROLLBACK")
                return "error", None, f"not run: {why or 'the statement no longer reads as its card'}"
            timer.start()
            actual = _affected(con.execute(card.sql))
            timer.cancel()
            off = _off_estimate(card, actual, settings)
            if off:
                con.execute("ROLLBACK")
                return "rolled_back", actual, off
            con.execute("COMMIT")
            return "committed", actual, None
        except duckdb.Error as e:
            with contextlib.suppress(duckdb.Error):
                con.execute("ROLLBACK")
            why = f"the {settings.timeout_s:g}s timeout" if timed_out.is_set() else str(e).splitlines()[0]
            return "error", None, f"rolled back: {why}"
        finally:
            timer.cancel()
            con.close()


def decide(card: WriteCard, approve_it: bool, database: Database, settings: Settings,
           reason: str | None = None, by: str | None = None) -> WriteCard:
    """Approve (run) or reject a pending card: the one call every route that shows a card decides it with
    (``by``: who decides, when not the card's own user)."""
    return approve(card, database, settings, by=by) if approve_it else reject(card, settings, reason=reason, by=by)


#: Why a write is rejected when no person can be asked (stdin is not a terminal): nothing is written.
NO_APPROVER = "no approval: stdin is not a terminal, and a write needs a typed yes"
APPROVE_HELP = 'Type "yes" to run it; anything else cancels: '


def read_yes(prompt: str = APPROVE_HELP, reader=input) -> bool:
    """True only for an explicit "yes" (any case, surrounding spaces ignored); EOF is no."""
    try:
        return reader(prompt).strip().lower() == "yes"
    except EOFError:
        return False


def main(argv: list[str] | None = None) -> int:
    """``python -m duckask.utils.state.writes --db PATH "SQL"``: propose one write, show its card, and run it
    on an explicit yes typed on the terminal (without one, it is rejected: nothing is written)."""
    import argparse
    import sys

    from duckask.utils.config import load_settings
    from duckask.utils.db.database import open_database

    ap = argparse.ArgumentParser(description="Propose one write, show its card, and run it on an explicit yes.")
    ap.add_argument("--db", required=True)
    ap.add_argument("sql")
    args = ap.parse_args(argv)
    settings = load_settings(allow_writes=True)
    database = open_database(args.db, settings)
    card = propose(args.sql, database, settings)
    if card.decision == "pending":
        print(card.text(), flush=True)
        if sys.stdin.isatty() and read_yes():
            card = approve(card, database, settings)
        else:
            card = reject(card, settings, reason=None if sys.stdin.isatty() else NO_APPROVER)
    print(card.summary())
    return 0 if card.outcome == "committed" else 1


if __name__ == "__main__":
    raise SystemExit(main())
