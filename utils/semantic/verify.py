"""Does every metric of a semantic layer compile and run on the database? (``duckask semantic check --db``)

``verify_metrics(layer, db)`` compiles each metric alone through MetricFlow and runs it with LIMIT 1 on the
read-only executor; it returns (metric, error) for each that fails. It also checks that every dimension
compiles with the first metric that accepts it, when ``dimensions`` is true.

Run on its own::

    python -m duckask.utils.semantic.verify PATH --db DB
"""
from __future__ import annotations

import argparse

from duckask.utils.semantic.compile import compile_plan
from duckask.utils.semantic.manifest import SemanticLayer, load_layer
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


def main(argv: list[str] | None = None) -> int:
    from duckask.utils.config import load_settings
    from duckask.utils.db.database import open_database

    ap = argparse.ArgumentParser(description="Compile and run every metric of a semantic file.")
    ap.add_argument("path")
    ap.add_argument("--db", required=True)
    args = ap.parse_args(argv)
    # the directory's models (if any) are built with it, so metrics over them run
    problems = verify_metrics(load_layer(args.path), open_database(args.db, load_settings(None, semantic=args.path)))
    for name, error in problems:
        print(f"{name}: {error}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
