"""The semantic layer: dbt's semantic model spec, parsed and compiled by MetricFlow.

- ``manifest``: load and validate a semantic file or directory (``load_layer``), with duckask's side
  section and ``meta`` extras; the names a plan may use;
- ``catalog``: what is read of it: the plan prompt's catalog, the SQL path's descriptions, and which
  metrics a question reaches;
- ``plan``: the small plan the model writes (metrics, group_by, where, order_by, limit), checked, and
  its plain filters translated into MetricFlow's where syntax;
- ``compile``: plan -> DuckDB SQL through MetricFlow's engine (explain only; duckask runs the SQL);
- ``grammar``: the GBNF grammar of a plan over the layer's names, which holds the embedded model's plan to them;
- ``draft``: ``duckask semantic init`` (a first draft from the catalog) and ``convert`` (the older
  semantic file into this format); ``families``: draft model files for entities several table families describe;
- ``verify``: every metric compiled and run on the database (``duckask semantic check --db``).

Run on its own (check a semantic file and print its catalog)::

    python -m duckask.utils.semantic PATH
"""
from __future__ import annotations

import argparse


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Check a semantic file (dbt's spec) and list its metrics and dimensions.")
    ap.add_argument("path")
    args = ap.parse_args(argv)
    from duckask.utils.semantic.errors import SemanticFileError
    from duckask.utils.semantic.manifest import load_layer
    from duckask.utils.semantic.reading import catalog_text

    try:
        layer = load_layer(args.path)
    except SemanticFileError as e:
        print(f"error: {e}")
        return 1
    print(catalog_text(layer))
    return 0

