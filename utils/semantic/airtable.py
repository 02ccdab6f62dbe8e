"""An Airtable base as a DuckDB file: ``duckask import airtable BASE_ID --out base.duckdb`` and ``--refresh``.

The base's schema becomes tables as ``airtable.schema`` plans them (field types mapped, linked records as
join tables with foreign keys); ``airtable.api`` reads it and the records, ``airtable.load`` writes them.
Every record is read before anything is written and the file is built under a temporary name and renamed,
so a failed import or refresh loses nothing. Next to it goes a semantic file draft (``<out>.semantic.yaml``,
dbt's spec, as ``duckask semantic init`` writes; ``semantic.airtable_draft``) with the field descriptions and each
select's allowed values. A semantic file that is no longer what duckask last wrote there (a person reviewed
or edited it) is never overwritten: the new draft goes beside it as ``<out>.semantic.new.yaml`` and the
command says so.

``--refresh`` re-reads the schema. Unchanged, it asks only for the records modified since the last import
(``filterByFormula`` on ``LAST_MODIFIED_TIME()``) and the list of record ids (for deletions), applies them to
a copy of the file and swaps that in. A table with rollups, lookups or counts is re-read whole (their
values change when *other* tables change, which does not mark the record modified); a changed schema, or
``--full``, means a full reload. What the last import was (base, endpoint, schema hash, start time, the
semantic file's hash) is kept in the file's ``airtable`` schema, which the model never sees; the token is
never stored. A refresh reads from the endpoint given now (``--endpoint``, ``AIRTABLE_ENDPOINT_URL``, else
Airtable's), never the one stored in the file: a file from someone else must not decide where the token goes.

Run on its own (the same options as ``duckask import airtable``)::

    python -m duckask.utils.semantic.airtable BASE_ID --out base.duckdb [--refresh [--full]] [--endpoint URL]
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from duckask.utils.airtable.api import (
    AirtableError,
    client,
    endpoint_of,
    fetch_records,
    fetch_schema,
    max_pages_of,
)
from duckask.utils.airtable.load import apply, build
from duckask.utils.airtable.schema import TablePlan, plan, read_state, save_state, schema_sha
from duckask.utils.semantic.airtable_draft import Placement, place_draft, semantic_draft, write_draft

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


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def _read_all(api, base_id: str, plans: list[TablePlan], echo: Progress, max_pages: int) -> dict[str, list[dict]]:
    out = {}
    for p in plans:
        out[p.id] = fetch_records(api, base_id, p, max_pages=max_pages)
        echo(f"{p.airtable_name}: {len(out[p.id])} records")
    return out


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
        build(tmp, plans, links, records)
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
        deleted = apply(tmp, plans, links, changed, live)
        _swap_in(tmp, out, state["base_id"], endpoint, schema, started, state["semantic_sha"])
    finally:
        tmp.unlink(missing_ok=True)
    return Outcome(str(out), [p.name for p in plans] + [k.name for k in links], "refresh", read, read, deleted)


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
