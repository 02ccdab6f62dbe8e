"""A plan: what the model writes on the plan path instead of SQL, checked against the semantic layer.

The model answers with a few lines of YAML whose every name comes from the layer's catalog::

    metrics: [home_runs]
    group_by: [player__full_name]
    where: [year = 2019]
    order_by: [-home_runs]
    limit: 1

``parse_plan(text, layer)`` returns a ``Plan`` with every name resolved (a dimension may be named by its
last part, ``full_name``, when that is unique) or raises ``PlanError`` saying what was wrong (the graph
then falls back to the SQL path). Filters are written plainly (``year = 2019``, ``league = 'AL'``,
``year between 2000 and 2009``); ``where_filters`` translates them into MetricFlow's where syntax
(``{{ TimeDimension('metric_time', 'year') }} = '2019-01-01'``): duckask does it, not the model.
"""
from __future__ import annotations

import argparse
import re
from dataclasses import dataclass, field

from duckask.utils.lexicon import OPERATOR_WORDS, first_words
from duckask.utils.llm.yaml_reply import yaml_mapping
from duckask.utils.semantic.manifest import GRAINS, SemanticLayer, load_layer

KEYS = ("metrics", "group_by", "where", "order_by", "limit")
_FILTER = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*(==|=|!=|<>|<=|>=|<|>|not\s+like|like|ilike|not\s+in|in|between)"
                     r"\s*(.+?)\s*$", re.I | re.S)
_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


class PlanError(ValueError):
    """A plan that cannot be compiled: the message says which part and why."""


@dataclass
class Plan:
    metrics: list[str]
    group_by: list[str] = field(default_factory=list)
    where: list[tuple[str, str, str]] = field(default_factory=list)     # (dimension, operator, value)
    order_by: list[str] = field(default_factory=list)                   # "-name" = descending
    limit: int | None = None

    def as_dict(self) -> dict:
        return {"metrics": self.metrics, "group_by": self.group_by,
                "where": [f"{d} {op} {v}" for d, op, v in self.where], "order_by": self.order_by, "limit": self.limit}


def _list(value, key: str) -> list:
    if value is None:
        return []
    if isinstance(value, (str, int, float)):
        return [value] if key == "where" else [x.strip() for x in str(value).split(",") if x.strip()]
    if isinstance(value, list):
        return value
    raise PlanError(f"{key}: expected a list, got {type(value).__name__}")


def resolve(name: str, layer: SemanticLayer, *, metric_ok: bool = False) -> str:
    """A name of the plan as the layer knows it (a unique last part may stand for the whole)."""
    n = str(name).strip().strip("'\"`")
    if metric_ok and n in layer.metrics:
        return n
    if metric_ok and (named := metric_named(n, layer)):
        return named
    if n.startswith("metric_time__"):
        n = n.split("__", 1)[1]
    if n in layer.dimensions:
        return n
    # table.column, the way a SQL writer names it: the dimension that reads exactly that column.
    exact = [d for d, x in layer.dimensions.items() if "." in n and x.formula == n]
    if len(exact) == 1:
        return exact[0]
    tail = n.split("__")[-1].split(".")[-1]
    tails = [d for d in layer.dimensions if d.split("__")[-1] == tail]
    if len(tails) == 1:
        return tails[0]
    # The column a dimension reads, named instead of the dimension (award_id for award_win__award).
    cols = [d for d, x in layer.dimensions.items() if x.formula.split(".")[-1] == tail]
    if len(cols) == 1:
        return cols[0]
    what = "metric or dimension" if metric_ok else "dimension"
    hint = f" ({' or '.join(tails)}?)" if tails else ""
    raise PlanError(f"unknown {what} {n!r}{hint}: use a name from the catalog")


def metric_named(name: str, layer: SemanticLayer) -> str | None:
    """The metric ``name`` stands for: itself, or the one metric that has it as a synonym ("wins")."""
    if name in layer.metrics:
        return name
    words = name.replace("_", " ").lower()
    found = [m for m, x in layer.metrics.items() if words in (s.lower() for s in x.synonyms)]
    return found[0] if len(found) == 1 else None


def _split_and(items: list) -> list[str]:
    """Filters joined with AND in one item, split (outside quotes): "a = 1 AND b = 'x'" -> two filters."""
    out = []
    for item in items:
        parts = re.split(r"\s+and\s+(?=(?:[^']*'[^']*')*[^']*$)", str(item), flags=re.I)
        merged: list[str] = []
        for part in parts:     # "year between 1990 and 1999" stays one filter
            if merged and re.search(r"\bbetween\s+\S+$", merged[-1], re.I):
                merged[-1] += f" and {part}"
            else:
                merged.append(part)
        out += [m.strip() for m in merged if m.strip()]
    return out


