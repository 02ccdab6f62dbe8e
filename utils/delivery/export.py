"""Write a result table (a pandas DataFrame) to a file: CSV, Parquet, JSON or XLSX.

duckask's own process writes the file, never the model's SQL (its connections cannot touch files).
``export_frame(df, path, fmt=None)`` takes the format from ``fmt`` or the file's suffix and writes
atomically: to a temp file in the same folder, then ``os.replace``, so a failed write never leaves a
half-written file or clobbers an existing one. ``frame_bytes(df, fmt)`` gives a file's bytes and its
media type (an HTTP download, an email attachment).

- CSV: pandas, no index column;
- Parquet and JSON: DuckDB (an in-memory connection, ``COPY``), so numbers stay exact and pyarrow is
  not needed; JSON is one array of row objects, dates as ISO strings, time zones in UTC;
- XLSX: pandas + openpyxl (``pip install 'duckask[export]'``); tz-aware times become naive UTC.

Run on its own::

    python -m duckask.utils.delivery.export --db PATH "SELECT * FROM people" people.parquet
"""
from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import os
import sys
import tempfile
import uuid
from pathlib import Path

import duckdb
import pandas as pd

from duckask.utils.db.database import DatabaseError, open_database
from duckask.utils.db.quoting import quote_literal

FORMATS = ("csv", "parquet", "json", "xlsx")
SUFFIXES = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet", ".json": "json", ".xlsx": "xlsx"}
MEDIA_TYPES = {"csv": "text/csv", "parquet": "application/vnd.apache.parquet", "json": "application/json",
               "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"}

#: How a missing value shows in every table a person reads (text, rich, HTML, email; the page's script too).
NULL = "NULL"


def nulls_shown(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` for reading: every missing value (None, NaN, NA, NaT, whatever pandas made of DuckDB's NULL) as
    ``NULL``; never NaN, NaT or None."""
    return df.astype(object).where(df.notna(), NULL)


class ExportError(ValueError):
    """The result could not be written; the message says what was wrong and what to do."""


def format_for(path: str | os.PathLike, fmt: str | None = None) -> str:
    """The format named by ``fmt``, else by the file's suffix."""
    if fmt:
        if fmt.lower() not in FORMATS:
            raise ExportError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
        return fmt.lower()
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise ExportError(f"cannot tell the format of {os.fspath(path)!r} from its suffix {suffix or '(none)'!r}: "
                          f"name the file .csv, .parquet (.pq), .json or .xlsx, or give the format "
                          f"({', '.join(FORMATS)})")
    return SUFFIXES[suffix]


def _duckdb_copy(df: pd.DataFrame, target: Path, options: str) -> None:
    with duckdb.connect() as con:
        con.execute("SET TimeZone = 'UTC'")   # tz-aware values are written in UTC, whatever the host's zone
        con.register("frame", df)
        con.execute(f"COPY frame TO {quote_literal(str(target))} ({options})")


def _naive_utc(df: pd.DataFrame) -> pd.DataFrame:
    """Excel cannot hold time zones: tz-aware datetimes become naive UTC."""
    def naive(v):
        return v.astimezone(dt.timezone.utc).replace(tzinfo=None) if isinstance(v, dt.datetime) and v.tzinfo else v

    out = df.copy()
    for col, dtype in df.dtypes.items():
        if isinstance(dtype, pd.DatetimeTZDtype):
            out[col] = df[col].dt.tz_convert(None)
        elif pd.api.types.is_object_dtype(dtype):
            out[col] = df[col].map(naive)
    return out


def _write_xlsx(df: pd.DataFrame, target: Path) -> None:
    if importlib.util.find_spec("openpyxl") is None:   # pandas' xlsx engine
        raise ExportError("xlsx needs openpyxl: pip install 'duckask[export]'")
    _naive_utc(df).to_excel(target, index=False, engine="openpyxl")


WRITERS = {
    "csv": lambda df, target: df.to_csv(target, index=False),
    "parquet": lambda df, target: _duckdb_copy(df, target, "FORMAT parquet"),
    "json": lambda df, target: _duckdb_copy(df, target, "FORMAT json, ARRAY true"),
    "xlsx": _write_xlsx,
}


def export_frame(df: pd.DataFrame, path: str | os.PathLike, fmt: str | None = None) -> Path:
    """Write ``df`` to ``path`` (format from ``fmt`` or the suffix) atomically; returns the absolute path."""
    path = Path(path).expanduser().absolute()
    fmt = format_for(path, fmt)
    if path.is_dir():
        raise ExportError(f"{path} is a folder: give a file name, such as {path / ('result.' + fmt)}")
    if not path.parent.is_dir():
        raise ExportError(f"the folder {path.parent} does not exist: create it first or write somewhere else")
    # A fresh name in the same folder (so os.replace is atomic); the writer creates it, with the usual mode.
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        WRITERS[fmt](df, tmp)
        os.replace(tmp, path)
    except ExportError:
        tmp.unlink(missing_ok=True)
        raise
    except Exception as e:
        tmp.unlink(missing_ok=True)
        raise ExportError(f"could not write {path} as {fmt}: {e}") from e
    return path


def frame_bytes(df: pd.DataFrame, fmt: str) -> tuple[bytes, str]:
    """The bytes of ``df`` written as ``fmt``, and their media type."""
    fmt = format_for(f"result.{fmt}", fmt)
    with tempfile.TemporaryDirectory(prefix="duckask-export-") as folder:
        return export_frame(df, Path(folder) / f"result.{fmt}", fmt).read_bytes(), MEDIA_TYPES[fmt]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Run one query through duckask's safe executor and write the "
                                             "result to a file.")
    ap.add_argument("--db", required=True)
    ap.add_argument("--format", choices=FORMATS, help="default: from OUT's suffix")
    ap.add_argument("sql")
    ap.add_argument("out", help="the file to write (.csv, .parquet, .json, .xlsx)")
    args = ap.parse_args(argv)
    try:
        format_for(args.out, args.format)   # a bad name fails before the query runs
        outcome = open_database(args.db).run(args.sql)
        if not outcome.ok:
            print(outcome.error, file=sys.stderr)
            return 2
        path = export_frame(outcome.df, args.out, args.format)
    except (ExportError, DatabaseError) as e:
        print(e, file=sys.stderr)
        return 2
    assert outcome.df is not None               # an ok outcome holds its rows
    print(f"{path}  ({len(outcome.df)} rows)")
    if outcome.truncated:
        print(f"warning: the result was cut at the row cap ({len(outcome.df)} rows)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
