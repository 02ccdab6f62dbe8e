"""Reading a SQLite file into DuckDB through Python's sqlite3 (DuckDB's sqlite extension cannot be
downloaded here): declared column types mapped to DuckDB types, primary keys kept when the data
allows, foreign keys recorded as column comments ("references other_table(col)")."""
from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path

import duckdb
import pandas as pd

from duckask.utils.db.quoting import quote_ident as _q
from duckask.utils.db.table_builder import ImportedTables, Progress, create_table, sanitize_identifier

SQLITE_MAGIC = b"SQLite format 3\x00"
SQLITE_BATCH_ROWS = 50_000


def is_sqlite_file(path: Path) -> bool:
    """Whether ``path`` starts with SQLite's 16-byte header (False when it cannot be read)."""
    try:
        with Path(path).open("rb") as fh:
            return fh.read(16) == SQLITE_MAGIC
    except OSError:
        return False


def sqlite_type_to_duckdb(declared: str | None) -> str:
    """Map a SQLite declared column type to a DuckDB type."""
    t = (declared or "").upper()
    if "INT" in t:
        return "BIGINT"
    if any(k in t for k in ("REAL", "FLOA", "DOUB", "DEC", "NUMERIC")):
        return "DOUBLE"
    if "BOOL" in t:
        return "BOOLEAN"
    if "DATETIME" in t or "TIMESTAMP" in t:
        return "TIMESTAMP"
    if "DATE" in t:
        return "DATE"
    if "BLOB" in t:
        return "BLOB"
    return "VARCHAR"


def import_sqlite(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    keys: dict[str, list[str]],
    types: dict[str, dict[str, str]],
    result: ImportedTables,
    say: Progress,
) -> dict[str, dict[str, str]]:
    """Copy every SQLite table into ``con``; return foreign-key column comments."""
    uri = path.resolve().as_uri() + "?mode=ro"
    try:
        lite = sqlite3.connect(uri, uri=True)
        names = [
            r[0]
            for r in lite.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' "
                "AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        ]
    except sqlite3.DatabaseError as exc:
        raise ValueError(f"cannot read SQLite database {path}: {exc}") from exc
    if not names:
        lite.close()
        raise ValueError(f"SQLite database {path} has no tables")

    table_of: dict[str, str] = {}
    for name in names:
        new = sanitize_identifier(name)
        if new in table_of.values():
            raise ValueError(f"SQLite tables would collide as {new!r}; rename one of them")
        table_of[name] = new

    fk_comments: dict[str, dict[str, str]] = {}
    try:
        for name in names:
            table = table_of[name]
            info = lite.execute(f"PRAGMA table_info({_q(name)})").fetchall()
            cols = [(r[1], sqlite_type_to_duckdb(r[2])) for r in info]
            declared_pk = [r[1] for r in sorted((r for r in info if r[5]), key=lambda r: r[5])]
            pk = keys.get(table, declared_pk)
            try:
                rows = _copy_sqlite_table(con, lite, name, cols)
            except sqlite3.DatabaseError as exc:  # e.g. a virtual table whose module is missing
                con.execute(f"DROP TABLE IF EXISTS {_q('__duckask_stage')}")
                result.notes.append(f"SQLite table {name} skipped: {exc}")
                continue
            casts = ", ".join(_cast_expr(c, t) for c, t in cols)
            create_table(
                con, table, f"SELECT {casts} FROM {_q('__duckask_stage')}", pk, result,
                types.get(table),
            )
            con.execute(f"DROP TABLE {_q('__duckask_stage')}")
            say(f"loaded {table} ({rows:,} rows) from SQLite table {name}")
            for col, note in _sqlite_fk_notes(lite, name, table_of).items():
                fk_comments.setdefault(table, {})[col] = note
    finally:
        lite.close()
    return fk_comments


def _copy_sqlite_table(
    con: duckdb.DuckDBPyConnection,
    lite: sqlite3.Connection,
    name: str,
    cols: list[tuple[str, str]],
) -> int:
    """Load a SQLite table into a temp staging table of text (or BLOB) columns."""
    stage_types = ["BLOB" if t == "BLOB" else "VARCHAR" for _, t in cols]
    defs = ", ".join(f"{_q(c)} {t}" for (c, _), t in zip(cols, stage_types))
    con.execute(f"CREATE TEMP TABLE {_q('__duckask_stage')} ({defs})")
    select = ", ".join(_q(c) for c, _ in cols)
    cursor = lite.execute(f"SELECT {select} FROM {_q(name)}")
    frame_cols = [f"c{i}" for i in range(len(cols))]
    total = 0
    while True:
        batch = cursor.fetchmany(SQLITE_BATCH_ROWS)
        if not batch:
            break
        rows = [
            [_stage_value(v, st) for v, st in zip(row, stage_types)] for row in batch
        ]
        frame = pd.DataFrame(rows, columns=frame_cols, dtype=object)
        con.register("__duckask_batch", frame)
        try:
            con.execute(
                f"INSERT INTO {_q('__duckask_stage')} SELECT "
                + ", ".join(f"CAST({c} AS {t})" for c, t in zip(frame_cols, stage_types))
                + " FROM __duckask_batch"
            )
        finally:
            con.unregister("__duckask_batch")
        total += len(batch)
    return total


def _stage_value(value: object, stage_type: str) -> object:
    if value is None:
        return None
    if stage_type == "BLOB":
        return value if isinstance(value, bytes) else str(value).encode()
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value if isinstance(value, str) else str(value)


def _cast_expr(col: str, duck_type: str) -> str:
    if duck_type in ("VARCHAR", "BLOB"):
        return _q(col)
    return f"TRY_CAST({_q(col)} AS {duck_type}) AS {_q(col)}"


def _sqlite_fk_notes(
    lite: sqlite3.Connection, name: str, table_of: Mapping[str, str]
) -> dict[str, str]:
    """``{column: "references other(col)"}`` from PRAGMA foreign_key_list."""
    notes: dict[str, list[str]] = {}
    for _id, seq, parent, src_col, dst_col, *_ in lite.execute(
        f"PRAGMA foreign_key_list({_q(name)})"
    ).fetchall():
        if dst_col is None:  # implicit: the parent's primary key
            pk = [
                r[1]
                for r in sorted(
                    (r for r in lite.execute(f"PRAGMA table_info({_q(parent)})") if r[5]),
                    key=lambda r: r[5],
                )
            ]
            dst_col = pk[seq] if seq < len(pk) else "rowid"
        target = table_of.get(parent, sanitize_identifier(parent))
        notes.setdefault(src_col, []).append(f"references {target}({dst_col})")
    return {col: "; ".join(v) for col, v in notes.items()}