def parse_plan(text: str, layer: SemanticLayer) -> Plan:
    """The model's reply as a checked Plan; PlanError says what is wrong."""
    try:
        data = yaml_mapping(text)
    except ValueError as e:
        shape = "the plan must be a mapping with metrics:, group_by:, where:, order_by:, limit:"
        raise PlanError(f"the plan is not valid YAML: {str(e).removeprefix('reply is not valid YAML: ')}"
                        if "not valid YAML" in str(e) else shape) from e
    unknown = set(data) - set(KEYS)
    if unknown:
        raise PlanError(f"unknown plan key(s) {sorted(unknown)}: use {', '.join(KEYS)}")
    groups_named = [str(g).strip() for g in _list(data.get("group_by"), "group_by")]
    # A metric listed under group_by is meant as a metric (the model mixes the two lists up).
    stray = [g for g in groups_named if metric_named(g, layer) and not _is_dimension(g, layer)]
    named = [str(m).strip() for m in _list(data.get("metrics"), "metrics")] + stray
    metrics = [metric_named(m, layer) or m for m in named]
    # A dimension listed among the metrics is meant as a grouping.
    moved = [m for m in metrics if m not in layer.metrics and _is_dimension(m, layer)]
    metrics = [m for m in metrics if m not in moved]
    if not metrics and not groups_named + moved:
        raise PlanError("the plan names no metric")
    bad = [m for m in metrics if m not in layer.metrics]
    if bad:
        raise PlanError(f"unknown metric(s) {bad}: use one of {', '.join(layer.metrics)}")
    plan = Plan(metrics=list(dict.fromkeys(metrics)))
    plan.where = [_filter(w, layer) for w in _split_and(_list(data.get("where"), "where"))]
    fixed = {d for d, op, _ in plan.where if op == "="}
    groups = [resolve(g, layer) for g in groups_named + moved if g not in stray]
    # Grouping by a dimension the filters fix to one value only repeats that value in a column.
    plan.group_by = [g for g in dict.fromkeys(groups) if g not in fixed]
    for item in _list(data.get("order_by"), "order_by"):
        s = str(item).strip()
        desc = s.startswith("-") or bool(re.search(r"\s+desc$", s, re.I))
        name = resolve(re.sub(r"^-|\s+(desc|asc)$", "", s, flags=re.I), layer, metric_ok=True)
        if name not in plan.metrics and name not in plan.group_by:
            (plan.metrics if name in layer.metrics else plan.group_by).append(name)
        plan.order_by.append(("-" if desc else "") + name)
    if not plan.metrics and not plan.group_by:
        raise PlanError("the plan names no metric, and no dimension to list")
    if not plan.metrics and {*plan.group_by, *(d for d, _, _ in plan.where)} & set(GRAINS):
        # A list of values has no time of its own: MetricFlow would read its time spine, not the entity's dates.
        raise PlanError("a list of values (a plan without a metric) cannot use year, month, ...: name a metric")
    limit = data.get("limit")
    if limit is not None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise PlanError(f"limit must be a positive whole number, not {limit!r}")
        plan.limit = limit
    return plan


def filter_named(plan: Plan, links: list[tuple[str, str]]) -> list[str]:
    """A dimension the plan groups by while the question names one of its values ("the 1927 New York Yankees"
    grouped by team name, the Yankees never filtered: with ``limit: 1``, any team's row) becomes the filter the
    question states; ``links`` are ``catalog.value_links``. Returns the filters added. A dimension the plan already
    filters on, and a list of values (a plan without a metric), are left as they are."""
    if not plan.metrics:
        return []
    filtered = {d for d, _, _ in plan.where}
    moved: dict[str, str] = {}
    for dim, value in links:
        if dim in plan.group_by and dim not in filtered and dim not in moved:
            moved[dim] = value
    for dim, value in moved.items():
        plan.where.append((dim, "=", "'" + value.replace("'", "''") + "'"))
    plan.group_by = [g for g in plan.group_by if g not in moved]
    plan.order_by = [o for o in plan.order_by if o.lstrip("-") not in moved]
    return [f"{d} = '{v}'" for d, v in moved.items()]


def _is_dimension(name: str, layer: SemanticLayer) -> bool:
    try:
        resolve(name, layer)
        return True
    except PlanError:
        return False


_NULL = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.]*)\s+is\s+(not\s+)?null\s*$", re.I)


def _filter(text: str, layer: SemanticLayer) -> tuple[str, str, str]:
    null = _NULL.match(text)
    if null:
        return resolve(null.group(1), layer), "is not" if null.group(2) else "is", "NULL"
    m = _FILTER.match(text)
    if not m:
        raise PlanError(f"filter {text!r}: write it as name operator value, e.g. year = 2019")
    name, op, value = m.group(1), " ".join(m.group(2).lower().split()), m.group(3)
    if name in layer.metrics:
        raise PlanError(f"filter {text!r} is on a metric; only dimensions can be filtered on the plan path")
    return resolve(name, layer), "=" if op == "==" else op, value


