"""Schema introspection and compact DDL, cached per database file.

``get_catalog(db)`` reads tables, columns, types, keys, comments, a few sample values, and an index
of the distinct short text values (used to match literals in a question, e.g. "Lakers" →
``team.nickname``). The catalog is cached in memory and as JSON in the cache dir, keyed by the
database file's path, size and mtime, so each database is introspected once.

``render_ddl(catalog, tables)`` renders what the model sees: compact CREATE TABLE statements with
primary and foreign keys, comments and sample values.

Run on its own::

    python -m duckask.utils.schema --db PATH [--tables a,b]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import threading
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path

from duckask.utils.config import Settings, load_settings
from duckask.utils.database import Database, open_database

CATALOG_VERSION = 5
VALUE_INDEX_MAX_DISTINCT = 5000     # text columns with more distinct values are not indexed
VALUE_MAX_LEN = 60
SAMPLES = 3


def fold(text: str) -> str:
    """Lower-case, trimmed and accent-free: 'Nikola Jokić' and 'nikola jokic' fold alike."""
    decomposed = unicodedata.normalize("NFKD", text.strip().lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


@dataclass
class Column:
    name: str
    type: str
    comment: str = ""
    pk: bool = False
    ref: str = ""                    # "table(column)" for a foreign key
    samples: list[str] = field(default_factory=list)


@dataclass
class Table:
    name: str
    columns: list[Column]
    comment: str = ""
    rows: int = 0
    pk: list[str] = field(default_factory=list)

    def column(self, name: str) -> Column | None:
        low = name.lower()
        return next((c for c in self.columns if c.name.lower() == low), None)


@dataclass
class Catalog:
    key: str
    tables: dict[str, Table]
    # lower-cased text value -> list of [table, column, value as stored]
    values: dict[str, list[list[str]]] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps({"version": CATALOG_VERSION, "key": self.key,
                           "tables": {k: asdict(t) for k, t in self.tables.items()}, "values": self.values})

    @classmethod
    def from_json(cls, text: str) -> "Catalog":
        d = json.loads(text)
        if d.get("version") != CATALOG_VERSION:
            raise ValueError("stale catalog cache")
        tables = {k: Table(**{**t, "columns": [Column(**c) for c in t["columns"]]}) for k, t in d["tables"].items()}
        return cls(key=d["key"], tables=tables, values=d["values"])

    def column_sets(self) -> dict[str, set[str]]:
        """{table: {column}}, both lower-case: what the SQL clean-ups and repairs check names against."""
        return {t.lower(): {c.name.lower() for c in tb.columns} for t, tb in self.tables.items()}

    def foreign_links(self) -> list[tuple[str, str, str, str]]:
        """(table, column, referenced table, referenced column) for every foreign key."""
        out = []
        for t in self.tables.values():
            for c in t.columns:
                if c.ref and "(" in c.ref:
                    rt, rc = c.ref[:-1].split("(", 1)
                    out.append((t.name, c.name, rt, rc))
        return out


def _q(ident: str) -> str:
    return '"' + ident.replace('"', '""') + '"'


def _is_text(type_: str) -> bool:
    return type_.upper().startswith(("VARCHAR", "TEXT", "STRING", "CHAR", "ENUM"))


def introspect(db: Database) -> Catalog:
    con = db.con.cursor()
    try:
        trows = con.execute(
            "SELECT table_name, coalesce(comment, ''), estimated_size FROM duckdb_tables() "
            "WHERE NOT internal AND schema_name = 'main' ORDER BY table_name").fetchall()
        tables: dict[str, Table] = {}
        for name, comment, est in trows:
            cols = con.execute(
                "SELECT column_name, data_type, coalesce(comment, '') FROM duckdb_columns() "
                "WHERE table_name = ? AND schema_name = 'main' ORDER BY column_index", [name]).fetchall()
            tables[name] = Table(name=name, comment=comment, rows=int(est or 0),
                                 columns=[Column(name=c, type=t, comment=cm) for c, t, cm in cols])
        for tname, ctype, cols, rtable, rcols in con.execute(
                "SELECT table_name, constraint_type, constraint_column_names, referenced_table, "
                "referenced_column_names FROM duckdb_constraints() WHERE schema_name = 'main' "
                "AND constraint_type IN ('PRIMARY KEY', 'FOREIGN KEY')").fetchall():
            t = tables.get(tname)
            if t is None:
                continue
            if ctype == "PRIMARY KEY":
                t.pk = list(cols)
                for c in cols:
                    if (col := t.column(c)) is not None:
                        col.pk = True
            elif rtable and rcols:
                for c, rc in zip(cols, rcols):
                    if (col := t.column(c)) is not None:
                        col.ref = f"{rtable}({rc})"
        _imply_references(tables)
        values: dict[str, list[list[str]]] = {}
        for t in tables.values():
            if not t.columns:
                continue
            t.rows = int(con.execute(f"SELECT count(*) FROM {_q(t.name)}").fetchone()[0])
            if t.rows == 0:
                continue
            text_cols = [c for c in t.columns if _is_text(c.type)]
            distinct = {}
            if text_cols:
                exprs = ", ".join(f"approx_count_distinct({_q(c.name)})" for c in text_cols)
                distinct = dict(zip([c.name for c in text_cols], con.execute(f"SELECT {exprs} FROM {_q(t.name)}").fetchone()))
            for c in t.columns:
                samp = con.execute(
                    f"SELECT DISTINCT CAST({_q(c.name)} AS VARCHAR) AS v FROM (SELECT {_q(c.name)} FROM {_q(t.name)} "
                    f"WHERE {_q(c.name)} IS NOT NULL LIMIT 1000) LIMIT {SAMPLES}").fetchall()
                c.samples = [str(v)[:VALUE_MAX_LEN] for (v,) in samp]
                if c.name in distinct and (distinct[c.name] or 0) <= VALUE_INDEX_MAX_DISTINCT:
                    for (v,) in con.execute(
                            f"SELECT DISTINCT {_q(c.name)} FROM {_q(t.name)} WHERE {_q(c.name)} IS NOT NULL "
                            f"AND length({_q(c.name)}) BETWEEN 2 AND {VALUE_MAX_LEN} "
                            f"LIMIT {VALUE_INDEX_MAX_DISTINCT * 2}").fetchall():
                        values.setdefault(fold(str(v)), []).append([t.name, c.name, str(v)])
        return Catalog(key=db.key, tables=tables, values=values)
    finally:
        con.close()


def _imply_references(tables: dict[str, Table]) -> None:
    """Without declared foreign keys, a column named like another table's one-column primary key
    (e.g. batting.player_id and people.player_id) is taken as a reference to it."""
    owners: dict[str, list[str]] = {}
    for t in tables.values():
        if len(t.pk) == 1 and t.pk[0].lower() != "id":
            owners.setdefault(t.pk[0].lower(), []).append(t.name)
    for t in tables.values():
        for c in t.columns:
            if c.ref or (c.pk and len(t.pk) == 1):
                continue
            target = owners.get(c.name.lower(), [])
            if len(target) == 1 and target[0] != t.name:
                c.ref = f"{target[0]}({tables[target[0]].pk[0]})"


_MEM: dict[str, Catalog] = {}
_MEM_LOCK = threading.Lock()


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
    import copy

    import yaml

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


def _declared_ref(catalog: Catalog, target: str, where: str) -> str:
    """'table.column' or 'table(column)' -> the catalog's "table(column)" spelling, checked."""
    rt, _, rc = target.replace("(", ".").rstrip(")").partition(".")
    t = catalog.tables.get(rt) or next((x for x in catalog.tables.values() if x.name.lower() == rt.lower()), None)
    c = t.column(rc) if t is not None else None
    if c is None:
        raise ValueError(f"{where}: references {target!r}, which is not a table.column of this database")
    return f"{t.name}({c.name})"


