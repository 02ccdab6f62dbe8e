"""Whether a plan covers its question (issue 53): the plan path answers only what its plan covers.

A plan the model wrote over the semantic file compiles and runs whatever it means, so before its query runs the
plan is held to the question, without the model, by small named rules (``RULES``, in the order they speak); the
first that objects sends the question on the SQL path, its reason in ``shared["plan"]["gate"]`` and ``--trace``:

- ``names_no_entity``: the question asks who or which (a name) and the plan groups by nothing: it answers a number
  ("Who won the AL MVP in 2012?" answered with a count of awards);
- ``unstated_limit``: the plan keeps the top N rows of a grouping, and the question states no number and no
  superlative ("Which players were inducted in 2018?" kept 5; one row is fine for "Who won ...", not for "Which
  players ...");
- ``unstated_filter``: the plan filters on a value the question does not state: not its words, not one of the
  question's value links, not its initials ("MVP" for 'Most Valuable Player') or a code it begins ('CAN' for
  "Canada"), not a yes/no flag whose dimension
  the question names ("won the World Series": ``won_world_series = 'Y'``; its 'N' only where the question negates);
  a number or year the question does not hold ("made_playoffs = 'Yes'" for "the biggest home attendance");
- ``missing_time``: the question states a year or "this season" and the plan filters on no time and groups by
  none ("the most wins this season" over every season);
- ``missing_year``: a year the question states is in no filter of the plan;
- ``other_entity``: the question names a thing the semantic file models (a game, a draft) that the plan's metrics
  and dimensions do not come from ("the highest-scoring playoff game" answered from player seasons);
- ``unused_words``: a word of the question names a column of the database (a table's or a model's: "lead changes")
  and nothing in the plan stands for it (its metrics' and dimensions' names and synonyms, its filters' values, its
  models): the plan answers the question without it.

Rules read the plan (``plan.Plan``), the layer and the question's value links; none calls the model.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from duckask.utils.lexicon import NOT_SUPERLATIVE, SUPERLATIVES, one_of
from duckask.utils.schema.catalog import per_catalog
from duckask.utils.schema.terms import question_terms, split_ident
from duckask.utils.semantic.manifest import SemanticLayer
from duckask.utils.semantic.plan import Plan, label

_WHO = re.compile(r"^\s*(who|whom|which|what (player|team|college|school|pitcher|manager|coach|referee|city|"
                  r"arena|country)s?)\b", re.I)
_SUPERLATIVE = re.compile(r"\b(" + one_of(SUPERLATIVES, ("first", "last")) + r"|\w+est)\b", re.I)
_YEAR = re.compile(r"\b(1[89]\d\d|20\d\d)\b")
_NOW = re.compile(r"\b(this|last|current|past) (season|year)\b", re.I)
_FLAG = {"y", "n", "yes", "no", "true", "false", "t", "f", "1", "0"}
_NO = {"n", "no", "false", "f", "0"}
_NEGATED = re.compile(r"\b(not|never|no|without|didn'?t|did not|wasn'?t|weren'?t|failed|missed|lost)\b", re.I)
_TIME = ("year", "season", "date", "month", "day", "metric_time")

Rule = Callable[[str, Plan, SemanticLayer, list[str], "frozenset[str]"], "str | None"]


def _norm_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower())}


def _superlative(question: str) -> bool:
    return any(m.group(0).lower() not in NOT_SUPERLATIVE for m in _SUPERLATIVE.finditer(question))


def _is_time(dimension: str) -> bool:
    return dimension.split("__")[-1] in _TIME or any(t in dimension.split("__")[-1] for t in ("year", "season",
                                                                                              "date"))


def names_no_entity(question: str, plan: Plan, layer: SemanticLayer, linked: list[str],
    columns: frozenset[str] = frozenset()) -> str | None:
    if _WHO.match(question) and not plan.group_by and plan.metrics:
        return "the question asks who or which, and the plan groups by nothing: it would answer with a number"
    return None


_PLURAL_ASKED = re.compile(r"^\s*(which|what|list|name|show( me)?|give me)\s+(the\s+)?(\w+s)\b"
                           r"|^\s*(who|what) (are|were)\b|^\s*list\b", re.I)


def unstated_limit(question: str, plan: Plan, layer: SemanticLayer, linked: list[str],
    columns: frozenset[str] = frozenset()) -> str | None:
    """A limit the question does not state: more than one row with no number or superlative said, or one row where
    it asks for several ("Which players were inducted ...")."""
    if not (plan.group_by and plan.limit) or _superlative(question) or str(plan.limit) in _norm_words(question):
        return None
    if plan.limit > 1 or _PLURAL_ASKED.search(question):
        return (f"the plan keeps {plan.limit} row{'s' if plan.limit > 1 else ''}, and the question states neither a "
                "number nor a superlative: it asks for all of them")
    return None


def _stated(value: str, dimension: str, question: str, linked: list[str]) -> bool:
    v = value.strip().strip("'\"")
    words, asked = _norm_words(v), _norm_words(question)
    if not words or words <= asked or v.lower() in (x.lower() for x in linked):
        return True
    initials = "".join(w[0] for w in re.findall(r"[A-Za-z]+", v)).lower()
    if len(initials) >= 2 and initials in asked:                     # "MVP" for 'Most Valuable Player'
        return True
    if v.isalpha() and len(v) <= 3 and any(w.startswith(v.lower()) for w in asked):   # 'CAN' for "Canada"
        return True
    if v.lower() in _FLAG:                                           # a yes/no flag whose dimension is named
        if v.lower() in _NO and not _NEGATED.search(question):       # "won the World Series": not won = 'N'
            return False
        named = set(question_terms(label(dimension)))
        return bool(named) and len(named & set(question_terms(question))) * 2 >= len(named)
    return False


def unstated_filter(question: str, plan: Plan, layer: SemanticLayer, linked: list[str],
    columns: frozenset[str] = frozenset()) -> str | None:
    for dimension, op, value in plan.where:
        if op in ("is", "is not") or _is_time(dimension):
            continue
        if not _stated(value, dimension, question, linked):
            return (f"the plan filters {label(dimension)} {op} {value.strip()}, which the question does not state")
    return None


def missing_time(question: str, plan: Plan, layer: SemanticLayer, linked: list[str],
    columns: frozenset[str] = frozenset()) -> str | None:
    timed = any(_is_time(d) for d, _, _ in plan.where) or any(_is_time(d) for d in plan.group_by)
    stated = _YEAR.search(question) or _NOW.search(question)
    if stated and not timed:
        said = stated.group(0)
        return f"the question states a time ({said}) and the plan filters on none: it would answer for every season"
    return None


def missing_year(question: str, plan: Plan, layer: SemanticLayer, linked: list[str],
    columns: frozenset[str] = frozenset()) -> str | None:
    held = " ".join(v for d, _, v in plan.where if _is_time(d))
    for year in _YEAR.findall(question):
        if held and year not in held and str(int(year) - 1) not in held:   # "2024-25" may be filed as 2024 or 2025
            return f"the question states {year}, and the plan's time filter ({held.strip()}) is another"
    return None


def _models_of(plan: Plan, layer: SemanticLayer) -> set[str]:
    """The semantic models (and entities) the plan's dimensions and metrics come from."""
    out = {d.split("__")[0] for d in plan.group_by} | {d.split("__")[0] for d, _, _ in plan.where if "__" in d}
    measures = {}
    for sm in layer.manifest.semantic_models:
        for m in sm.measures:
            measures[m.name] = sm
    for metric in layer.manifest.metrics:
        if metric.name in plan.metrics:
            for ref in getattr(metric, "input_measures", None) or []:
                owner = measures.get(ref.name)
                if owner is not None:
                    out |= {owner.name, *(e.name for e in owner.entities)}
    return out


