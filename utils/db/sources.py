"""Where a database comes from: the DuckDB file to open read-only for what the user named.

``resolve_db_file(db)`` accepts
- a DuckDB file: itself;
- a DuckDB ``EXPORT DATABASE`` folder (schema.sql + load.sql): imported once into a cached DuckDB file
  (keyed by the folder's contents);
- a SQLite file: converted once through Python's sqlite3 (``duckask.utils.db.importer``) into the cache;
- a connection string (postgresql://, mysql://, md:, or an ADBC driver's: sqlite://, snowflake://, ...): its
  snapshot (``remote.snapshot``: read again by age, ``source_max_age_s``, or ``duckask import URL --refresh``);
  asked live (``live_source``: ``source_mode``), the snapshot holds its catalog and a few rows a table, and
  ``database.open_database`` gives the database a ``live.LiveEngine`` that runs the queries in the source.

A cached file is built through a temp file, so a crash never leaves a half-built database. Messages
never carry a password (``remote.redact``).
"""
from __future__ import annotations

import functools
import hashlib
import os
import sys
from pathlib import Path

import duckdb

from duckask.utils.config import Settings, load_settings
from duckask.utils.db import adbc_source, remote
from duckask.utils.db.errors import DatabaseError
from duckask.utils.db.remote import LIVE_PREFIX  # noqa: F401 (re-exported)
from duckask.utils.db.sqlite_source import is_sqlite_file


def fingerprint(paths: list[Path]) -> str:
    """What identifies the files' state: names, sizes and modification times (a cache key)."""
    h = hashlib.sha256()
    for p in sorted(paths):
        st = p.stat()
        h.update(f"{p.name}:{st.st_size}:{st.st_mtime_ns};".encode())
    return h.hexdigest()[:16]


def is_export_dir(path: Path) -> bool:
    return path.is_dir() and (path / "schema.sql").is_file() and (path / "load.sql").is_file()


def _build_cached(target: Path, build) -> Path:
    """Build ``target`` through a temp file so a crash never leaves a half-built database."""
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"{target.stem}.tmp{os.getpid()}.duckdb")
    try:
        build(tmp)
        os.replace(tmp, target)
    finally:
        for p in (tmp, Path(str(tmp) + ".wal")):
            if p.exists():
                p.unlink()
    return target


def _progress():
    """Each table as it is read, on a terminal (a first read of a large database takes a while); else silent."""
    if not sys.stderr.isatty():
        return lambda _m: None
    return lambda m: print(f"  … {m}", file=sys.stderr, flush=True)


def live_source(db: str, settings: Settings) -> bool:
    """Whether the connection string ``db`` is asked live (its engine runs the queries) rather than copied:
    ``source_mode`` live; or auto and the source holds more than ``source_live_rows`` rows (Postgres's own
    estimate; an engine that gives none is copied). Live needs an ADBC driver (``adbc_source``)."""
    if settings.source_mode == "copy":
        return False
    dialect = adbc_source.dialect_of(db)
    usable = dialect is not None and adbc_source.driver(dialect) is not None
    if settings.source_mode == "live":
        if not usable:
            raise DatabaseError(f"source_mode live asks {remote.redact(db)} through an ADBC driver, and "
                                + (f"{dialect.pip} is not installed (pip install {dialect.pip})" if dialect else
                                   "this kind of source has none (postgresql://, sqlite://, snowflake://, bigquery://, "
                                   "flightsql+grpc:// have): use source_mode copy"))
        return True
    rows = _source_rows(db) if usable else None
    return rows is not None and rows > settings.source_live_rows


@functools.lru_cache(maxsize=16)
def _source_rows(db: str) -> int | None:
    """The source's rows in all (Postgres's ``reltuples``; once per process and source), or None."""
    return remote.source_rows(db)


def resolve_db_file(db: str | os.PathLike, settings: Settings | None = None) -> Path:
    """The DuckDB file to open read-only for ``db`` (a folder, SQLite or remote database: a cached copy; a live
    source: its catalog, named ``LIVE_PREFIX...``)."""
    settings = settings or load_settings()
    if remote.kind_of(str(db)):
        live = live_source(str(db), settings)
        return remote.snapshot(str(db), settings.resolved_cache_dir / "remote", max_age_s=settings.source_max_age_s,
                               only=settings.source_tables or None, say=_progress(),
                               sample=settings.source_sample_rows if live else None)
    path = Path(db).expanduser().resolve()
    if not path.exists():
        raise DatabaseError(f"database not found: {remote.redact(str(path))}")
    cache = settings.resolved_cache_dir / "imports"
    if path.is_dir():
        if not is_export_dir(path):
            raise DatabaseError(f"{path} is a folder but not a DuckDB EXPORT DATABASE (schema.sql + load.sql); "
                                "for a folder of CSV/Parquet files run `duckask import` first")
        files = [p for p in path.iterdir() if p.is_file()]
        target = cache / f"{path.name}-{fingerprint(files)}.duckdb"

        def build(tmp: Path) -> None:
            con = duckdb.connect(str(tmp))
            try:
                quoted = str(path).replace("'", "''")
                con.execute(f"IMPORT DATABASE '{quoted}'")
                con.execute("CHECKPOINT")
            finally:
                con.close()

        return _build_cached(target, build)
    if is_sqlite_file(path):
        target = cache / f"{path.stem}-{fingerprint([path])}.duckdb"

        def build_sqlite(tmp: Path) -> None:
            from duckask.utils.db.importer import import_source

            import_source(path, tmp, replace=True)

        return _build_cached(target, build_sqlite)
    return path


def refresh_live(db: str, settings: Settings) -> Path:
    """Read a live source's catalog again now (after a change of its structure)."""
    return remote.snapshot(db, settings.resolved_cache_dir / "remote", refresh=True,
                           only=settings.source_tables or None, sample=settings.source_sample_rows)
