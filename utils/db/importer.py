"""Build a DuckDB database file from user data.

Sources:

* a folder of ``*.csv``, ``*.csv.gz``, ``*.tsv``, ``*.tsv.gz`` and ``*.parquet`` files
  (or a single such file): one table per file, named after the file stem;
* a SQLite database file: one table per SQLite table, read with the stdlib
  ``sqlite3`` module (DuckDB's sqlite extension is not needed), declared column
  types mapped to DuckDB types, primary keys kept when the data allows, foreign
  keys recorded as column comments ("references other_table(col)");
* ``airtable BASE_ID``: an Airtable base, read through its REST API (``utils/db/airtable``, which also
  refreshes an import).

Only the importers write a database file. The file is built under a
temporary name next to ``out`` and renamed at the end, so a failed import never
leaves a half-built database behind.

Run on its own::

    python -m duckask.utils.db.importer SRC --out DB [--replace]     (the same as ``duckask import``)
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import duckdb

from duckask.utils.db import airtable
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

__all__ = ["TABLE_COMMENT_KEY", "ImportedTables", "import_source", "main", "sanitize_identifier"]

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


def _plan(src: Path) -> tuple[str, object]:
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


# --------------------------------------------------------------------------- the command
def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register the import options on ``parser`` (for a ``duckask import`` subcommand)."""
    parser.add_argument(
        "src", metavar="SRC",
        help="folder of CSV/TSV/Parquet files, a single such file, a SQLite database, the word airtable, or a "
             "connection string (postgresql://...: its local copy is read, --refresh: read again now)",
    )
    parser.add_argument("base", nargs="?", metavar="BASE_ID", help="with SRC airtable: the base id (starts with app)")
    parser.add_argument("--out", "-o", metavar="DB", help="DuckDB file to write (for a connection string: optional, "
                        "a copy of its local copy)")
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
    airtable.add_arguments(parser)
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


def run_command(args) -> int:
    """Run an import from parsed arguments (``add_arguments``); print errors, return an exit code."""
    from duckask.utils.db import remote

    if remote.kind_of(args.src):
        return _import_remote(args)
    if not args.out:
        print("duckask import: error: --out DB is needed (the DuckDB file to write)", file=sys.stderr)
        return 2
    if args.src == "airtable" and not Path("airtable").exists():
        return airtable.run_command(args)
    if args.base or args.refresh or args.full or args.endpoint:
        print("duckask import: error: BASE_ID, --refresh, --full and --endpoint are for `duckask import airtable` "
              "(--refresh also for a connection string)",
              file=sys.stderr)
        return 2
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


def _import_remote(args) -> int:
    """``duckask import URL [--refresh] [--out DB]``: read (or read again) the local copy ``--db URL`` answers
    from; with ``--out``, also write it to DB."""
    import shutil

    from duckask.utils.config import load_settings
    from duckask.utils.db import remote
    from duckask.utils.db.sources import DatabaseError

    echo: Progress = (lambda _m: None) if args.quiet else (lambda m: print(m, file=sys.stderr))
    settings = load_settings()
    try:
        path = remote.snapshot(args.src, settings.resolved_cache_dir / "remote", max_age_s=settings.source_max_age_s,
                               refresh=args.refresh, only=settings.source_tables or None, say=echo)
        if args.out:
            if Path(args.out).exists() and not args.replace:
                raise DatabaseError(f"{args.out} exists; pass --replace to overwrite it")
            shutil.copyfile(path, args.out)
    except (DatabaseError, OSError) as exc:
        print(f"duckask import: error: {exc}", file=sys.stderr)
        return 1
    meta = remote.about(path)
    tables = meta.get("tables", {})
    if not args.quiet:
        print(f"{meta.get('source')}: {len(tables)} tables ({sum(tables.values()):,} rows) read {meta.get('read_at')} "
              f"through {meta.get('via')} in {meta.get('seconds')} s, kept in {path}"
              + (f", written to {args.out}" if args.out else ""))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m duckask.utils.db.importer ...``: the same options and exit codes as ``duckask import``."""
    parser = add_arguments(argparse.ArgumentParser(prog="duckask import", description="Build a DuckDB file "
                                                   "from a folder of CSV/Parquet files or a SQLite file."))
    return run_command(parser.parse_args(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    raise SystemExit(main())
