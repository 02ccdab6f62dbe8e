"""An Airtable base's records into the DuckDB tables ``airtable.schema`` plans: the full load and a refresh's changes.

``build`` creates the tables and join tables in a new file and loads every record: each record becomes a
row (``cell`` makes each value what its column holds), each linked-record field's pairs (read from both
sides, the field and its inverse) rows of its join table, a pair whose record is missing on either side
left out. ``apply`` brings an imported file up to date with a refresh's records: the changed ones upserted,
the ones no longer listed deleted, and the join rows of every touched record replaced (link rows first,
committed, since DuckDB checks a foreign key against rows deleted in the same transaction). Rows go in
through a temporary JSON Lines file read with the columns' own types. Run on its own to build a file from a
saved schema and records, without the API (no import state is kept, so it cannot be refreshed):
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import duckdb

from duckask.utils.airtable.schema import Link, TablePlan, cell, ddl
from duckask.utils.db.quoting import quote_ident as _q
from duckask.utils.db.quoting import quote_literal as _lit


def _rows(p: TablePlan, records: list[dict]) -> list[dict]:
    return [{"id": r["id"], "created_time": r.get("createdTime"),
             **{c.name: cell(c, (r.get("fields") or {}).get(c.field_id)) for c in p.cols}} for r in records]


def _insert(con, table: str, types: dict[str, str], rows: list[dict], into: str | None = None) -> None:
    """Bulk-load JSON-able rows through a temporary JSON Lines file read with the columns' own types."""
    if not rows:
        return
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as fh:
        fh.writelines(json.dumps(r, default=str) + "\n" for r in rows)
    try:
        cols = ", ".join(f"{_lit(k)}: {_lit(v)}" for k, v in types.items())
        names = ", ".join(_q(k) for k in types)
        source = f"read_json({_lit(fh.name)}, format='newline_delimited', columns={{{cols}}})"
        con.execute(f"INSERT INTO {_q(into or table)} ({names}) SELECT {names} FROM {source}")
    finally:
        os.unlink(fh.name)


def _types(p: TablePlan) -> dict[str, str]:
    return {"id": "VARCHAR", "created_time": "TIMESTAMP", **{c.name: c.type for c in p.cols}}


def _pairs(k: Link, records: dict[str, list[dict]], only: dict[str, set[str]] | None = None) -> set[tuple]:
    """The (left, right) record pairs a link field holds, read from both sides' records."""
    out: set[tuple] = set()
    for r in records.get(k.left, []):
        if only is None or r["id"] in only.get(k.left, set()):
            out.update((r["id"], o) for o in (r.get("fields") or {}).get(k.field_id) or [] if isinstance(o, str))
    if k.inverse_id:
        for r in records.get(k.right, []):
            if only is None or r["id"] in only.get(k.right, set()):
                out.update((o, r["id"]) for o in (r.get("fields") or {}).get(k.inverse_id) or [] if isinstance(o, str))
    return out


def _insert_links(con, k: Link, pairs: set[tuple], names: dict[str, str]) -> None:
    rows = [{k.left_col: a, k.right_col: b} for a, b in sorted(pairs)]
    _insert(con, k.name, {k.left_col: "VARCHAR", k.right_col: "VARCHAR"}, rows, into="_links_staged")
    con.execute(f"INSERT INTO {_q(k.name)} SELECT DISTINCT s.* FROM _links_staged s "
                f"JOIN {_q(names[k.left])} a ON a.id = s.{_q(k.left_col)} "
                f"JOIN {_q(names[k.right])} b ON b.id = s.{_q(k.right_col)} "
                f"EXCEPT SELECT * FROM {_q(k.name)}")
    con.execute("DELETE FROM _links_staged")


def _stage_links(con, k: Link) -> None:
    con.execute(f"CREATE OR REPLACE TEMP TABLE _links_staged ({_q(k.left_col)} VARCHAR, {_q(k.right_col)} VARCHAR)")


def build(path: Path, plans: list[TablePlan], links: list[Link], records: dict[str, list[dict]]) -> None:
    """Create the tables and join tables at ``path`` (a new file) and load every record and link."""
    con = duckdb.connect(str(path))
    try:
        for stmt in ddl(plans, links):
            con.execute(stmt)
        for p in plans:
            _insert(con, p.name, _types(p), _rows(p, records.get(p.id, [])))
        names = {p.id: p.name for p in plans}
        for k in links:
            _stage_links(con, k)
            _insert_links(con, k, _pairs(k, records), names)
    finally:
        con.close()


def apply(path: Path, plans: list[TablePlan], links: list[Link], changed: dict[str, list[dict]],
           live: dict[str, set[str]]) -> int:
    """Apply upserts and deletions to the copy at ``path``. DuckDB checks a foreign key against rows deleted
    in the same transaction, so link rows go first, committed, then records."""
    con = duckdb.connect(str(path))
    try:
        names = {p.id: p.name for p in plans}
        have = {p.id: {r[0] for r in con.execute(f"SELECT id FROM {_q(p.name)}").fetchall()} for p in plans}
        gone = {p.id: have[p.id] - live[p.id] for p in plans}
        touched = {p.id: {r["id"] for r in changed[p.id]} | gone[p.id] for p in plans}
        for k in links:
            for col, side in ((k.left_col, k.left), (k.right_col, k.right)):
                if side == k.right and not k.inverse_id:
                    ids = gone[side]          # a one-way link: only the left side says what it links to
                else:
                    ids = touched[side]
                _delete_ids(con, k.name, col, ids)
        for p in plans:
            _delete_ids(con, p.name, "id", gone[p.id])
            types, rows = _types(p), _rows(p, changed[p.id])
            if not rows:
                continue
            con.execute(f"CREATE OR REPLACE TEMP TABLE _staged AS SELECT * FROM {_q(p.name)} LIMIT 0")
            _insert(con, p.name, types, rows, into="_staged")
            sets = ", ".join(f"{_q(c)} = s.{_q(c)}" for c in types if c != "id")
            con.execute(f"UPDATE {_q(p.name)} t SET {sets} FROM _staged s WHERE t.id = s.id")
            con.execute(f"INSERT INTO {_q(p.name)} SELECT * FROM _staged WHERE id NOT IN (SELECT id FROM {_q(p.name)})")
        for k in links:
            _stage_links(con, k)
            _insert_links(con, k, _pairs(k, changed, only={k.left: touched[k.left], k.right: touched[k.right]}), names)
        return sum(map(len, gone.values()))
    finally:
        con.close()


def _delete_ids(con, table: str, col: str, ids: set[str]) -> None:
    if ids:
        con.execute(f"DELETE FROM {_q(table)} WHERE {_q(col)} IN (SELECT unnest(?::VARCHAR[]))", [sorted(ids)])
