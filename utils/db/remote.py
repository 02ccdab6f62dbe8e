"""Other databases through DuckDB's own extensions: ``--db postgres://...``, ``mysql://...``, ``md:...``.

duckask answers from a locked-down read-only DuckDB file (no external access), so a remote database is
read through a read-only ATTACH with the matching extension and copied into a snapshot file in the
cache, which is then opened like any other database (``sources.resolve_db_file``). The password (or a
MotherDuck token) in the connection string is never shown: every message and the database's name
carry ``redact(db)``.

duckask never downloads an extension (autoinstall is off): where the extension is not installed, the
error names it and says how to install it. This machine cannot (no internet, and PyPI's
``duckdb-extension-<name>`` wheels exist only for DuckDB 1.x), so here only that error path runs.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

import duckdb

#: scheme prefix -> (extension, ATTACH type)
KINDS = {"postgres://": ("postgres", "postgres"), "postgresql://": ("postgres", "postgres"),
         "mysql://": ("mysql", "mysql"), "md:": ("motherduck", "motherduck"),
         "motherduck:": ("motherduck", "motherduck")}
#: Keys whose value is a secret, in a URL's query (``?password=...``) or a libpq ``key=value`` string.
_SECRET_KEYS = r"(?:password|passwd|pwd|sslpassword|sslkey_password|motherduck_token|token|secret|api_key)"
#: A URL's query value runs to ``&`` or ``#`` (spaces included); a libpq value is quoted or has no space.
_IN_URL = re.compile(rf"(?i)(\b{_SECRET_KEYS}\s*=)([^&#]*)")
_IN_LIBPQ = re.compile(rf"(?i)(\b{_SECRET_KEYS}\s*=\s*)('(?:[^'\\]|\\.)*'?|\"[^\"]*\"?|\S+)")
_SCHEME = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://|md:|motherduck:)", re.I)


def _fail(message: str) -> Exception:
    """A ``DatabaseError`` (what every caller catches) saying what cannot be read and how to fix it."""
    from duckask.utils.db.sources import DatabaseError  # here: sources imports this module

    return DatabaseError(message)


def kind_of(db: str) -> tuple[str, str] | None:
    """(extension, ATTACH type) for a connection string, or None for a file or folder."""
    low = str(db).strip().lower()
    return next((v for k, v in KINDS.items() if low.startswith(k)), None)


def redact(db: str) -> str:
    """The connection string with every password or token replaced by ``***``: a URL's password (up to the
    *last* ``@``, so one with ``@``, ``:``, ``/`` or spaces in it is hidden whole; a host hidden with it is
    the safe mistake), ``password=`` / ``token=`` values in its query or in a libpq ``key=value`` string
    (quoted values too). The one redaction: every displayed name and message goes through it."""
    out = str(db)
    scheme = _SCHEME.match(out)
    if not scheme:
        return _IN_LIBPQ.sub(lambda m: m.group(1) + "***", out)
    rest = out[scheme.end():]
    at = rest.rfind("@")
    if at > 0 and ":" in rest[:at]:
        rest = f"{rest[:at].split(':', 1)[0]}:***@{rest[at + 1:]}"
    return out[:scheme.end()] + _IN_URL.sub(lambda m: m.group(1) + "***", rest)


def _load(con: duckdb.DuckDBPyConnection, extension: str, db: str) -> None:
    try:
        con.execute(f"LOAD {extension}")
    except duckdb.Error as e:
        raise _fail(
            f"cannot read {redact(db)}: DuckDB's {extension} extension is not installed, and duckask does not "
            f"download extensions. Install it once where there is internet (python -c \"import duckdb; "
            f"duckdb.connect().install_extension('{extension}')\", for DuckDB {duckdb.__version__}), or copy the "
            f"data into a DuckDB file and pass that ({str(e).splitlines()[0][:120]})") from None


def snapshot(db: str, cache: Path) -> Path:
    """A DuckDB file in ``cache`` holding every table of the remote database, read through a read-only
    ATTACH (the copy is made once per connection string; delete it to read the source again)."""
    found = kind_of(db)
    if found is None:
        raise _fail(f"{redact(db)} is not a postgres://, mysql:// or md: connection string")
    extension, attach_type = found
    name = hashlib.sha256(db.encode()).hexdigest()[:16]
    target = cache / f"{attach_type}-{name}.duckdb"
    if target.exists():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp")
    con = duckdb.connect(str(tmp), config={"autoinstall_known_extensions": False,
                                           "autoload_known_extensions": False})
    try:
        _load(con, extension, db)
        quoted = db.replace("'", "''")
        try:
            con.execute(f"ATTACH '{quoted}' AS remote_src (TYPE {attach_type}, READ_ONLY)")
            here = con.execute("SELECT current_database()").fetchone()[0].replace('"', '""')
            con.execute(f'COPY FROM DATABASE remote_src TO "{here}"')
        except duckdb.Error as e:
            raise _fail(f"cannot read {redact(db)}: {redact(str(e).splitlines()[0])}") from None
    finally:
        con.close()
    tmp.replace(target)
    return target
