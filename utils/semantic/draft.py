"""A first semantic file for any database (``duckask semantic init``) and the older file converted
(``duckask semantic convert``), both in dbt's semantic model spec.

``draft_documents(db, catalog)`` writes, per table: a semantic model, its primary entity (the table's key,
else a row entity), a foreign entity for each key the catalog knows a join for, categorical dimensions for
text and flag columns (with their values when there are at most ``MAX_VALUES``), time dimensions for dates,
and sum measures for numeric columns plus a row count, each with a simple metric. MetricFlow needs a time
dimension for every measure; a table without a date gets a constant one, marked ``constant_time`` (never offered
to a plan). The side section says ``draft: true``: the plan path stays off for a draft until a person has
reviewed it and removed that line. ``convert(...)`` starts from the same draft and moves the older file's
descriptions, synonyms and values onto its dimensions and measures, its instructions and SQL metrics into
the side section, so nothing is lost and nothing must be kept in step by hand.
"""
from __future__ import annotations

import datetime as dt
import re

import yaml

from duckask.utils.schema.catalog import Catalog, Table, is_text

MAX_VALUES = 12
_NUMERIC = re.compile(r"^(TINYINT|SMALLINT|INTEGER|INT|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|"
                      r"FLOAT|REAL|DOUBLE|DECIMAL.*|NUMERIC.*)$", re.I)
_TIME = re.compile(r"^(DATE|TIMESTAMP.*)$", re.I)


#: Names MetricFlow keeps for itself (time grains, metric_time): a column called "year" becomes year_value.
RESERVED = {"nanosecond", "microsecond", "millisecond", "second", "minute", "hour", "day", "week", "month",
            "quarter", "year", "metric_time"}


def ident(name: str) -> str:
    """A MetricFlow name (lower-case letters, digits, single underscores, starting with a letter, not reserved)."""
    s = re.sub(r"_+", "_", re.sub(r"[^a-z0-9]+", "_", name.lower())).strip("_")
    s = s if s and s[0].isalpha() else f"t_{s}"
    s = s if len(s) > 1 else f"{s}_x"
    return f"{s}_value" if s in RESERVED else s


def _values(db, table: str, column: str) -> list[str]:
    out = db.run(f'SELECT DISTINCT "{column}" FROM "{table}" WHERE "{column}" IS NOT NULL LIMIT {MAX_VALUES + 1}',
                 timeout_s=20, row_cap=MAX_VALUES + 1)
    if not out.ok or out.df is None or len(out.df) > MAX_VALUES:
        return []
    return sorted(str(v) for v in out.df.iloc[:, 0])


def _model(db, t: Table, entity_of: dict[str, str], used: set[str]) -> tuple[dict, list[dict]]:
    name, entity = ident(t.name), entity_of[t.name]
    keys = {c.lower() for c in t.pk}
    model: dict = {"name": name, "description": t.comment or f"One row per {t.name} record (draft: describe it)",
                   "node_relation": {"schema_name": "main", "alias": t.name}}
    entities = [{"name": entity, "type": "primary", "expr": f'"{t.pk[0]}"'}] if len(t.pk) == 1 else []
    if not entities:
        model["primary_entity"] = entity
    seen = {entity}
    dims: list[dict] = []
    measures: list[dict] = []
    metrics: list[dict] = []
    for c in t.columns:
        col = f'"{c.name}"'
        if c.ref is not None and entity_of.get(c.ref.table) and entity_of[c.ref.table] not in seen:
            seen.add(entity_of[c.ref.table])
            entities.append({"name": entity_of[c.ref.table], "type": "foreign", "expr": col})
            continue
        if c.name.lower() in keys or c.ref is not None:
            continue
        dname = ident(c.name)
        if dname in {d["name"] for d in dims} | seen:
            continue
        if _TIME.match(c.type):
            dims.append({"name": dname, "type": "time", "expr": col, "type_params": {"time_granularity": "day"}})
        elif is_text(c.type) or c.type.upper() == "BOOLEAN" or "year" in c.name.lower():
            d: dict = {"name": dname, "type": "categorical", "expr": col}
            if c.comment:
                d["description"] = c.comment
            vals = _values(db, t.name, c.name) if db is not None else []
            if vals:
                d["config"] = {"meta": {"values": vals}}
            dims.append(d)
        elif _NUMERIC.match(c.type):
            mname = ident(f"{t.name}_{c.name}")
            if mname in used:
                continue
            used.add(mname)
            measures.append({"name": mname, "agg": "sum", "expr": col,
                             "description": c.comment or f"{c.name} of {t.name}"})
            metrics.append({"name": mname, "type": "simple", "type_params": {"measure": mname},
                            "description": f"total {c.name} of {t.name}"})
    count = ident(f"{t.name}_count")
    if count not in used:
        used.add(count)
        measures.append({"name": count, "agg": "sum", "expr": "1", "description": f"number of {t.name} rows"})
        metrics.append({"name": count, "type": "simple", "type_params": {"measure": count},
                        "description": f"number of {t.name}",
                        "config": {"meta": {"synonyms": [f"number of {t.name}"]}}})
    time_dims = [d["name"] for d in dims if d["type"] == "time"]
    if not time_dims:
        dims.append({"name": "undated", "type": "time", "expr": "DATE '2000-01-01'",
                     "type_params": {"time_granularity": "day"}, "config": {"meta": {"constant_time": True}}})
        time_dims = ["undated"]
    model["defaults"] = {"agg_time_dimension": time_dims[0]}
    model.update({"entities": entities, "dimensions": dims, "measures": measures})
    return model, metrics


