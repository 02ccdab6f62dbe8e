"""What a live source's local catalog keeps beside its tables' structure (``source_mode: live``).

The catalog file (``remote.snapshot(..., sample=N)``) holds every table's columns, types, primary key and
comments, and at most N of its rows (the prompt's sample values, nested columns' shapes). What N rows cannot
tell is read from the engine with bounded cost and kept in the file's side JSON under ``live`` (``facts``):

- ``names``: each local table -> (schema, table) in the source, which ``live_sql`` rewrites names to;
- ``rows``: each table's rows: the engine's own estimate (Postgres ``pg_class.reltuples``) above
  ``SCAN_ROWS``, else ``count(*)`` (each query stopped after ``QUERY_S``); None when neither could be had;
- ``values``: the distinct values of each short text column, for the value index ("Lakers" ->
  ``team.nickname``): Postgres's statistics when they hold every value of the column (``pg_stats``: the
  most common values cover all its rows), else a bounded ``SELECT DISTINCT ... LIMIT`` on a table of at most
  ``SCAN_ROWS`` rows; a column with more than ``MAX_DISTINCT`` values is not indexed (as in a copy), and a
  larger table without such statistics keeps only what its sample shows;
- ``references``: the foreign keys ((table, columns, parent, parent's columns), local names), which the
  catalog file cannot hold as constraints (a child's sample need not find its parents in theirs).
"""
from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable

from duckask.utils.db.adbc_source import Dialect, SourceTable, qualified
from duckask.utils.db.quoting import quote_ident as _q

SCAN_ROWS = 1_000_000         # a table up to this many rows is counted and scanned for its values
QUERY_S = 10.0                # each of those queries stops after this long (the fact is then left out)
MAX_DISTINCT = 5000           # as ``introspect.VALUE_INDEX_MAX_DISTINCT``: more values, not indexed
TEXT_TYPES = ("text", "varchar", "character varying", "char", "character", "bpchar", "string", "name", "citext")


def facts(conn, dialect: Dialect, tables: list[SourceTable], say: Callable[[str], None] = lambda _m: None) -> dict:
    """The ``live`` facts of ``tables`` (see the module's text), read on ``conn``."""
    stats = _pg_stats(conn) if dialect.scheme == "postgresql" else {}
    estimates = _pg_rows(conn) if dialect.scheme == "postgresql" else {}
    by_key = {(t.schema, t.name): t for t in tables}
    out: dict = {"dialect": dialect.scheme, "names": {t.target: [t.schema, t.name] for t in tables},
                 "rows": {}, "values": {}, "references": []}
    for t in tables:
        estimate = estimates.get((t.schema, t.name))
        rows = estimate if estimate is not None and estimate > SCAN_ROWS else None
        if rows is None:
            got = _one(conn, f"SELECT count(*) FROM {qualified(t)}")
            rows = int(got[0][0]) if got else estimate
        out["rows"][t.target] = rows
        values = {}
        for c in t.columns:
            if not _is_text(c.source_type, dialect):
                continue
            kept = _values(conn, t, c.name, rows, stats.get((t.schema, t.name, c.name)))
            if kept is not None:
                values[c.name] = kept
        if values:
            out["values"][t.target] = values
        for cols, schema, table, refs in t.fks:
            parent = by_key.get((schema, table))
            if parent is not None:
                out["references"].append([t.target, cols, parent.target, refs])
        say(f"catalog of {t.target} ({'?' if rows is None else f'{rows:,}'} rows, {len(values)} text columns indexed)")
    return out


def _is_text(source_type: str, dialect: Dialect) -> bool:
    low = (source_type or "").lower()
    return low in TEXT_TYPES or low.startswith(("varchar", "character varying", "char(", "character("))


def _values(conn, t: SourceTable, column: str, rows: int | None, stat: tuple | None) -> list[str] | None:
    """Every distinct value of the column (None: too many, or not to be had at bounded cost)."""
    if stat is not None:
        null_frac, n_distinct, common, freqs = stat
        distinct = n_distinct if n_distinct > 0 else -n_distinct * (rows or 0)
        if distinct > MAX_DISTINCT:
            return None
        if common and 1.0 - (null_frac or 0.0) - sum(freqs or []) < 1e-3:     # the statistics hold them all
            return sorted(str(v) for v in common)
    if rows is None or rows > SCAN_ROWS:
        return None
    got = _one(conn, f"SELECT DISTINCT {_q(column)} FROM {qualified(t)} WHERE {_q(column)} IS NOT NULL "
                     f"LIMIT {MAX_DISTINCT + 1}")
    if got is None or len(got) > MAX_DISTINCT:
        return None
    return sorted(str(v) for (v,) in got)


def _one(conn, sql: str) -> list | None:
    """The rows of one bounded query, or None when it failed or ran past ``QUERY_S`` (cancelled)."""
    cur = conn.cursor()
    timer = threading.Timer(QUERY_S, lambda: cancel(cur))
    timer.daemon = True
    timer.start()
    try:
        cur.execute(sql)
        return cur.fetchall()
    except Exception:          # the driver's errors have no common base: a fact not had is left out
        with contextlib.suppress(Exception):
            conn.rollback()
        return None
    finally:
        timer.cancel()
        cur.close()


def cancel(cur) -> None:
    """Ask the engine to stop the cursor's running query (a driver that cannot is left to finish)."""
    with contextlib.suppress(Exception):
        cur.adbc_cancel()


def _pg_rows(conn) -> dict[tuple[str, str], int | None]:
    """Postgres's own row estimates (``reltuples``; -1, never analyzed: None)."""
    got = _one(conn, "SELECT n.nspname::text, c.relname::text, c.reltuples::bigint FROM pg_class c "
                     "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'p', 'm', 'f')") or []
    return {(s, t): (int(n) if n is not None and n >= 0 else None) for s, t, n in got}


def _pg_stats(conn) -> dict[tuple[str, str, str], tuple]:
    """Postgres's column statistics (``pg_stats``: what ANALYZE, or autovacuum, found): null share, distinct
    count (negative: a share of the rows), the most common values and their shares."""
    got = _one(conn, "SELECT schemaname::text, tablename::text, attname::text, null_frac, n_distinct, "
                     "most_common_vals::text::text[], most_common_freqs FROM pg_stats") or []
    return {(s, t, c): (nf, nd or 0.0, mcv, freqs) for s, t, c, nf, nd, mcv, freqs in got}