def _literal(value: str, grain: str | None) -> str:
    v = value.strip()
    if grain:
        year = re.fullmatch(r"'?(\d{4})'?", v)
        if year and grain == "year":
            return f"'{year.group(1)}-01-01'"
        if grain == "year":
            raise PlanError(f"year must be compared with a year such as 2019, not {v}")
        return v if v.startswith("'") else f"'{v}'"
    if _NUMBER.match(v) or v.startswith(("'", "(")) or v.upper() in ("TRUE", "FALSE", "NULL"):
        return v
    return "'" + v.strip('"').replace("'", "''") + "'"


def where_filters(plan: Plan, layer: SemanticLayer) -> list[str]:
    """The plan's plain filters in MetricFlow's where syntax."""
    out = []
    for name, op, value in plan.where:
        grain = name if name in GRAINS else None
        ref = f"{{{{ TimeDimension('metric_time', '{grain}') }}}}" if grain else f"{{{{ Dimension('{name}') }}}}"
        if op == "between":
            lo, _, hi = re.split(r"\s+(and)\s+", value, maxsplit=1, flags=re.I)
            out.append(f"{ref} >= {_literal(lo, grain)} AND {ref} <= {_literal(hi, grain)}")
        elif op in ("is", "is not"):
            out.append(f"{ref} {op.upper()} NULL")
        elif op in ("in", "not in"):
            items = [x.strip() for x in value.strip().strip("()[]").split(",") if x.strip()]
            out.append(f"{ref} {op.upper()} ({', '.join(_literal(x, grain) for x in items)})")
        else:
            out.append(f"{ref} {op.upper() if op.isalpha() or ' ' in op else op} {_literal(value, grain)}")
    return out


def label(name: str) -> str:
    """A metric's or dimension's name in plain words: ``home_runs`` → "home runs", ``player__full_name`` →
    "player", ``team_season__team_name`` → "team", ``team_season__won_world_series`` → "won world series"."""
    entity, _, attr = name.rpartition("__")
    if attr.endswith("_name") or attr == "name":
        base = attr[: -len("_name")] if attr != "name" else ""
        attr = entity if base in ("", "full") and entity else base
    return attr.replace("_", " ")


def field_label(name: str) -> str:
    """A metric's or dimension's name as a person reads it in a plan: ``home_runs`` → "home runs",
    ``player__full_name`` → "player's full name"."""
    entity, _, attr = name.rpartition("__")
    words = attr.replace("_", " ")
    return f"{entity.replace('_', ' ')}'s {words}" if entity else words


def labelled(plan: Plan) -> dict[str, list[str]]:
    """The plan with each name as its label (the page's plan box, the CLI's plan lines); the plan as the model
    wrote it stays in ``as_dict()`` for those who want it."""
    return {"measures": [field_label(m) for m in plan.metrics], "by": [field_label(g) for g in plan.group_by],
            "where": [f"{field_label(d)} {OPERATOR_WORDS.get(op, op)} {v}" for d, op, v in plan.where],
            "order": [f"{field_label(o.lstrip('-'))}, {first_words(o.startswith('-'))} first"
                      for o in plan.order_by],
            "limit": [str(plan.limit)] if plan.limit else []}


def _filter_words(d: str, op: str, v: str) -> str:
    if d in ("year", "metric_time__year") and op == "=":
        return f"in {v}"
    return f"{label(d)} {OPERATOR_WORDS.get(op, op)} {v}"


def describe(plan: Plan, layer: SemanticLayer) -> str:
    """The derivation in plain words, from the file's names and formulas: 'home runs (sum of batting.hr) by
    player, in 2019, highest first, top 1'."""
    what = ", ".join(f"{label(m)} ({layer.metrics[m].formula})" for m in plan.metrics) or \
        "the values of " + ", ".join(label(g) for g in plan.group_by)
    parts = [what + (" by " + ", ".join(label(g) for g in plan.group_by) if plan.group_by and plan.metrics else "")]
    parts += [_filter_words(d, op, v) for d, op, v in plan.where]
    for o in plan.order_by:
        ranked = label(o.lstrip("-"))
        first = first_words(o.startswith("-"))
        parts.append(f"{first} first" if o.lstrip("-") in plan.metrics and len(plan.order_by) == 1
                     else f"by {ranked}, {first} first")
    if plan.limit:
        parts.append(f"top {plan.limit}" if plan.order_by else f"first {plan.limit}")
    return ", ".join(parts)


def run_cli(argv: list[str] | None, description: str, show) -> int:
    """``python -m ... PATH "PLAN"``: the plan checked against the file, then ``show(plan, layer)`` printed."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("path")
    ap.add_argument("plan")
    args = ap.parse_args(argv)
    layer = load_layer(args.path)
    try:
        print(show(parse_plan(args.plan, layer), layer))
    except PlanError as e:
        print(f"error: {e}")
        return 1
    return 0
