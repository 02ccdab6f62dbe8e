"""An Airtable base as a DuckDB file: ``duckask import airtable BASE_ID --out base.duckdb`` and ``--refresh``.

The base's schema becomes tables as ``airtable_schema`` plans them (field types mapped, linked records as
join tables with foreign keys); ``airtable_api`` reads it and the records. Every record is read before
anything is written and the file is built under a temporary name and renamed, so a failed import or
refresh loses nothing. Next to it goes a semantic file draft (``<out>.semantic.yaml``, dbt's spec, as
``duckask semantic init`` writes) with the field descriptions and each select's allowed values. A semantic
file that is no longer what duckask last wrote there (a person reviewed or edited it) is never overwritten:
the new draft goes beside it as ``<out>.semantic.new.yaml`` and the command says so.

``--refresh`` re-reads the schema. Unchanged, it asks only for the records modified since the last import
(``filterByFormula`` on ``LAST_MODIFIED_TIME()``) and the list of record ids (for deletions), applies them to
a copy of the file and swaps that in. A table with rollups, lookups or counts is re-read whole (their
values change when *other* tables change, which does not mark the record modified); a changed schema, or
``--full``, means a full reload. What the last import was (base, endpoint, schema hash, start time, the
semantic file's hash) is kept in the file's ``airtable`` schema, which the model never sees; the token is
never stored. A refresh reads from the endpoint given now (``--endpoint``, ``AIRTABLE_ENDPOINT_URL``, else
Airtable's), never the one stored in the file: a file from someone else must not decide where the token goes.

Run on its own (the same options as ``duckask import airtable``)::

    python -m duckask.utils.db.airtable BASE_ID --out base.duckdb [--refresh [--full]] [--endpoint URL]
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from duckask.utils.db.airtable_api import (
    AirtableError,
    client,
    endpoint_of,
    fetch_records,
    fetch_schema,
    max_pages_of,
)
from duckask.utils.db.airtable_schema import (
    Link,
    Placement,
    TablePlan,
    cell,
    ddl,
    place_draft,
    plan,
    read_state,
    save_state,
    schema_sha,
    semantic_draft,
    write_draft,
)
from duckask.utils.db.quoting import quote_ident as _q
from duckask.utils.db.quoting import quote_literal as _lit

SINCE_MARGIN = dt.timedelta(minutes=5)   # clock skew between this machine and Airtable's
BASE_ID = re.compile(r"app[A-Za-z0-9]{1,40}")
Progress = Callable[[str], None]


@dataclass
class Outcome:
    """What an import or refresh did, for the command's last line."""

    path: str
    tables: list[str]
    mode: str                                  # "import", "full reload (why)", "refresh"
    records: int = 0                           # records read from the API
    changed: int = 0                           # refresh: upserted
    deleted: int = 0
    semantic: str = ""
    notes: list[str] = field(default_factory=list)


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
    out = set()
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


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def _read_all(api, base_id: str, plans: list[TablePlan], echo: Progress, max_pages: int) -> dict[str, list[dict]]:
    out = {}
    for p in plans:
        out[p.id] = fetch_records(api, base_id, p, max_pages=max_pages)
        echo(f"{p.airtable_name}: {len(out[p.id])} records")
    return out


def _build(path: Path, plans: list[TablePlan], links: list[Link], records: dict[str, list[dict]]) -> None:
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


def _swap_in(tmp: Path, out: Path, base_id: str, endpoint: str, schema: dict, started: dt.datetime,
             semantic_sha: str | None) -> None:
    """Record what this import was in the new file, then put it in place of ``out`` in one rename."""
    con = duckdb.connect(str(tmp))
    try:
        save_state(con, base_id, endpoint, schema, started, semantic_sha)
    finally:
        con.close()
    os.replace(tmp, out)


def _last_semantic_sha(out: Path) -> str | None:
    """The hash of the semantic file the import at ``out`` last wrote (None: none, or not an import)."""
    try:
        return read_state(out)["semantic_sha"] if out.exists() else None
    except ValueError:
        return None


def _said_semantic(result: Outcome, placed: Placement) -> None:
    result.semantic = str(placed.path)
    if placed.kept:
        result.notes.append(f"{placed.kept} is not the draft duckask last wrote there (reviewed or edited?), so it "
                            f"was left as it is; the new draft is {placed.path}: compare them and take what you want")


def import_base(base_id: str, out: str | Path, *, token: str | None, endpoint: str | None = None,
                replace: bool = False, progress: Progress | None = None, why: str = "",
                max_pages: int | None = None) -> Outcome:
    """Read the whole base and write it to ``out`` (and the semantic draft next to it, or beside that when a
    person may have edited it)."""
    echo, out, endpoint = progress or (lambda _m: None), Path(out), endpoint_of(endpoint)
    if out.exists() and not replace:
        raise AirtableError(f"{out} exists: pass --replace to overwrite it, or --refresh to update it")
    _check_base_id(base_id, "the base id")
    api, started, pages = client(token, endpoint), _now(), max_pages_of(max_pages)
    schema = fetch_schema(api, base_id)
    plans, links = plan(schema)
    records = _read_all(api, base_id, plans, echo, pages)
    tmp = out.with_name(f".{out.name}.importing")
    tmp.unlink(missing_ok=True)
    try:
        _build(tmp, plans, links, records)
        draft = semantic_draft(tmp, out.name, plans)
        placed = place_draft(out, draft, _last_semantic_sha(out))
        _swap_in(tmp, out, base_id, endpoint, schema, started, placed.sha)
    finally:
        tmp.unlink(missing_ok=True)
    write_draft(placed.path, draft)
    result = Outcome(str(out), [p.name for p in plans] + [k.name for k in links],
                     f"full reload ({why})" if why else "import", sum(map(len, records.values())))
    _said_semantic(result, placed)
    return result


