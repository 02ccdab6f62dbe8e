"""A plan that can only name what exists: a GBNF grammar (llama.cpp's grammar format) built from the layer's
catalog, which holds the embedded model's decoding of a plan to the metric and dimension names of the
semantic file.

The reply PlanQuery asks for is pre-filled with ``metrics: [``; the grammar covers the rest::

    home_runs]
    group_by: [player__full_name]
    where: [year = 2019]
    order_by: [-home_runs]
    limit: 1

A plan without a metric (``metrics: []``) must group by a dimension: a list of values ("List the teams in
California": ``]`` then ``group_by: [team__name]``, ``where: [team__state = CA]``). Metrics are exactly the
layer's metric names; ``group_by`` and a filter's name exactly its dimension names (MetricFlow's time
grains among them); ``order_by`` either; each key at most once, in this order, then the end (at most a
blank line: the model's own "\\n\\n" token must stay allowed there, or it would be pushed to the next
allowed token, a digit after ``limit: 1``). Filter values stay free text (the data's values are not all
in the catalog); ``parse_plan`` and MetricFlow still check everything, so the grammar removes unknown
names, not checking.

Run on its own (print the grammar of a semantic file)::

    python -m duckask.utils.semantic.grammar PATH
"""
from __future__ import annotations

import json

from duckask.utils.semantic.manifest import SemanticLayer

OPERATORS = ("=", "!=", "<>", ">=", "<=", ">", "<", "like", "not like", "in", "not in", "is not", "is")


def _alternatives(names: list[str]) -> str:
    """A GBNF alternation of literal names (JSON string quoting is GBNF's), longest first."""
    return " | ".join(json.dumps(n) for n in sorted(set(names), key=lambda n: (-len(n), n)))


def plan_grammar(layer: SemanticLayer) -> str:
    """The GBNF grammar of a plan's text after the pre-filled ``metrics: [``."""
    ops = _alternatives([f" {o} " for o in OPERATORS])
    rules = [
        # The end: the model's own "\n\n" is one token; a grammar that wanted a single "\n" there would push it
        # to the next allowed token instead (a digit after "limit: 1": "limit: 100").
        'root ::= (metric (", " metric)* "]" groupby? | "]" groupby) where? orderby? limit? "\\n"? "\\n"?',
        'groupby ::= "\\ngroup_by: [" dim (", " dim)* "]"',
        'where ::= "\\nwhere: [" cond (", " cond)* "]"',
        f"cond ::= dim ({ops}) value",
        'value ::= "(" [^)\\n]* ")" | "\'" [^\'\\n]* "\'" | [^,\\]\\n(\']+',
        'orderby ::= "\\norder_by: [" "-"? ordered (", " "-"? ordered)* "]"',
        "ordered ::= metric | dim",
        'limit ::= "\\nlimit: " [1-9] [0-9]?[0-9]?',
        f"metric ::= {_alternatives(list(layer.metrics))}",
        f"dim ::= {_alternatives(list(layer.dimensions))}",
    ]
    return "\n".join(rules) + "\n"
