"""What is read of a semantic layer: the plan prompt's catalog, the SQL path's descriptions, and whether a
question reaches it.

- ``catalog_text(layer)``: metrics and dimensions with their meaning, the same bytes for every question on
  a database (the plan prompt puts it first, so the prompt-state cache serves it);
- ``as_descriptions(layer)``: the older semantic file's dict (instructions, tables, columns, metrics), which
  ``duckask.utils.semantic.descriptions`` applies to the catalog: the SQL path learns from the same file;
- ``reaches(question, layer)``: the metrics whose name or synonyms the question's words reach (stemmed
  word overlap, no model call): the plan path runs only when there is one.
"""
from __future__ import annotations

import re

from duckask.utils.schema.terms import question_terms
from duckask.utils.semantic.manifest import Name, SemanticLayer, unquote

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PLAIN_COLUMN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*$")   # table.column


def _line(n: Name) -> str:
    extra = [n.formula] if n.formula else []
    if n.synonyms:
        extra.append("also: " + ", ".join(n.synonyms[:4]))
    if n.values:
        extra.append("values: " + ", ".join(repr(v) for v in n.values[:8]))
    desc = f": {n.description}" if n.description else ""
    return f"- {n.name}{desc}" + (f" ({'; '.join(extra)})" if extra else "")


def catalog_text(layer: SemanticLayer) -> str:
    """The metrics and dimensions a plan may name, one per line (stable for a database)."""
    metrics = "\n".join(_line(n) for n in layer.metrics.values())
    dims = "\n".join(_line(n) for n in layer.dimensions.values())
    notes = str(layer.side.get("instructions") or "").strip()
    head = f"Notes:\n{notes}\n\n" if notes else ""
    return f"{head}Metrics:\n{metrics}\n\nDimensions (group by or filter on these):\n{dims}\n"


#: At most this many value links a question (the SQL prompt's MAX_VALUE_HINTS is of the same order).
MAX_LINKS = 6


def value_links(layer: SemanticLayer, matches: list) -> list[tuple[str, str]]:
    """The values a question names (``schema.values.match_values``: "New York Yankees" found in teams.name) tied to
    the dimension that reads that column: ``(team_season__team_name, 'New York Yankees')``; ``plan.filter_named``
    turns a grouping the plan makes by such a dimension into the filter the question states (issue 44: the plan
    path's forward links). Left out: a phrase only part of longer values ("Babe Ruth" inside 'Babe Ruth Award',
    where the question means the player) and a phrase that names a metric or a dimension ("World Series":
    ``won_world_series``)."""
    by_column = {x.formula.lower(): d for d, x in layer.dimensions.items() if _PLAIN_COLUMN.match(x.formula or "")}
    names = [t for n in [*layer.metrics.values(), *layer.dimensions.values()] for t in _terms(n)]
    out: list[tuple[str, str]] = []
    for m in matches:
        dim = by_column.get(f"{m.table}.{m.column}".lower())
        words = set(question_terms(m.phrase))
        if dim is None or m.how == "contains" or any(words <= t for t in names):
            continue
        if (dim, str(m.value)) not in out:
            out.append((dim, str(m.value)))
    return out[:MAX_LINKS]


def summary(layer: SemanticLayer | None) -> dict:
    """The metrics and dimensions as JSON-ready lists (``duckask schema --json``, MCP ``list_metrics``)."""
    if layer is None:
        return {"metrics": [], "dimensions": []}

    def one(n: Name) -> dict:
        return {k: v for k, v in {"name": n.name, "description": n.description, "formula": n.formula,
                                  "synonyms": n.synonyms, "values": n.values, "kind": n.kind}.items() if v}

    return {"metrics": [one(n) for n in layer.metrics.values()],
            "dimensions": [one(n) for n in layer.dimensions.values()], "draft": layer.draft}


def _terms(n: Name) -> list[set[str]]:
    """Each way a question may name ``n``: its name's words, and each synonym's words (stemmed)."""
    out = [set(question_terms(n.name.split("__")[-1].replace("_", " ")))]
    out += [set(question_terms(s)) for s in n.synonyms]
    return [t for t in out if t]


def reaches(question: str, layer: SemanticLayer) -> list[str]:
    """The metrics the question names (all the words of its name, or of one synonym, are in the question)."""
    words = set(question_terms(question))
    return [m.name for m in layer.metrics.values() if any(t <= words for t in _terms(m))]


#: How a question asks for a list of things ("List the teams in California", "Which players were born in Japan?").
LIST_ASKED = re.compile(r"^\s*(list|which|name|show( me)?|give me|what are( the)?|who are( the)?)\b", re.I)


def reaches_list(question: str, layer: SemanticLayer) -> list[str]:
    """The entities a question asks to list: it starts like a request for a list and names a semantic model (its
    name, primary entity or a synonym, stemmed). Such a plan may have no metric (the values of a dimension)."""
    if not LIST_ASKED.match(question):
        return []
    words = set(question_terms(question))
    out = []
    for sm in layer.manifest.semantic_models:
        meta = dict(getattr(sm.config, "meta", None) or {}) if sm.config else {}
        names = [sm.name, sm.primary_entity or ""] + [e.name for e in sm.entities if e.type.value == "primary"]
        terms = [set(question_terms(n.replace("_", " "))) for n in names + list(meta.get("synonyms") or []) if n]
        if any(t and t <= words for t in terms):
            out.append(sm.name)
    return out