def _check_base_id(base_id, what: str) -> None:
    """A base id is ``app`` then letters and digits: anything else would change the URL the token is sent to."""
    if not isinstance(base_id, str) or not BASE_ID.fullmatch(base_id):
        raise AirtableError(f"{what} is not an Airtable base id (app then letters and digits; see the base's URL)")


def refresh(out: str | Path, *, token: str | None, endpoint: str | None = None, full: bool = False,
            progress: Progress | None = None, max_pages: int | None = None) -> Outcome:
    """Bring an imported file up to date: changed records only where the API allows, else a full reload.
    It reads from ``endpoint`` (else ``AIRTABLE_ENDPOINT_URL``, else Airtable's), never the file's."""
    echo, out = progress or (lambda _m: None), Path(out)
    state = read_state(out)
    _check_base_id(state["base_id"], f"the base id stored in {out}")
    endpoint, pages = endpoint_of(endpoint), max_pages_of(max_pages)
    api, started = client(token, endpoint), _now()
    schema = fetch_schema(api, state["base_id"])
    if full or schema_sha(schema) != state["schema_sha"]:
        why = "asked for" if full else "the base's schema changed"
        return import_base(state["base_id"], out, token=token, endpoint=endpoint, replace=True, progress=echo,
                           why=why, max_pages=pages)
    plans, links = plan(schema)
    since = (state["started_at"] - SINCE_MARGIN).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    changed, live, read = {}, {}, 0
    for p in plans:
        if p.cross_table:
            changed[p.id] = fetch_records(api, state["base_id"], p, max_pages=pages)
            live[p.id] = {r["id"] for r in changed[p.id]}
        else:
            changed[p.id] = fetch_records(api, state["base_id"], p, max_pages=pages,
                                          formula=f"IS_AFTER(LAST_MODIFIED_TIME(), DATETIME_PARSE('{since}'))")
            live[p.id] = {r["id"] for r in fetch_records(api, state["base_id"], p, fields=[p.primary_field],
                                                         max_pages=pages)}
        read += len(changed[p.id])
        echo(f"{p.airtable_name}: {len(changed[p.id])} changed" + (" (re-read whole: rollups/lookups)"
                                                                     if p.cross_table else ""))
    tmp = out.with_name(f".{out.name}.refreshing")
    shutil.copyfile(out, tmp)
    try:
        deleted = _apply(tmp, plans, links, changed, live)
        _swap_in(tmp, out, state["base_id"], endpoint, schema, started, state["semantic_sha"])
    finally:
        tmp.unlink(missing_ok=True)
    return Outcome(str(out), [p.name for p in plans] + [k.name for k in links], "refresh", read, read, deleted)


def _apply(path: Path, plans: list[TablePlan], links: list[Link], changed: dict[str, list[dict]],
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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The Airtable options of ``duckask import`` (SRC is the word ``airtable``)."""
    parser.add_argument("--refresh", action="store_true", help="airtable: update --out from the base "
                        "(changed records only where it can)")
    parser.add_argument("--full", action="store_true", help="airtable: with --refresh, reload everything")
    parser.add_argument("--endpoint", metavar="URL", help="airtable: the API's address (default: "
                        "AIRTABLE_ENDPOINT_URL, else https://api.airtable.com)")


def run_command(args) -> int:
    """``duckask import airtable [BASE_ID] --out DB [--refresh [--full]] [--replace] [--endpoint URL]``."""
    echo: Progress = (lambda _m: None) if args.quiet else (lambda m: print(m, file=sys.stderr))
    token = os.environ.get("AIRTABLE_TOKEN")
    try:
        if args.refresh:
            done = refresh(args.out, token=token, endpoint=args.endpoint, full=args.full, progress=echo)
        elif not args.base:
            raise AirtableError("give the base id (it starts with app; see the base's URL): "
                                "duckask import airtable BASE_ID --out base.duckdb")
        else:
            done = import_base(args.base, args.out, token=token, endpoint=args.endpoint, replace=args.replace,
                               progress=echo)
    except (AirtableError, ValueError, OSError, duckdb.Error) as exc:
        print(f"duckask import airtable: error: {exc}", file=sys.stderr)
        return 1
    if not args.quiet:
        what = (f"{done.changed} changed, {done.deleted} deleted" if done.mode == "refresh"
                else f"{done.records} records")
        print(f"{done.path}: {done.mode}: {what}; {len(done.tables)} tables: {', '.join(done.tables)}")
        if done.semantic:
            print(f"semantic draft: {done.semantic} (review it, then remove `draft: true`)")
        for note in done.notes:
            print(f"note: {note}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="duckask import airtable", description="An Airtable base as a DuckDB file "
                                 "(AIRTABLE_TOKEN in the environment).")
    ap.add_argument("base", nargs="?", metavar="BASE_ID")
    ap.add_argument("--out", "-o", required=True, metavar="DB")
    ap.add_argument("--replace", action="store_true")
    ap.add_argument("--quiet", "-q", action="store_true")
    add_arguments(ap)
    return run_command(ap.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
