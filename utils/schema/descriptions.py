"""The descriptions file: documentation for a database that has none, for both the ranker and the
model. ``apply_descriptions(catalog, path)`` returns a copy of the catalog with table and column
descriptions (and declared joins) from a YAML file filled in.

Run on its own::

    python -m duckask.utils.schema.descriptions --db PATH FILE.yaml     # check a file, print the schema
"""
from __future__ import annotations

import argparse
import copy
from pathlib import Path

import yaml

from duckask.utils.schema.catalog import Catalog, Reference


def apply_descriptions(catalog: Catalog, path: str | Path) -> Catalog:
    """A copy of ``catalog`` with table and column descriptions from a YAML file filled in.

    The file documents a database that has no comments::

        tables:
          nbacom_standings:
            description: Regular-season standings, 2025-26 (wins, losses, conference rank)
            columns:
              WINS: regular-season wins
              TEAM_ID:
                description: NBA.com team id
                references: kaggle_team.id
    A column's ``references`` declares a join the database has no foreign key for: the schema shows
    it as REFERENCES, and table selection brings the referenced table along. Descriptions replace
    existing comments; unknown tables or columns are an error (a typo would otherwise silently do
    nothing).
    """
    data = yaml.safe_load(Path(path).read_text()) or {}
    data = data.get("tables", data) if isinstance(data, dict) else {}
    out = copy.deepcopy(catalog)
    out.key = f"{catalog.key}+{Path(path).resolve()}:{Path(path).stat().st_mtime_ns}"
    for tname, spec in data.items():
        t = out.tables.get(tname)
        if t is None:
            raise ValueError(f"{path}: no table {tname!r} in this database")
        spec = spec if isinstance(spec, dict) else {"description": spec}
        if spec.get("description"):
            t.comment = str(spec["description"]).strip()
        for cname, text in (spec.get("columns") or {}).items():
            c = t.column(cname)
            if c is None:
                raise ValueError(f"{path}: table {tname!r} has no column {cname!r}")
            col = text if isinstance(text, dict) else {"description": text}
            if col.get("description"):
                c.comment = str(col["description"]).strip()
            if col.get("references"):
                c.ref = _declared_ref(out, str(col["references"]), f"{path}: {tname}.{cname}")
    return out


def _declared_ref(catalog: Catalog, target: str, where: str) -> Reference:
    """'table.column' or 'table(column)' -> the catalog's table and column, checked."""
    rt, _, rc = target.replace("(", ".").rstrip(")").partition(".")
    t = catalog.tables.get(rt) or next((x for x in catalog.tables.values() if x.name.lower() == rt.lower()), None)
    c = t.column(rc) if t is not None else None
    if c is None:
        raise ValueError(f"{where}: references {target!r}, which is not a table.column of this database")
    return Reference(t.name, c.name)


def main(argv: list[str] | None = None) -> int:
    from duckask.utils.schema import get_catalog
    from duckask.utils.schema.ddl import render_ddl

    ap = argparse.ArgumentParser(description="Check a descriptions file against a database and print the result.")
    ap.add_argument("--db", required=True)
    ap.add_argument("file")
    args = ap.parse_args(argv)
    try:
        cat = apply_descriptions(get_catalog(args.db), args.file)
    except (ValueError, OSError, yaml.YAMLError) as e:
        print(f"error: {e}")
        return 1
    print(render_ddl(cat))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
