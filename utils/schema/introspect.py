"""Reading a catalog out of a database: tables, columns, types, keys, what one row is (``grain``), comments, a
few sample values, and an index of the distinct short text values (used to match literals in a question, e.g. "Lakers"
→ ``team.nickname``). Without declared foreign keys, references are implied from key names."""
from __future__ import annotations

from duckask.utils.db.database import Database
from duckask.utils.db.quoting import quote_ident as _q
from duckask.utils.schema.catalog import Catalog, Column, Reference, Table, fold, is_text
from duckask.utils.schema.grain import find_grain
from duckask.utils.schema.nested import kind_of, shape

VALUE_INDEX_MAX_DISTINCT = 5000     # text columns with more distinct values are not indexed
VALUE_MAX_LEN = 60
SAMPLES = 3


def introspect(db: Database) -> Catalog:
    with db.cursor() as con:
        trows = con.execute(
            "SELECT table_name, coalesce(comment, ''), estimated_size FROM duckdb_tables() "
            "WHERE NOT internal AND schema_name = 'main' ORDER BY table_name").fetchall()
        models = {m.name: m for m in getattr(db, "models", [])}    # the semantic directory's models (views)
        tables: dict[str, Table] = {}
        for name, comment, est in trows + [(n, m.description, 0) for n, m in models.items()]:
            cols = con.execute(
                "SELECT column_name, data_type, coalesce(comment, '') FROM duckdb_columns() "
                "WHERE table_name = ? AND schema_name = 'main' ORDER BY column_index", [name]).fetchall()
            tables[name] = Table(name=name, comment=comment, rows=int(est or 0),
                                 columns=[Column(name=c, type=t, comment=cm) for c, t, cm in cols])
            if name in models:
                tables[name].model, tables[name].reads = True, list(models[name].reads)
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
                        col.ref = Reference(rtable, rc)
        engine = getattr(db, "engine", None)
        live = engine.facts if engine is not None else {}
        for tname, cols, rtable, rcols in live.get("references", []):      # a live catalog keeps its keys aside
            if (t := tables.get(tname)) is not None:
                for c, rc in zip(cols, rcols):
                    if (col := t.column(c)) is not None:
                        col.ref = Reference(rtable, rc)
        _imply_references(tables)
        values: dict[str, list[list[str]]] = {}
        for t in tables.values():
            if not t.columns:
                continue
            counted = con.execute(f"SELECT count(*) FROM {_q(t.name)}").fetchone()
            assert counted is not None                  # an aggregate: always one row
            held = int(counted[0])
            t.rows = held if (live.get("rows") or {}).get(t.name) is None else int(live["rows"][t.name])
            if held == 0:
                continue
            t.grain = list(t.pk) or ([] if engine is not None else
                                     find_grain(con, t.name, [(c.name, c.type) for c in t.columns], held))
            known = (live.get("values") or {}).get(t.name, {})     # a live source's values, read in the engine
            for c in t.columns:
                for v in known.get(c.name, []):
                    if 2 <= len(v) <= VALUE_MAX_LEN:
                        values.setdefault(fold(v), []).append([t.name, c.name, v])
            text_cols = [c for c in t.columns if is_text(c.type) and c.name not in known]
            distinct = {}
            if text_cols:
                exprs = ", ".join(f"approx_count_distinct({_q(c.name)})" for c in text_cols)
                counts = con.execute(f"SELECT {exprs} FROM {_q(t.name)}").fetchone()
                assert counts is not None               # aggregates: always one row
                distinct = dict(zip([c.name for c in text_cols], counts))
            for c in t.columns:
                samp = con.execute(
                    f"SELECT DISTINCT CAST({_q(c.name)} AS VARCHAR) AS v FROM (SELECT {_q(c.name)} FROM {_q(t.name)} "
                    f"WHERE {_q(c.name)} IS NOT NULL LIMIT 1000) LIMIT {SAMPLES}").fetchall()
                c.samples = [str(v)[:VALUE_MAX_LEN] for (v,) in samp]
                c.shape = shape(con, t.name, c.name, c.type) if kind_of(c.type) else ""
                if c.name in distinct and (distinct[c.name] or 0) <= VALUE_INDEX_MAX_DISTINCT:
                    for (v,) in con.execute(
                            f"SELECT DISTINCT {_q(c.name)} FROM {_q(t.name)} WHERE {_q(c.name)} IS NOT NULL "
                            f"AND length({_q(c.name)}) BETWEEN 2 AND {VALUE_MAX_LEN} "
                            f"LIMIT {VALUE_INDEX_MAX_DISTINCT * 2}").fetchall():
                        values.setdefault(fold(str(v)), []).append([t.name, c.name, str(v)])
        return Catalog(key=db.key, tables=tables, values=values)


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
                c.ref = Reference(target[0], tables[target[0]].pk[0])
