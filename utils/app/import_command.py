"""``duckask import``: a folder of CSV/TSV/Parquet files, a single such file or a SQLite file into a DuckDB file
(``importer.import_source``), ``airtable BASE_ID`` (``airtable``), or a connection string's local copy read (again)
(``remote.snapshot``). Arguments, dispatch, messages and exit codes; the building is done below it.

Run on its own::

    python -m duckask.utils.app.import_command SRC --out DB [--replace]     (the same as ``duckask import``)
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import duckdb

from duckask.utils.db.importer import import_source
from duckask.utils.db.table_builder import Comments, Progress
from duckask.utils.semantic import airtable


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
    """``python -m duckask.utils.app.import_command ...``: the same options and exit codes as ``duckask import``."""
    parser = add_arguments(argparse.ArgumentParser(prog="duckask import", description="Build a DuckDB file "
                                                   "from a folder of CSV/Parquet files or a SQLite file."))
    return run_command(parser.parse_args(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    raise SystemExit(main())
