"""Creating tables in a database being built by the importer: names, primary keys when the data
allows them, and comments. Shared by the file importer and the SQLite reader."""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

import duckdb

from duckask.utils.db.quoting import quote_ident as _q
from duckask.utils.db.quoting import quote_literal as _lit

Comments = Mapping[str, Mapping[str, str]]
PrimaryKeys = Mapping[str, Sequence[str]]
Progress = Callable[[str], None]

TABLE_COMMENT_KEY = "__table__"


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


def count_rows(con: duckdb.DuckDBPyConnection, table: str) -> int:
    row = con.execute(f"SELECT count(*) FROM {_q(table)}").fetchone()
    assert row is not None                          # an aggregate: always one row
    return row[0]


def create_table(
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
    nulls_row = con.execute(f"SELECT count(*) FROM ({select_sql}) WHERE {any_null}").fetchone()
    assert nulls_row is not None                    # an aggregate: always one row
    nulls = nulls_row[0]
    if nulls:
        return f"{nulls:,} rows have a NULL key"
    dups_row = con.execute(
        f"SELECT count(*) FROM (SELECT {cols} FROM ({select_sql}) GROUP BY {cols} HAVING count(*) > 1)"
    ).fetchone()
    assert dups_row is not None                     # an aggregate: always one row
    dups = dups_row[0]
    if dups:
        return f"{dups:,} key values occur more than once"
    return None


def merge_comments(fk: Comments, user: Comments) -> dict[str, dict[str, str]]:
    """User comments, with foreign-key notes appended to the column's text."""
    merged: dict[str, dict[str, str]] = {t: dict(c) for t, c in user.items()}
    for table, cols in fk.items():
        target = merged.setdefault(table, {})
        for col, note in cols.items():
            target[col] = f"{target[col]}; {note}" if target.get(col) else note
    return merged


def apply_comments(
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