def _column(expr: str | None, name: str) -> str | None:
    """The column a dimension or measure reads when it is a plain column, else None."""
    col = unquote(expr) if expr is not None else name
    return col if _PLAIN.match(str(col)) else None


def as_descriptions(layer: SemanticLayer) -> tuple[dict, dict]:
    """The layer as the older semantic file's dict (and the line of each table entry, for errors)."""
    tables: dict[str, dict] = {}
    primaries: dict[str, str] = {}
    m = layer.manifest
    for sm in m.semantic_models:
        for e in sm.entities:
            col = _column(e.expr, e.name)
            if e.type.value in ("primary", "unique", "natural") and col:
                primaries.setdefault(e.name, f"{sm.node_relation.alias}.{col}")
    for sm in m.semantic_models:
        meta = dict(getattr(sm.config, "meta", None) or {}) if sm.config else {}
        t = tables.setdefault(sm.node_relation.alias, {"columns": {}})
        if sm.description:
            t["description"] = sm.description
        if meta.get("synonyms"):
            t["synonyms"] = list(meta["synonyms"])
        for el in [*sm.dimensions, *sm.measures]:
            col = _column(el.expr, el.name)
            if not col:
                continue
            emeta = dict(el.config.meta or {}) if el.config else {}
            entry = {k: emeta[k] for k in ("synonyms", "values") if emeta.get(k)}
            entry["synonyms"] = [w for w in entry.get("synonyms", []) if w not in meta.get("synonyms", [])]
            entry = {k: v for k, v in entry.items() if v}
            if el.description:
                entry["description"] = el.description
            if entry:
                t["columns"].setdefault(col, {}).update({k: v for k, v in entry.items()
                                                         if k not in t["columns"].get(col, {})})
        for e in sm.entities:
            col, target = _column(e.expr, e.name), primaries.get(e.name)
            if e.type.value == "foreign" and col and target and not target.startswith(f"{sm.node_relation.alias}."):
                t["columns"].setdefault(col, {})["references"] = target
    for alias, extra in (layer.side.get("tables") or {}).items():
        t = tables.setdefault(alias, {"columns": {}})
        extra = extra if isinstance(extra, dict) else {"description": extra}
        for k, v in extra.items():
            if k == "columns":
                for c, spec in (v or {}).items():
                    spec = spec if isinstance(spec, dict) else {"description": spec}
                    t["columns"].setdefault(c, {}).update(spec)
            else:
                t[k] = v
    data = {"tables": tables, "metrics": {**_sql_metrics(layer), **(layer.side.get("metrics") or {})}}
    if layer.side.get("instructions"):
        data["instructions"] = layer.side["instructions"]
    if layer.side.get("models"):
        data["models"] = layer.side["models"]
    return data, {}


def _sql_metrics(layer: SemanticLayer) -> dict:
    """MetricFlow's metrics that say more than a column's sum (ratios, derived metrics, computed measures) as SQL
    expressions for the SQL path, when all they read is on one table. A plain SUM(column) is left out: the
    column's description already says it."""
    measures = {me.name: (sm, me) for sm in layer.manifest.semantic_models for me in sm.measures}
    simple: dict[str, tuple[str, str]] = {}
    for met in layer.manifest.metrics:
        tp = met.type_params
        if tp.measure is not None and tp.measure.name in measures and not tp.measure.filter:
            sm, me = measures[tp.measure.name]
            agg = {"count_distinct": "COUNT(DISTINCT {})", "average": "AVG({})"}.get(
                me.agg.value, me.agg.value.upper() + "({})")
            simple[met.name] = (sm.node_relation.alias, agg.format(me.expr or me.name))
    plain = re.compile(r"[A-Z]+\(\"?[A-Za-z_][A-Za-z0-9_]*\"?\)")
    out = {n: (t, e) for n, (t, e) in simple.items() if e != "SUM(1)" and not plain.fullmatch(e)}
    for met in layer.manifest.metrics:
        tp = met.type_params
        parts = [tp.numerator.name, tp.denominator.name] if tp.numerator and tp.denominator else \
            [x.name for x in tp.metrics or []] if tp.expr else []
        if not parts or any(p not in simple for p in parts) or len({simple[p][0] for p in parts}) != 1:
            continue
        if tp.numerator:
            expr = f"{simple[parts[0]][1]} / NULLIF({simple[parts[1]][1]}, 0)"
        else:
            used = set(parts)

            def inline(m: re.Match[str], used: set[str] = used) -> str:
                return simple[m.group(0)][1] if m.group(0) in used else m.group(0)

            expr = re.sub(r"\b[A-Za-z_][A-Za-z0-9_]*\b", inline, str(tp.expr))
        out[met.name] = (simple[parts[0]][0], expr)
    return {n: {"expression": e, "table": t, "description": layer.metrics[n].description} for n, (t, e) in out.items()}
