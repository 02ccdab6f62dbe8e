"""An Airtable base's schema as DuckDB tables: names, column types, cell values, link tables and comments.

``plan(schema)`` takes the base schema endpoint's JSON (``GET /v0/meta/bases/{id}/tables``) and returns
``TablePlan``s and ``Link``s:

- every table gets ``id`` (the record id, its primary key) and ``created_time``, then one column per field,
  named in snake_case (the Airtable name and description kept in the column's comment);
- field types map to DuckDB types: text-like fields -> VARCHAR, numbers -> BIGINT (precision 0) or DOUBLE,
  checkbox -> BOOLEAN, date -> DATE, date-times -> TIMESTAMP (UTC), single select -> VARCHAR with its options
  kept as the allowed values (in the comment, and in the semantic draft), multiple selects, collaborators and
  attachments -> VARCHAR[] (names, URLs), formulas and rollups -> their result's type, lookups -> a list of it;
- a linked-record field (and its inverse on the other table, which is the same relation) becomes one join
  table ``<table>_<field>`` with a foreign key to each side.

``cell(column, value)`` turns one API value into what the column holds. ``read_state`` and ``save_state``
keep what an import was (base, endpoint, schema hash, start time, the hash of the semantic file duckask
last wrote, which ``semantic.airtable_draft`` uses to leave an edited one alone) in the file's ``airtable``
schema, which the model never sees. Run on its own to see the plan for a schema file::

    python -m duckask.utils.airtable.schema schema.json
"""
from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from duckask.utils.db.quoting import quote_ident as _q
from duckask.utils.db.quoting import quote_literal as _lit
from duckask.utils.db.table_builder import sanitize_identifier

_TYPES = {
    "checkbox": "BOOLEAN", "date": "DATE", "dateTime": "TIMESTAMP", "createdTime": "TIMESTAMP",
    "lastModifiedTime": "TIMESTAMP", "percent": "DOUBLE", "currency": "DOUBLE", "duration": "DOUBLE",
    "autoNumber": "BIGINT", "count": "BIGINT", "rating": "BIGINT",
    "multipleSelects": "VARCHAR[]", "multipleCollaborators": "VARCHAR[]", "multipleAttachments": "VARCHAR[]",
}
#: Fields whose value is computed from *other* tables: a change there does not mark this record modified,
#: so an incremental refresh re-reads a table that has one (see airtable.refresh).
CROSS_TABLE = {"rollup", "multipleLookupValues", "count"}
SELECTS = {"singleSelect", "multipleSelects"}


@dataclass
class Col:
    field_id: str
    name: str
    type: str
    kind: str                    # the Airtable field type
    comment: str
    options: list[str] = field(default_factory=list)     # a select's allowed values


@dataclass
class TablePlan:
    id: str
    airtable_name: str
    name: str
    comment: str
    primary_field: str
    cols: list[Col]
    cross_table: bool            # has a rollup, lookup or count
    fields: dict[str, str] = field(default_factory=dict)    # every field of the table: id -> Airtable name


@dataclass
class Link:
    name: str                    # the join table
    field_id: str                # the field on ``left`` that holds the links
    inverse_id: str | None       # the same relation seen from ``right`` (None: a one-way link)
    left: str                    # table ids
    right: str
    left_col: str
    right_col: str


def duck_type(kind: str, options: dict | None) -> str | None:
    """The DuckDB type for an Airtable field type (None: a linked-record field, which becomes a join table)."""
    options = options or {}
    if kind == "multipleRecordLinks":
        return None
    if kind in ("formula", "rollup"):
        result = options.get("result") or {}
        return duck_type(result.get("type", ""), result.get("options")) or "VARCHAR"
    if kind == "multipleLookupValues":
        result = options.get("result") or {}
        inner = duck_type(result.get("type", ""), result.get("options")) or "VARCHAR"
        return inner if inner.endswith("[]") else f"{inner}[]"
    if kind == "number":
        return "BIGINT" if options.get("precision") == 0 else "DOUBLE"
    return _TYPES.get(kind, "VARCHAR")


