"""What duckask knows about a database, and what the model sees of it.

- ``read_catalog(db)``: the ``Catalog`` of a database as the database itself says it, from memory, then
  the on-disk JSON cache (keyed by the database file's path, size and mtime, so each database is
  introspected once), else by ``introspect``. The catalog the model reads, with the settings' semantic
  file applied, is ``duckask.utils.semantic.get_catalog`` (the layer above).
- ``catalog``: the types (``Catalog``, ``Table``, ``Column``, ``Reference``, ``ForeignKey``);
  ``introspect``: reading them from DuckDB (``nested``: how a STRUCT, LIST, MAP or JSON column is read);
  ``ddl``: ``render_ddl``, the compact schema the model reads; ``ranker``: schema linking (which
  tables and columns a question needs); ``values``: literal values and yes/no flags a question names;
  ``terms``: the words of questions and names (stemming, bigrams).

See the schema exactly as the model sees it, and how the ranker scores each table for a question::

    duckask schema --db PATH [--tables a,b] [--rank "question"]
"""
from __future__ import annotations

import hashlib
import threading
from typing import TYPE_CHECKING

from duckask.utils.config import Settings, load_settings
from duckask.utils.db.database import Database, open_database

if TYPE_CHECKING:    # the modules themselves load on first use, so that `python -m` runs each once
    from duckask.utils.schema.catalog import Catalog

__all__ = ["read_catalog"]

_MEM: dict[str, Catalog] = {}
_MEM_LOCK = threading.Lock()


def read_catalog(db: Database | str, settings: Settings | None = None) -> Catalog:
    """The catalog of ``db`` as the database says it, from memory, then the on-disk cache, else by
    introspection (no semantic file applied)."""
    settings = settings or load_settings()
    if not isinstance(db, Database):
        db = open_database(db, settings)
    from duckask.utils.schema.catalog import Catalog
    from duckask.utils.schema.introspect import introspect

    with _MEM_LOCK:
        if db.key in _MEM:
            return _MEM[db.key]
        name = hashlib.sha256(db.key.encode()).hexdigest()[:20] + ".json"
        cache_file = settings.resolved_cache_dir / "catalogs" / name
        cat = None
        if cache_file.is_file():
            try:
                cat = Catalog.from_json(cache_file.read_text())
            except (ValueError, KeyError, TypeError):
                cat = None
        if cat is None:
            cat = introspect(db)
            cache_file.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache_file.with_suffix(".tmp")
            tmp.write_text(cat.to_json())
            tmp.replace(cache_file)
        _MEM[db.key] = cat
        return cat