def draft_documents(db, catalog: Catalog) -> list[dict]:
    """The draft as YAML documents: the side section, then a semantic model and metrics per table."""
    entity_of = {t: ident(t) for t in catalog.tables}
    docs: list[dict] = [{"duckask": {"draft": True, "instructions": catalog.instructions or ""}}]
    used: set[str] = set()
    for t in catalog.tables.values():
        model, metrics = _model(db, t, entity_of, used)
        docs.append({"semantic_model": model})
        docs.extend({"metric": m} for m in metrics)
    return docs


def render(docs: list[dict], source: str) -> str:
    head = (f"# DRAFT semantic file for {source}, written by `duckask semantic init` on {dt.date.today()} from the\n"
            "# database's catalog alone. Review it: describe each model, name dimensions and metrics the way your\n"
            "# users speak (config: meta: synonyms), delete what nobody asks for, add ratio/derived metrics,\n"
            "# then remove `draft: true` below to let the plan path use it. Format: dbt's semantic model spec.\n")
    body = "---\n".join(yaml.safe_dump(d, sort_keys=False, allow_unicode=True, width=120) for d in docs)
    return head + body


def convert(db, catalog: Catalog, old: dict) -> list[dict]:
    """The older semantic file (a dict, as loaded) folded into a draft: nothing of it is lost."""
    docs = draft_documents(db, catalog)
    side = docs[0]["duckask"]
    side.pop("draft")
    side["instructions"] = str(old.get("instructions") or "").strip()
    if old.get("metrics"):
        side["metrics"] = old["metrics"]
    leftover: dict = {}
    models = {d["semantic_model"]["node_relation"]["alias"]: d["semantic_model"] for d in docs if "semantic_model" in d}
    for tname, spec in (old.get("tables") or {}).items():
        spec = spec if isinstance(spec, dict) else {"description": spec}
        model = models.get(tname)
        if model is None:
            leftover[tname] = spec
            continue
        if spec.get("description"):
            model["description"] = str(spec["description"]).strip()
        if spec.get("synonyms"):
            model["config"] = {"meta": {"synonyms": list(spec["synonyms"])}}
        for cname, col in (spec.get("columns") or {}).items():
            col = col if isinstance(col, dict) else {"description": col}
            el = next((e for e in model["dimensions"] + model["measures"] if e.get("expr") == f'"{cname}"'), None)
            if el is None or col.get("references"):
                leftover.setdefault(tname, {}).setdefault("columns", {})[cname] = col
                continue
            if col.get("description"):
                el["description"] = str(col["description"]).strip()
            meta = {k: list(col[k]) for k in ("synonyms", "values") if col.get(k)}
            if meta:
                el.setdefault("config", {"meta": {}})["meta"].update(meta)
    if leftover:
        side["tables"] = leftover
    return docs
