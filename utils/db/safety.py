"""Statement safety: exactly one read-only SELECT/WITH statement, checked by DuckDB's own parser.

This is one of two layers. The other is the connection itself (see ``duckask.utils.db.database``):
read-only, ``enable_external_access=false`` (no file or network reads such as read_csv or
read_text), ``lock_configuration=true`` (no SET), a memory limit, a wall-clock timeout and a row cap.

Run on its own::

    python -m duckask.utils.db.safety "SELECT 1; DROP TABLE t"
"""
from __future__ import annotations

import argparse
import sys

import duckdb


class UnsafeSQLError(ValueError):
    """The statement was refused; the message says why."""


_ALLOWED = {duckdb.StatementType.SELECT}


def check_sql(sql: str) -> str:
    """Return the single statement's text (trailing ';' removed) or raise UnsafeSQLError."""
    if sql is None or not sql.strip():
        raise UnsafeSQLError("refused: the query is empty")
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as e:
        raise UnsafeSQLError(f"refused: the query does not parse: {str(e).splitlines()[0]}") from e
    if len(statements) == 0:
        raise UnsafeSQLError("refused: the query holds no statement")
    if len(statements) > 1:
        kinds = ", ".join(s.type.name for s in statements)
        raise UnsafeSQLError(f"refused: exactly one statement is allowed, got {len(statements)} ({kinds})")
    st = statements[0]
    if st.type not in _ALLOWED:
        raise UnsafeSQLError(
            f"refused: only read-only SELECT/WITH queries are allowed, this is a {st.type.name} statement"
        )
    text = st.query.strip()
    while text.endswith(";"):
        text = text[:-1].rstrip()
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Check whether duckask would run a SQL string.")
    ap.add_argument("sql")
    args = ap.parse_args(argv)
    try:
        print(check_sql(args.sql))
        return 0
    except UnsafeSQLError as e:
        print(e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
