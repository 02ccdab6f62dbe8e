"""What ``duckask learn`` found on a database: every synthesized query it tried, and the pairs it kept.

One JSON-lines file per database (``<cache_dir>/learned/<key>.jsonl``, private to its user), one record per draft
tried: its SQL, kind, tables, and either the question that read back to the same rows (``kept``) or why it was
refused. Appending a record as each draft ends makes ``learn`` resumable: a run skips the drafts already tried with
the same model. Kept apart from what people taught: a learned pair is never a template that answers alone
(MatchTemplate reads only the taught pairs), never shown as kept by anyone (its ``origin`` is ``learned``), and is
shown to SQLGenerator only beside or after taught pairs (``TableSelector``).
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import Counter
from pathlib import Path

from duckask.utils.knowledge.examples import Example

_LOCK = threading.Lock()
_LOADED: dict[tuple, list[Example]] = {}


def learned_path(db, settings) -> Path:
    """The file of ``db``'s learned pairs (keyed like kept pairs: ``database_identity`` of its source)."""
    from duckask.utils.knowledge.store import database_identity

    key = hashlib.sha256(database_identity(db.source).encode()).hexdigest()[:24]
    return settings.resolved_cache_dir / "learned" / f"{key}.jsonl"


class LearnedStore:
    """The records of one database's learning (see the module's text)."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def records(self) -> list[dict]:
        """Every record, oldest first; a torn last line (a run killed mid-write) is skipped."""
        if not self.path.exists():
            return []
        out = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        return out

    def tried(self, model: str) -> set[str]:
        """The SQL of every draft already tried with ``model`` (what a resumed run skips)."""
        return {r["sql"] for r in self.records() if r.get("model") == model}

    def add(self, record: dict) -> None:
        """Append one draft's record (0600, its folder 0700)."""
        with _LOCK:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            with os.fdopen(fd, "a", encoding="utf-8") as f:
                f.write(json.dumps(record, default=str) + "\n")

    def kept(self) -> list[dict]:
        return [r for r in self.records() if r.get("status") == "kept"]


def _said(question: str) -> str:
    return " ".join(question.lower().rstrip("?.! ").split())


def learned_for(db, settings, catalog) -> list[Example]:
    """The pairs learned for ``db`` whose tables are all still in ``catalog`` and whose question was kept for one query
    only, as examples of origin ``learned``, the ones its asker may run (``knowledge.offered``); none with ``learned:
    off``."""
    from duckask.utils.knowledge import offered

    if settings.learned == "off":
        return []
    path = learned_path(db.unscoped, settings)
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return []
    key = (str(path), stamp)
    with _LOCK:
        pairs = _LOADED.get(key)
    if pairs is None:
        kept = LearnedStore(path).kept()
        asked = Counter(_said(r["question"]) for r in kept)
        # A question kept for two queries (the top 5 by age of two tables) does not say which one it means: neither.
        pairs = [Example(question=r["question"], sql=r["sql"], id=f"learned:{i}", tables=list(r.get("tables") or []),
                         origin="learned")
                 for i, r in enumerate(kept, 1) if asked[_said(r["question"])] == 1]
        with _LOCK:
            if len(_LOADED) > 16:
                _LOADED.clear()
            _LOADED[key] = pairs
    tables = set(catalog.tables)
    return offered(db, [p for p in pairs if p.tables and set(p.tables) <= tables])
