"""Other databases: ``--db postgresql://...`` (and any ADBC driver's URL), ``mysql://...``, ``md:...``.

duckask answers from a locked-down read-only DuckDB file (no external access), so a remote database is
copied into a snapshot file in the cache, which is then opened like any other database
(``sources.resolve_db_file``). Two ways to read it, chosen by what is installed:

- DuckDB's own extension (postgres, mysql, motherduck) where it is installed: a read-only ATTACH and
  ``COPY FROM DATABASE``. duckask never downloads an extension (autoinstall is off);
- else an Apache Arrow ADBC driver (``pip install 'duckask[postgres]'``; ``adbc_source``): Postgres, and
  through the same code SQLite (``sqlite:///path``), Snowflake, BigQuery and Flight SQL.

Refresh rules: a snapshot is read once and kept; it is read again when it is older than ``max_age_s``
(setting ``source_max_age_s``; 0: never by age), when the tables asked for (``source_tables``) changed,
or on ``duckask import URL --refresh``. A new copy is built beside the old one and replaces it only when
complete, so a source that goes away mid-read leaves the old copy intact: an explicit refresh then fails
with the reason, an age-triggered one warns and answers from the old copy. The password (or token) in a
connection string is never shown: every message, file name and the database's name carry ``redact(db)``.
"""
from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import cast

import duckdb

from duckask.utils.db import adbc_source, live_catalog
from duckask.utils.db.errors import DatabaseError
from duckask.utils.redaction import redact, redact_error

#: scheme prefix -> (extension, ATTACH type)
KINDS = {"postgres://": ("postgres", "postgres"), "postgresql://": ("postgres", "postgres"),
         "mysql://": ("mysql", "mysql"), "md:": ("motherduck", "motherduck"),
         "motherduck:": ("motherduck", "motherduck")}
#: A live source's catalog file is named ``live-<dialect>-<hash>.duckdb`` (a copy: ``<dialect>-<hash>.duckdb``).
LIVE_PREFIX = "live-"


def _fail(message: str) -> Exception:
    """A ``DatabaseError`` (what every caller catches) saying what cannot be read and how to fix it."""
    return DatabaseError(message)


def kind_of(db: str) -> tuple[str | None, str] | None:
    """(DuckDB extension or None, ATTACH type or ADBC dialect) for a connection string; None for a file or
    folder."""
    low = str(db).strip().lower()
    found = next((v for k, v in KINDS.items() if low.startswith(k)), None)
    if found is None and (dialect := adbc_source.dialect_of(low)) is not None:
        return None, dialect.scheme
    return found


def _extension_loads(extension: str | None) -> bool:
    if extension is None:
        return False
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    try:
        con.execute(f"LOAD {extension}")
        return True
    except duckdb.Error:
        return False
    finally:
        con.close()


def _missing(db: str, extension: str | None, dialect) -> Exception:
    ways = []
    if extension:
        ways.append(f"DuckDB's {extension} extension (not installed, and duckask does not download extensions: "
                    f"install it once where there is internet, python -c \"import duckdb; duckdb.connect()."
                    f"install_extension('{extension}')\", for DuckDB {duckdb.__version__})")
    if dialect is not None:
        ways.append(f"the ADBC driver {dialect.pip} (pip install {dialect.pip}"
                    + (", or pip install 'duckask[postgres]')" if dialect.scheme == "postgresql" else ")"))
    return _fail(f"cannot read {redact(db)}: it needs " + " or ".join(ways) + "; or copy the data into a DuckDB "
                 "file and pass that")


