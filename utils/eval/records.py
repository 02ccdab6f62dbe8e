"""Eval records: one JSON object per question, appended and fsynced as each question finishes, so a
kill loses nothing that had finished; ``.gz`` files (large committed runs) are read too.
"""
from __future__ import annotations

import gzip
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """Complete records in ``path`` (``.gz``: gzip-compressed, as large committed runs are kept); a
    line cut short by a kill is ignored (its question reruns)."""
    p = Path(path)
    if not p.exists():
        return []
    text = gzip.decompress(p.read_bytes()).decode() if p.suffix == ".gz" else p.read_text()
    out = []
    for line in text.splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict) and "id" in rec:
            out.append(rec)
    # Two runs appending to one file must not count a question twice: the latest record wins.
    return list({r["id"]: r for r in out}.values())


class RecordWriter:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        # A previous run killed mid-line leaves a partial last line: cut it off (its question reruns), so
        # the file stays whole JSONL lines.
        if self.path.exists() and self.path.stat().st_size:
            data = self.path.read_bytes()
            if not data.endswith(b"\n"):
                with self.path.open("r+b") as f:
                    f.truncate(data.rfind(b"\n") + 1)

    def append(self, rec: dict[str, Any]) -> None:
        line = json.dumps(rec, default=str) + "\n"
        with self._lock, self.path.open("a") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())


RECORDED_SQL = ("sql", "first_sql", "baseline_sql")


def recorded_queries(rec: dict[str, Any]) -> list[tuple[str, str]]:
    """(kind, sql) for every query a record holds: the final ``sql``, the ``first_sql``, the
    ``baseline_sql`` and each resample draft (kind ``draft``); empty ones left out."""
    out = [(k, rec.get(k)) for k in RECORDED_SQL] + [("draft", c.get("sql")) for c in rec.get("candidates") or []]
    return [(k, sql) for k, sql in out if sql]


def replay(paths: list[str | Path], questions: str | Path) -> Iterator[tuple[dict[str, Any], Any, Any, Any]]:
    """(record, question, database, catalog) for every record in ``paths``, each question's database
    opened (and its catalog read) once: what the replay benchmarks iterate over (no LLM)."""
    from duckask.utils.db.database import open_database
    from duckask.utils.eval.questions import load_questions, resolve_db
    from duckask.utils.semantic import get_catalog

    qs, db_dir = load_questions(questions)
    by_id = {q.id: q for q in qs}
    opened: dict[str, tuple] = {}
    for path in paths:
        for rec in read_records(path):
            q = by_id[rec["id"]]
            where = resolve_db(q, db_dir=db_dir)
            if where not in opened:
                db = open_database(where)
                opened[where] = (db, get_catalog(db))
            yield (rec, q, *opened[where])
