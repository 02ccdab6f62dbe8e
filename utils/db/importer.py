"""Build a DuckDB database file from user data.

Sources:

* a folder of ``*.csv``, ``*.csv.gz``, ``*.tsv``, ``*.tsv.gz`` and ``*.parquet`` files
  (or a single such file): one table per file, named after the file stem;
* a SQLite database file: one table per SQLite table, read with the stdlib
  ``sqlite3`` module (DuckDB's sqlite extension is not needed), declared column
  types mapped to DuckDB types, primary keys kept when the data allows, foreign
  keys recorded as column comments ("references other_table(col)");
* ``airtable BASE_ID``: an Airtable base, read through its REST API (``utils/airtable``, which also
  refreshes an import).

Only the importers write a database file. The file is built under a
temporary name next to ``out`` and renamed at the end, so a failed import never
leaves a half-built database behind.

The command (``duckask import``, with the Airtable and connection-string forms) is ``import_command``; this
module is the library it and the demo build call, and imports nothing of them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import duckdb

from duckask.utils.db.quoting import quote_literal as _lit
from duckask.utils.db.sqlite_source import import_sqlite, is_sqlite_file
from duckask.utils.db.table_builder import (
    TABLE_COMMENT_KEY,
    Comments,
    ImportedTables,
    PrimaryKeys,
    Progress,
    apply_comments,
    count_rows,
    create_table,
    merge_comments,
    sanitize_identifier,
)

__all__ = ["TABLE_COMMENT_KEY", "ImportedTables", "import_source", "sanitize_identifier"]

log = logging.getLogger(__name__)

# Suffix -> DuckDB reader call template ({path} is an SQL string literal).
_READERS: dict[str, str] = {
    ".csv": "read_csv({path}, auto_detect=true, sample_size=-1)",
    ".csv.gz": "read_csv({path}, auto_detect=true, sample_size=-1)",
    ".tsv": "read_csv({path}, auto_detect=true, sample_size=-1, delim='\\t')",
    ".tsv.gz": "read_csv({path}, auto_detect=true, sample_size=-1, delim='\\t')",
    ".parquet": "read_parquet({path})",
}


def _data_suffix(path: Path) -> str | None:
    name = path.name.lower()
    for suffix in sorted(_READERS, key=len, reverse=True):
        if name.endswith(suffix):
            return suffix
    return None


def _stem(path: Path, suffix: str) -> str:
    return path.name[: -len(suffix)]


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
                fk_comments = import_sqlite(con, plan[1], keys, types, result, say)
            else:
                fk_comments = {}
                for table, path, suffix in plan[1]:
                    reader = _READERS[suffix].format(path=_lit(str(path)))
                    create_table(
                        con, table, f"SELECT * FROM {reader}", keys.get(table), result,
                        types.get(table),
                    )
                    say(f"loaded {table} ({count_rows(con, table):,} rows) from {path.name}")
            apply_comments(con, merge_comments(fk_comments, comments or {}), result)
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


def _plan(src: Path) -> tuple[Literal["sqlite"], Path] | tuple[Literal["files"], list[tuple[str, Path, str]]]:
    """Validate ``src`` and list what to import."""
    if src.is_dir():
        files = sorted(p for p in src.iterdir() if p.is_file() and _data_suffix(p))
        if not files:
            kinds = ", ".join(f"*{s}" for s in _READERS)
            raise ValueError(f"no data files ({kinds}) in folder {src}")
        return "files", _name_files(files)
    if is_sqlite_file(src):
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
