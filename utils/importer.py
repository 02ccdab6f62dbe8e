"""Build a DuckDB database file from user data.

Sources:

* a folder of ``*.csv``, ``*.csv.gz``, ``*.tsv``, ``*.tsv.gz`` and ``*.parquet`` files
  (or a single such file): one table per file, named after the file stem;
* a SQLite database file: one table per SQLite table, read with the stdlib
  ``sqlite3`` module (DuckDB's sqlite extension is not needed), declared column
  types mapped to DuckDB types, primary keys kept when the data allows, foreign
  keys recorded as column comments ("references other_table(col)").

This is the only place duckask writes a database. The file is built under a
temporary name next to ``out`` and renamed at the end, so a failed import never
leaves a half-built database behind.

Run on its own::

    python -m duckask.utils.importer SRC --out DB [--replace]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sqlite3
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

import duckdb
import pandas as pd

__all__ = [
    "ImportedTables",
    "add_arguments",
    "import_source",
    "main",
    "run",
    "sanitize_identifier",
]

log = logging.getLogger(__name__)

Comments = Mapping[str, Mapping[str, str]]
PrimaryKeys = Mapping[str, Sequence[str]]
Progress = Callable[[str], None]

TABLE_COMMENT_KEY = "__table__"
SQLITE_HEADER = b"SQLite format 3\x00"
SQLITE_BATCH_ROWS = 50_000

# Suffix -> DuckDB reader call template ({path} is an SQL string literal).
_READERS: dict[str, str] = {
    ".csv": "read_csv({path}, auto_detect=true, sample_size=-1)",
    ".csv.gz": "read_csv({path}, auto_detect=true, sample_size=-1)",
    ".tsv": "read_csv({path}, auto_detect=true, sample_size=-1, delim='\\t')",
    ".tsv.gz": "read_csv({path}, auto_detect=true, sample_size=-1, delim='\\t')",
    ".parquet": "read_parquet({path})",
}


class ImportedTables(list):
    """The names of the tables created (a plain ``list[str]``), plus ``notes``:
    human-readable remarks such as primary keys that were skipped."""

    def __init__(self, tables: Iterable[str] = (), notes: Iterable[str] = ()) -> None:
        super().__init__(tables)
        self.notes: list[str] = list(notes)


# --------------------------------------------------------------------------- names


def sanitize_identifier(name: str) -> str:
    """snake_case identifier: camelCase split, lowercase, non-alnum -> ``_``,
    leading digit prefixed with ``t_``. ``"AllstarFull"`` -> ``"allstar_full"``."""
    s = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name.strip())
    s = re.sub(r"[^0-9a-zA-Z]+", "_", s).strip("_").lower()
    s = re.sub(r"_+", "_", s)
    if not s:
        s = "table"
    if s[0].isdigit():
        s = "t_" + s
    return s


def _q(ident: str) -> str:
    """Quote an SQL identifier."""
    return '"' + ident.replace('"', '""') + '"'


def _lit(text: str) -> str:
    """SQL string literal (single quotes escaped)."""
    return "'" + text.replace("'", "''") + "'"


def _data_suffix(path: Path) -> str | None:
    name = path.name.lower()
    for suffix in sorted(_READERS, key=len, reverse=True):
        if name.endswith(suffix):
            return suffix
    return None


def _stem(path: Path, suffix: str) -> str:
    return path.name[: -len(suffix)]


def _is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(16) == SQLITE_HEADER
    except OSError:
        return False


# --------------------------------------------------------------------------- core


def import_source(
    src: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    replace: bool = False,
    comments: Comments | None = None,
    primary_keys: PrimaryKeys | None = None,
    progress: Progress | None = None,
    column_types: Mapping[str, Mapping[str, str]] | None = None,
) -> ImportedTables:
    """Build the DuckDB database ``out`` from ``src`` and return the table names.

    ``src`` is a folder of CSV/TSV/Parquet files, a single such file, or a SQLite
    database. ``comments`` is ``{table: {"__table__": text, column: text}}``;
    ``primary_keys`` is ``{table: [columns]}`` (table names as created, i.e.
    sanitized). A requested key is added only when the data is unique and not
    null on those columns; otherwise it is skipped and noted in the result's
    ``notes``. ``progress`` is called with one short message per step.
    ``column_types`` (``{table: {column: duckdb_type}}``) overrides detected
    types; values that do not cast become NULL.

    Raises ``ValueError`` for a missing source, a folder without data files or
    an unknown file type, and ``FileExistsError`` when ``out`` exists and
    ``replace`` is false.
    """
    src_path = Path(src).expanduser()
    out_path = Path(out).expanduser()
    if not src_path.exists():
        raise ValueError(f"source not found: {src_path}")
    if out_path.exists() and not replace:
        raise FileExistsError(
            f"{out_path} already exists; pass replace=True (--replace) to overwrite it"
        )
    if out_path.exists() and out_path.is_dir():
        raise ValueError(f"output path is a directory: {out_path}")
    if out_path.resolve() == src_path.resolve():
        raise ValueError("the output database cannot be the source itself")

    plan = _plan(src_path)  # validates the source before anything is written
    say: Progress = progress or (lambda _msg: None)
    keys = {k: list(v) for k, v in (primary_keys or {}).items()}
    types = {k: dict(v) for k, v in (column_types or {}).items()}

    out_path.parent.mkdir(parents=True, exist_ok=True)
    # Keep the .duckdb suffix so the usual *.duckdb ignore rules cover the temp file.
    tmp = out_path.with_name(f".{out_path.stem}.tmp-{os.getpid()}{out_path.suffix or '.duckdb'}")
    _remove_db_files(tmp)
    result = ImportedTables()
    try:
        con = duckdb.connect(str(tmp))
        try:
            _disable_type_pushdown(con)
            if plan[0] == "sqlite":
                fk_comments = _import_sqlite(con, plan[1], keys, types, result, say)
            else:
                fk_comments = {}
                for table, path, suffix in plan[1]:
                    reader = _READERS[suffix].format(path=_lit(str(path)))
                    _create_table(
                        con, table, f"SELECT * FROM {reader}", keys.get(table), result,
                        types.get(table),
                    )
                    say(f"loaded {table} ({_count(con, table):,} rows) from {path.name}")
            _apply_comments(con, _merge_comments(fk_comments, comments or {}), result)
            con.execute("CHECKPOINT")
        finally:
            con.close()
        if out_path.exists() and not replace:  # appeared while we were building
            raise FileExistsError(f"{out_path} already exists; pass replace=True to overwrite it")
        out_path.with_name(out_path.name + ".wal").unlink(missing_ok=True)  # stale WAL of the old file
        os.replace(tmp, out_path)
    except BaseException:
        _remove_db_files(tmp)
        raise
    for note in result.notes:
        log.warning("%s", note)
    say(f"wrote {out_path} ({len(result)} tables)")
    return result


def _plan(src: Path) -> tuple[str, object]:
    """Validate ``src`` and list what to import."""
    if src.is_dir():
        files = sorted(p for p in src.iterdir() if p.is_file() and _data_suffix(p))
        if not files:
            kinds = ", ".join(f"*{s}" for s in _READERS)
            raise ValueError(f"no data files ({kinds}) in folder {src}")
        return "files", _name_files(files)
    if _is_sqlite(src):
        return "sqlite", src
    if _data_suffix(src):
        return "files", _name_files([src])
    raise ValueError(
        f"unknown file type: {src.name} (expected a folder of CSV/TSV/Parquet files, "
        "a .csv/.csv.gz/.tsv/.parquet file, or a SQLite database)"
    )


def _name_files(files: list[Path]) -> list[tuple[str, Path, str]]:
    planned: list[tuple[str, Path, str]] = []
    seen: dict[str, Path] = {}
    for path in files:
        suffix = _data_suffix(path)
        assert suffix is not None
        table = sanitize_identifier(_stem(path, suffix))
        if table in seen:
            raise ValueError(
                f"{seen[table].name} and {path.name} would both become table {table!r}; "
                "rename one of them"
            )
        seen[table] = path
        planned.append((table, path, suffix))
    return planned


def _remove_db_files(path: Path) -> None:
    for p in (path, path.with_name(path.name + ".wal")):
        try:
            p.unlink()
        except FileNotFoundError:
            pass


def _disable_type_pushdown(con: duckdb.DuckDBPyConnection) -> None:
    """DuckDB 2.0 pushes TRY_CAST into the CSV reader as a hard cast, so a bad
    cell raises instead of becoming NULL (duckdb/duckdb#23818); turn that off."""
    try:
        con.execute("SET disabled_optimizers = 'type_pushdown'")
    except duckdb.Error:  # older DuckDB: no such optimizer, and no such bug
        pass


def _count(con: duckdb.DuckDBPyConnection, table: str) -> int:
    return con.execute(f"SELECT count(*) FROM {_q(table)}").fetchone()[0]


def _create_table(
    con: duckdb.DuckDBPyConnection,
    table: str,
    select_sql: str,
    pk: Sequence[str] | None,
    result: ImportedTables,
    types: Mapping[str, str] | None = None,
) -> None:
    """Create ``table`` from ``select_sql`` (with a PRIMARY KEY on ``pk`` when
    the data allows, ``types`` overriding column types) and append its name to
    ``result``."""
    columns = [(r[0], r[1]) for r in con.execute(f"DESCRIBE {select_sql}").fetchall()]
    if types:
        known = {c for c, _ in columns}
        for col in types:
            if col not in known:
                result.notes.append(f"type for unknown column {table}.{col} ignored")
        casts = [f"TRY_CAST({_q(c)} AS {t}) AS {_q(c)}" for c, t in types.items() if c in known]
        if casts:
            select_sql = f"SELECT * REPLACE ({', '.join(casts)}) FROM ({select_sql})"
            columns = [(r[0], r[1]) for r in con.execute(f"DESCRIBE {select_sql}").fetchall()]
    if pk:
        reason = _key_problem(con, select_sql, [c for c, _ in columns], pk)
        if reason:
            result.notes.append(f"{table}: primary key ({', '.join(pk)}) skipped: {reason}")
            pk = None
    defs = [f"{_q(c)} {t}" for c, t in columns]
    if pk:
        defs.append(f"PRIMARY KEY ({', '.join(_q(c) for c in pk)})")
    con.execute(f"CREATE TABLE {_q(table)} ({', '.join(defs)})")
    con.execute(f"INSERT INTO {_q(table)} SELECT * FROM ({select_sql})")
    result.append(table)


def _key_problem(
    con: duckdb.DuckDBPyConnection, select_sql: str, columns: list[str], pk: Sequence[str]
) -> str | None:
    """Why ``pk`` cannot be a primary key of the data, or None if it can."""
    missing = [c for c in pk if c not in columns]
    if missing:
        return f"no column {', '.join(missing)}"
    cols = ", ".join(_q(c) for c in pk)
    any_null = " OR ".join(f"{_q(c)} IS NULL" for c in pk)
    nulls = con.execute(f"SELECT count(*) FROM ({select_sql}) WHERE {any_null}").fetchone()[0]
    if nulls:
        return f"{nulls:,} rows have a NULL key"
    dups = con.execute(
        f"SELECT count(*) FROM (SELECT {cols} FROM ({select_sql}) GROUP BY {cols} HAVING count(*) > 1)"
    ).fetchone()[0]
    if dups:
        return f"{dups:,} key values occur more than once"
    return None


# --------------------------------------------------------------------------- comments


def _merge_comments(fk: Comments, user: Comments) -> dict[str, dict[str, str]]:
    """User comments, with foreign-key notes appended to the column's text."""
    merged: dict[str, dict[str, str]] = {t: dict(c) for t, c in user.items()}
    for table, cols in fk.items():
        target = merged.setdefault(table, {})
        for col, note in cols.items():
            target[col] = f"{target[col]}; {note}" if target.get(col) else note
    return merged


def _apply_comments(
    con: duckdb.DuckDBPyConnection, comments: Comments, result: ImportedTables
) -> None:
    tables = set(result)
    for table_key, cols in comments.items():
        table = table_key if table_key in tables else sanitize_identifier(table_key)
        if table not in tables:
            result.notes.append(f"comments for unknown table {table_key!r} ignored")
            continue
        existing = {
            r[0]
            for r in con.execute(
                "SELECT column_name FROM duckdb_columns() WHERE table_name = ? AND schema_name = 'main'",
                [table],
            ).fetchall()
        }
        for col, text in cols.items():
            if text is None:
                continue
            if col == TABLE_COMMENT_KEY:
                con.execute(f"COMMENT ON TABLE {_q(table)} IS {_lit(str(text))}")
            elif col in existing:
                con.execute(f"COMMENT ON COLUMN {_q(table)}.{_q(col)} IS {_lit(str(text))}")
            else:
                result.notes.append(f"comment for unknown column {table}.{col} ignored")


# --------------------------------------------------------------------------- sqlite


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


def _import_sqlite(
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
            _create_table(
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


# --------------------------------------------------------------------------- CLI


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register the import options on ``parser`` (for a ``duckask import`` subcommand)."""
    parser.add_argument(
        "src", metavar="SRC",
        help="folder of CSV/TSV/Parquet files, a single such file, or a SQLite database",
    )
    parser.add_argument("--out", "-o", required=True, metavar="DB", help="DuckDB file to write")
    parser.add_argument(
        "--replace", action="store_true", help="overwrite DB if it already exists"
    )
    parser.add_argument(
        "--comments", metavar="FILE",
        help='YAML/JSON file {table: {"__table__": "...", column: "..."}} of descriptions',
    )
    parser.add_argument(
        "--primary-key", action="append", default=[], metavar="TABLE=COL[,COL...]",
        help="add a primary key if the data allows it (repeatable)",
    )
    parser.add_argument("--quiet", "-q", action="store_true", help="print only errors")
    return parser


def _load_comments(path: str) -> Comments:
    text = Path(path).read_text(encoding="utf-8")
    if path.lower().endswith(".json"):
        data = json.loads(text)
    else:
        import yaml

        data = yaml.safe_load(text)
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise ValueError(f"{path}: expected a mapping of table -> {{column: description}}")
    return {str(t): {str(c): str(d) for c, d in cols.items()} for t, cols in data.items()}


def _parse_keys(specs: Sequence[str]) -> dict[str, list[str]]:
    keys: dict[str, list[str]] = {}
    for spec in specs:
        table, sep, cols = spec.partition("=")
        names = [c.strip() for c in cols.split(",") if c.strip()]
        if not sep or not table.strip() or not names:
            raise ValueError(f"bad --primary-key {spec!r}; expected TABLE=COL[,COL...]")
        keys[table.strip()] = names
    return keys


def run(args: argparse.Namespace) -> int:
    """Run an import from parsed arguments; print errors, return an exit code."""
    echo: Progress = (lambda _m: None) if args.quiet else (lambda m: print(m, file=sys.stderr))
    try:
        comments = _load_comments(args.comments) if args.comments else None
        tables = import_source(
            args.src,
            args.out,
            replace=args.replace,
            comments=comments,
            primary_keys=_parse_keys(args.primary_key),
            progress=echo,
        )
    except (ValueError, OSError, duckdb.Error) as exc:
        print(f"duckask import: error: {exc}", file=sys.stderr)
        return 1
    for note in tables.notes:
        echo(f"note: {note}")
    if not args.quiet:
        print(f"{args.out}: {len(tables)} tables: {', '.join(tables)}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m duckask.utils.importer",
        description="Build a DuckDB database from a folder of CSV/Parquet files or a SQLite file.",
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