def other_entity(question: str, plan: Plan, layer: SemanticLayer, linked: list[str],
    columns: frozenset[str] = frozenset()) -> str | None:
    asked = set(question_terms(question))
    mine = {t for m in _models_of(plan, layer) for t in question_terms(m.replace("_", " "))}
    for sm in layer.manifest.semantic_models:
        for name in [sm.name, *(e.name for e in sm.entities if e.type.value == "primary")]:
            terms = set(question_terms(name.replace("_", " ")))
            if terms and terms <= asked and not terms & mine:
                return (f"the question asks about {name.replace('_', ' ')}, and the plan answers from "
                        f"{', '.join(sorted(_models_of(plan, layer))) or 'no model'}")
    return None


#: Words of column names too common to say what a question asks for (every table has them).
_COMMON = {"id", "name", "key", "code", "type", "num", "number", "total", "count", "date", "year", "season", "time",
           "day", "game", "team", "player", "first", "last", "full", "short", "flag", "is", "has", "the", "of", "per",
           "by", "in", "on", "at", "to", "for", "from", "with", "and", "a", "no", "stat", "stats", "most", "top"}


def _plan_terms(plan: Plan, layer: SemanticLayer) -> set[str]:
    """The words the plan stands for: its metrics' and dimensions' names and synonyms, its filters' values, the
    semantic models it reads."""
    names = [layer.metrics.get(m) for m in plan.metrics]
    names += [layer.dimensions.get(d) for d in [*plan.group_by, *(d for d, _, _ in plan.where)]]
    words = [w for n in names if n is not None for w in [n.name.replace("__", " ").replace("_", " "), *n.synonyms,
                                                         n.description]]
    words += [str(v) for _, _, v in plan.where] + [m.replace("_", " ") for m in _models_of(plan, layer)]
    return {t for w in words for t in question_terms(w)}


def unused_words(question: str, plan: Plan, layer: SemanticLayer, linked: list[str],
                 columns: frozenset[str] = frozenset()) -> str | None:
    """A word of the question that names a column of the database (its tables' or models': "lead changes") and
    that nothing in the plan stands for: the plan answers a question without it."""
    words = [w for w in re.findall(r"[a-z]+", question.lower()) if len(w) > 2]
    said = {t: w for w in words for t in question_terms(w)}
    used = _plan_terms(plan, layer) | {t for v in linked for t in question_terms(v)}
    left = [w for t, w in said.items() if t in columns and t not in used and t not in _COMMON_TERMS]
    if left:
        return f"the question says {', '.join(repr(w) for w in left)}, which no part of the plan stands for"
    return None


_COMMON_TERMS = {t for w in _COMMON for t in question_terms(w)} | set(_COMMON)

RULES: list[Rule] = [names_no_entity, unstated_limit, unstated_filter, missing_time, missing_year, other_entity,
                    unused_words]


@per_catalog
def column_words(catalog) -> frozenset[str]:
    """The stemmed words of every column name of the database (tables and models): what a question's word must be
    to be held against the plan (``unused_words``)."""
    return frozenset(w for t in catalog.tables.values() for c in t.columns for w in split_ident(c.name) if len(w) > 2)


def gate(question: str, plan: Plan, layer: SemanticLayer, linked: list[str] | None = None,
         columns: frozenset[str] = frozenset()) -> tuple[str, str] | None:
    """(the rule, why) when the plan does not cover the question, else None; ``linked``: the values the question's
    words link to (``schema.values.match_values``), each a stated value; ``columns``: ``column_words`` of the
    database (without them ``unused_words`` holds nothing against the plan)."""
    for rule in RULES:
        why = rule(question, plan, layer, linked or [], columns)
        if why:
            return rule.__name__, why
    return None