def get_catalog(db: Database | str, settings: Settings | None = None) -> Catalog:
    """The catalog of ``db``, from memory, then the on-disk cache, else by introspection; with the
    settings' ``descriptions`` file applied when there is one."""
    settings = settings or load_settings()
    if not isinstance(db, Database):
        db = open_database(db, settings)
    cat = _base_catalog(db, settings)
    if settings.descriptions:
        key = (cat.key, str(Path(settings.descriptions).resolve()), Path(settings.descriptions).stat().st_mtime_ns)
        with _MEM_LOCK:
            if key not in _DESCRIBED:
                _DESCRIBED[key] = apply_descriptions(cat, settings.descriptions)
            return _DESCRIBED[key]
    return cat


_DESCRIBED: dict[tuple, Catalog] = {}


def _base_catalog(db: Database, settings: Settings) -> Catalog:
    with _MEM_LOCK:
        if db.key in _MEM:
            return _MEM[db.key]
        cache_file = settings.resolved_cache_dir / "catalogs" / (hashlib.sha256(db.key.encode()).hexdigest()[:20] + ".json")
        cat = None
        if cache_file.is_file():
            try:
                cat = Catalog.from_json(cache_file.read_text())
            except (ValueError, KeyError, TypeError):
                cat = None
        if cat is None:
            cat = introspect(db)
            cache_file.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache_file.with_suffix(".tmp")
            tmp.write_text(cat.to_json())
            tmp.replace(cache_file)
        _MEM[db.key] = cat
        return cat