def _scalar(value):
    """A collaborator, attachment, barcode, button or AI text as the one string a person means by it."""
    if isinstance(value, dict):
        for key in ("url", "name", "email", "text", "label", "value"):
            if isinstance(value.get(key), (str, int, float)):
                return value[key]
        return None if ("error" in value or "specialValue" in value) else json.dumps(value, sort_keys=True)
    return value


def cell(col: Col, value):
    """One API value (missing: None) as the column holds it (JSON-able; DuckDB casts dates and lists)."""
    if col.type == "BOOLEAN":
        return bool(value)
    if value is None:
        return None
    if col.type.endswith("[]"):
        items = value if isinstance(value, list) else [value]
        out = [_scalar(v) for v in items]
        return [v if isinstance(v, str) or v is None else json.dumps(v) for v in out] if col.type == "VARCHAR[]" \
            else out
    if isinstance(value, list):      # a rollup's ARRAYJOIN-less result, or a formula returning a list
        value = ", ".join(str(_scalar(v)) for v in value)
    value = _scalar(value)
    if value is None:
        return None
    if col.type in ("BIGINT", "DOUBLE"):
        try:
            number = float(value)
        except (TypeError, ValueError):
            return None
        return int(number) if col.type == "BIGINT" and number.is_integer() else number
    return value if col.type != "VARCHAR" or isinstance(value, str) else str(value)


def _unique(name: str, used: set[str]) -> str:
    base, n = name, 2
    while name in used:
        name, n = f"{base}_{n}", n + 1
    used.add(name)
    return name


def _comment(f: dict, options: list[str]) -> str:
    parts = [f.get("description", "").strip()]
    if options:
        parts.append("one of: " + ", ".join(options))
    parts.append(f"Airtable field '{f['name']}' ({f['type']})")
    return "; ".join(p for p in parts if p)


def plan(schema: dict) -> tuple[list[TablePlan], list[Link]]:
    """The DuckDB tables and join tables for a base schema (the schema endpoint's JSON)."""
    tables = schema.get("tables")
    if not isinstance(tables, list) or not tables:
        raise ValueError("the base schema lists no tables (does the token have the schema.bases:read scope?)")
    used: set[str] = set()
    plans, links, names = [], [], {}
    for t in tables:
        tname = _unique(sanitize_identifier(t["name"]), used)
        names[t["id"]] = tname
        cols_used = {"id", "created_time"}
        cols, cross = [], False
        for f in t.get("fields", []):
            kind, options = f.get("type", ""), f.get("options") or {}
            dtype = duck_type(kind, options)
            cross = cross or kind in CROSS_TABLE
            if dtype is None:
                continue
            allowed = [c["name"] for c in options.get("choices", [])] if kind in SELECTS else []
            cols.append(Col(f["id"], _unique(sanitize_identifier(f["name"]), cols_used), dtype, kind,
                            _comment(f, allowed), allowed))
        comment = "; ".join(p for p in (t.get("description", "").strip(), f"Airtable table '{t['name']}'") if p)
        plans.append(TablePlan(t["id"], t["name"], tname, comment, t.get("primaryFieldId", ""), cols, cross,
                               {f["id"]: f["name"] for f in t.get("fields", [])}))
    seen: set[str] = set()
    for t in tables:
        for f in t.get("fields", []):
            if f.get("type") != "multipleRecordLinks" or f["id"] in seen:
                continue
            options = f.get("options") or {}
            right, inverse = options.get("linkedTableId"), options.get("inverseLinkFieldId")
            if not isinstance(right, str) or right not in names:       # names' keys are table ids (str)
                continue
            seen.update({f["id"], inverse} - {None})
            left_col, right_col = f"{names[t['id']]}_id", f"{names[right]}_id"
            if left_col == right_col:
                left_col, right_col = "record_id", "linked_id"
            name = _unique(f"{names[t['id']]}_{sanitize_identifier(f['name'])}", used)
            links.append(Link(name, f["id"], inverse, t["id"], right, left_col, right_col))
    return plans, links