def _attach_copy(db: str, extension: str, attach_type: str, tmp: Path) -> dict[str, int]:
    con = duckdb.connect(str(tmp), config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    try:
        con.execute(f"LOAD {extension}")
        quoted = db.replace("'", "''")
        con.execute(f"ATTACH '{quoted}' AS remote_src (TYPE {attach_type}, READ_ONLY)")
        row = con.execute("SELECT current_database()").fetchone()
        assert row is not None                      # a SELECT without FROM: always one row
        here = row[0].replace('"', '""')
        con.execute(f'COPY FROM DATABASE remote_src TO "{here}"')
        con.execute("DETACH remote_src")
        return {t: n for t, n in con.execute("SELECT table_name, estimated_size FROM duckdb_tables()").fetchall()}
    finally:
        con.close()


def _adbc_copy(db: str, dialect, tmp: Path, only: list[str] | None, say: Callable[[str], None],
               sample: int | None = None) -> tuple[dict[str, int], dict]:
    """Every table into ``tmp`` (rows per table, {}); with ``sample``, the live catalog instead: each table's
    structure and at most ``sample`` rows, and ``live_catalog.facts`` (rows, text values, names in the source)."""
    conn = adbc_source.connect(db, dialect)
    duck = duckdb.connect(str(tmp))
    try:
        tables = adbc_source.read_structure(conn, dialect, only)
        if not tables:
            raise ValueError("it has no tables" + (f" matching source_tables {only}" if only else ""))
        rows = adbc_source.copy_tables(conn, dialect, tables, duck, say, limit=sample)
        duck.execute("CHECKPOINT")
        return rows, (live_catalog.facts(conn, dialect, tables, say) if sample is not None else {})
    finally:
        duck.close()
        conn.close()


def source_rows(db: str) -> int | None:
    """How many rows the source holds in all, from its own catalog without a scan (Postgres: ``reltuples``, or
    for a table never analyzed its size at ~100 bytes a row); None for other engines or when it cannot say."""
    dialect = adbc_source.dialect_of(db)
    if dialect is None or dialect.scheme != "postgresql" or adbc_source.driver(dialect) is None:
        return None
    try:
        conn = adbc_source.connect(db, dialect, autocommit=True)
    except Exception:             # the driver's errors share no base: the open that follows says what is wrong
        return None
    try:
        cur = conn.cursor()
        cur.execute("SELECT coalesce(sum(CASE WHEN c.reltuples >= 0 THEN c.reltuples "
                    "ELSE pg_relation_size(c.oid) / 100 END), 0)::bigint FROM pg_class c "
                    "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'p', 'm') "
                    "AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'")
        return int(cur.fetchone()[0])
    except Exception:
        return None
    finally:
        conn.close()


def _read(db: str, target: Path, only: list[str] | None, say: Callable[[str], None], sample: int | None = None) -> dict:
    """Build ``target`` from the source through a temp file; DatabaseError (the old copy intact) on failure.
    ``sample``: a live source's catalog (``_adbc_copy``), never through a DuckDB extension."""
    kind = kind_of(db)
    assert kind is not None                         # snapshot, the only caller, refuses any other string
    extension, attach_type = kind
    dialect = adbc_source.dialect_of(db)
    use_extension = sample is None and _extension_loads(extension)
    if not use_extension and (dialect is None or adbc_source.driver(dialect) is None):
        raise _missing(db, extension if sample is None else None, dialect)
    tmp = target.with_name(f"{target.stem}.tmp{os.getpid()}.duckdb")
    started = time.time()
    live: dict = {}
    try:
        # use_extension: the extension loaded (so it is one); else the dialect was checked above
        rows, live = ((_attach_copy(db, cast(str, extension), attach_type, tmp), {}) if use_extension
                      else _adbc_copy(db, dialect, tmp, only, say, sample))
        os.replace(tmp, target)
    except Exception as e:      # the driver's, DuckDB's and a name clash: all said the same way
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        why = " ".join(str(e).split())[:300]
        raise _fail(f"cannot read {redact(db)}: {redact_error(why, db)}"
                    + ("; the copy read before is kept" if target.exists() else "")) from None
    finally:
        for p in (tmp, Path(f"{tmp}.wal")):
            p.unlink(missing_ok=True)
    via = f"duckdb {extension} extension" if use_extension else f"ADBC {cast(adbc_source.Dialect, dialect).pip}"
    meta = {"source": redact(db), "via": via,
            "read_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "seconds": round(time.time() - started, 2), "source_tables": only or [], "tables": rows,
            "credential": _credential(db), **({"live": live} if sample is not None else {})}
    target.with_suffix(".json").write_text(json.dumps(meta, indent=1))
    return meta


def _credential(db: str, salt: str | None = None) -> dict:
    """A salted, slow hash of the whole connection string: a copy is reused only for the same credentials (a
    wrong password never reads a copy made with the right one), and the side file never holds the password."""
    salt = salt or os.urandom(16).hex()
    return {"salt": salt, "pbkdf2_sha256": _slow_hash(db.strip(), salt)}


@functools.lru_cache(maxsize=32)
def _slow_hash(db: str, salt: str) -> str:
    """PBKDF2 (~0.1 s by design), once per string and salt in a process: every open of the database checks it."""
    return hashlib.pbkdf2_hmac("sha256", db.encode(), bytes.fromhex(salt), 200_000).hex()


def _same_credential(meta: dict, db: str) -> bool:
    kept = meta.get("credential") or {}
    try:
        return kept.get("pbkdf2_sha256") == _credential(db, kept["salt"])["pbkdf2_sha256"]
    except (KeyError, ValueError):
        return False


def about(target: Path) -> dict:
    """What a snapshot's side file says: source (redacted), via, read_at, seconds, tables; {} when none."""
    try:
        return json.loads(target.with_suffix(".json").read_text())
    except (OSError, ValueError):
        return {}


def snapshot(db: str, cache: Path, *, max_age_s: float = 0.0, refresh: bool = False,
             only: list[str] | None = None, say: Callable[[str], None] = lambda _m: None,
             sample: int | None = None) -> Path:
    """The DuckDB file in ``cache`` holding the remote database's tables (read by the rules above); with
    ``sample`` (a live source), its catalog: the tables' structure, at most ``sample`` rows each, and the
    facts its side file keeps (``live_catalog``), read and refreshed by the same rules."""
    kind = kind_of(db)
    if kind is None:
        raise _fail(f"{redact(db)} is not a connection string duckask reads (postgresql://, mysql://, md:, "
                    "sqlite://, snowflake://, bigquery://, flightsql+grpc://)")
    name = hashlib.sha256(redact(db).strip().encode()).hexdigest()[:16]      # never a hash of the password
    target = cache / f"{LIVE_PREFIX if sample is not None else ''}{kind[1]}-{name}.duckdb"
    cache.mkdir(parents=True, exist_ok=True)
    if target.exists() and not refresh:
        meta = about(target)
        same_tables = sorted(meta.get("source_tables", [])) == sorted(only or []) and _same_credential(meta, db)
        try:
            age = time.time() - dt.datetime.fromisoformat(meta["read_at"]).timestamp()
        except (KeyError, ValueError):
            age = float("inf")
        if same_tables and (not max_age_s or age < max_age_s):
            return target
        try:
            _read(db, target, only, say, sample)
        except Exception as e:
            if not same_tables:       # other tables or other credentials: never the old copy
                raise
            print(f"duckask: warning: {e}; answering from the copy read {age / 3600:.1f} h ago", file=sys.stderr)
        return target
    _read(db, target, only, say, sample)
    return target