def _sample_text(c: Column) -> str:
    """A few example values: three short strings, one date or timestamp, two numbers."""
    if not c.samples or c.pk or c.ref:
        return ""
    t = c.type.upper()
    if _is_text(t):
        return "e.g. " + ", ".join("'" + s.replace("'", "''")[:20] + "'" for s in c.samples[:3])
    if t.startswith(("DATE", "TIME")):
        return "e.g. " + c.samples[0][:19]
    return "e.g. " + ", ".join(s[:10] for s in c.samples[:2])


def render_ddl(catalog: Catalog, tables: list[str] | None = None, *, samples: bool = True,
               columns: dict[str, list[str]] | None = None) -> str:
    """Compact CREATE TABLE statements for ``tables`` (default: all), in the given order.

    ``columns`` optionally limits a table to some of its columns; the rest are counted in a comment.
    """
    names = tables if tables is not None else list(catalog.tables)
    chunks = []
    for name in names:
        t = catalog.tables[name]
        shown = t.columns
        if columns and name in columns:
            keep = {c.lower() for c in columns[name]}
            shown = [c for c in t.columns if c.name.lower() in keep]
        hidden = len(t.columns) - len(shown)
        lines = []
        for i, c in enumerate(shown):
            parts = [f"  {_ident(c.name)} {c.type}"]
            if c.pk and len(t.pk) == 1:
                parts.append(" PRIMARY KEY")
            if c.ref:
                parts.append(f" REFERENCES {c.ref}")
            comma = "," if i < len(shown) - 1 or len(t.pk) > 1 else ""
            comment = c.comment if len(c.comment) <= 48 else c.comment[:45].rstrip() + "..."
            note = "; ".join(x for x in (comment, _sample_text(c) if samples else "") if x)
            lines.append("".join(parts) + comma + (f" -- {note}" if note else ""))
        if len(t.pk) > 1:
            lines.append(f"  PRIMARY KEY ({', '.join(_ident(c) for c in t.pk)})")
        if hidden:
            lines.append(f"  -- ...and {hidden} more columns")
        head = f"CREATE TABLE {_ident(t.name)} (" + (f" -- {t.comment}" if t.comment else "")
        chunks.append(head + "\n" + "\n".join(lines) + "\n);")
    return "\n".join(chunks)


_RESERVED: set[str] = set()


def _ident(name: str) -> str:
    """Quote an identifier only when DuckDB needs it (reserved word or unusual characters)."""
    if not _RESERVED:
        with _MEM_LOCK:
            if not _RESERVED:
                import duckdb

                con = duckdb.connect()   # its own connection: the shared default one is not thread-safe
                _RESERVED.update(k for (k,) in con.execute(
                    "SELECT keyword_name FROM duckdb_keywords() WHERE keyword_category = 'reserved'").fetchall())
                con.close()
    if name.isidentifier() and name.isascii() and name.lower() not in _RESERVED:
        return name
    return _q(name)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Print the compact schema duckask shows the model.")
    ap.add_argument("--db", required=True)
    ap.add_argument("--tables", help="comma-separated table names (default: all)")
    ap.add_argument("--no-samples", action="store_true")
    args = ap.parse_args(argv)
    cat = get_catalog(args.db)
    tables = args.tables.split(",") if args.tables else None
    print(render_ddl(cat, tables, samples=not args.no_samples))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