def ddl(plans: list[TablePlan], links: list[Link]) -> list[str]:
    """CREATE TABLE statements (tables first, then join tables with their foreign keys) and the comments."""
    names = {p.id: p.name for p in plans}
    out = []
    for p in plans:
        cols = ", ".join(f"{_q(c.name)} {c.type}" for c in p.cols)
        out.append(f"CREATE TABLE {_q(p.name)} (id VARCHAR PRIMARY KEY, created_time TIMESTAMP"
                   f"{', ' + cols if cols else ''})")
        out.append(f"COMMENT ON TABLE {_q(p.name)} IS {_lit(p.comment)}")
        out.append(f"COMMENT ON COLUMN {_q(p.name)}.id IS 'Airtable record id'")
        out.extend(f"COMMENT ON COLUMN {_q(p.name)}.{_q(c.name)} IS {_lit(c.comment)}" for c in p.cols)
    for k in links:
        out.append(f"CREATE TABLE {_q(k.name)} ({_q(k.left_col)} VARCHAR REFERENCES {_q(names[k.left])}(id), "
                   f"{_q(k.right_col)} VARCHAR REFERENCES {_q(names[k.right])}(id))")
        out.append(f"COMMENT ON TABLE {_q(k.name)} IS "
                   f"{_lit(f'links {names[k.left]} to {names[k.right]} (an Airtable linked-record field)')}")
    return out


STATE_COLUMNS = ("base_id", "endpoint", "schema_sha", "started_at", "semantic_sha")


def save_state(con, base_id: str, endpoint: str, schema: dict, started: dt.datetime,
               semantic_sha: str | None = None) -> None:
    con.execute("CREATE SCHEMA IF NOT EXISTS airtable")
    con.execute("CREATE OR REPLACE TABLE airtable.state (base_id VARCHAR, endpoint VARCHAR, schema_sha VARCHAR, "
                "started_at TIMESTAMP, semantic_sha VARCHAR)")
    con.execute("INSERT INTO airtable.state VALUES (?, ?, ?, ?, ?)",
                [base_id, endpoint, schema_sha(schema), started, semantic_sha])


def schema_sha(schema: dict) -> str:
    return hashlib.sha256(json.dumps(schema, sort_keys=True).encode()).hexdigest()


def read_state(path: str | Path) -> dict:
    """What the import at ``path`` was; ValueError when it is no DuckDB file or not an Airtable import.
    ``semantic_sha`` is None for a file imported before duckask recorded it."""
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.ConnectionException:
        # This process has it open already (duckask's shared, locked-down connection): read through that one.
        from duckask.utils.db.database import open_database

        con = None
        with open_database(str(path)).cursor() as cur:
            state = _state_row(cur)
    except duckdb.Error as exc:
        raise ValueError(f"{path}: not a DuckDB file duckask can open ({exc})") from None
    if con is not None:
        try:
            state = _state_row(con)
        finally:
            con.close()
    if state is None or any(state.get(k) is None for k in STATE_COLUMNS[:4]):
        raise ValueError(f"{path} was not made by `duckask import airtable`: import it first")
    return {k: state.get(k) for k in STATE_COLUMNS}


def _state_row(con) -> dict | None:
    try:
        row = con.execute("SELECT * FROM airtable.state").fetchone()
    except duckdb.Error:
        return None
    return None if row is None else dict(zip((d[0] for d in con.description), row))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Print the DuckDB tables an Airtable base schema becomes.")
    ap.add_argument("schema", help="a JSON file with the base schema endpoint's answer")
    args = ap.parse_args(argv)
    with open(args.schema, encoding="utf-8") as fh:
        plans, links = plan(json.load(fh))
    print(";\n".join(ddl(plans, links)) + ";")
    return 0


if __name__ == "__main__":
    sys.exit(main())
