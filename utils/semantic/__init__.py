"""The semantic layer: dbt's semantic model spec, parsed and compiled by MetricFlow.

- ``manifest``: load and validate a semantic file or directory (``load_layer``), with duckask's side
  section and ``meta`` extras; the names a plan may use;
- ``get_catalog(db)``: the catalog the model reads: the database's own (``schema.read_catalog``) with the
  settings' semantic file applied (``descriptions``: dbt's spec, or the older YAML; ``markdown``: the
  older file written as markdown);
- ``reading``: what is read of a layer: the plan prompt's catalog, the SQL path's descriptions, and which
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
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from duckask.utils.config import Settings, load_settings
from duckask.utils.db.database import Database, open_database
from duckask.utils.schema import read_catalog

if TYPE_CHECKING:
    from duckask.utils.schema.catalog import Catalog

__all__ = ["get_catalog", "main"]

_DESCRIBED: dict[tuple, Catalog] = {}
_LOCK = threading.Lock()


def get_catalog(db: Database | str, settings: Settings | None = None) -> Catalog:
    """The catalog of ``db`` the model reads: ``read_catalog``'s, with the settings' ``descriptions``
    (semantic) file applied when there is one (kept per file version)."""
    settings = settings or load_settings()
    if not isinstance(db, Database):
        db = open_database(db, settings)
    cat = read_catalog(db, settings)
    if not settings.descriptions:
        return cat
    from duckask.utils.semantic.descriptions import apply_descriptions
    from duckask.utils.semantic.manifest import stamp

    key = (cat.key, str(Path(settings.descriptions).resolve()), stamp(settings.descriptions))
    with _LOCK:
        if key not in _DESCRIBED:
            _DESCRIBED[key] = apply_descriptions(cat, settings.descriptions)
        return _DESCRIBED[key]


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

