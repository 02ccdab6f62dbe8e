"""Question files for batch evaluation: read them, filter them, and find each question's database.

Formats:
- JSONL, YAML (a list, or a mapping with ``questions:``) or CSV rows with at least ``id`` and
  ``question``; optional ``db`` (a path, relative to the file, or a db_id), ``db_id``, ``gold_sql``
  (``query`` and ``SQL`` are accepted too), ``expected`` (answer rows, a list of lists; JSON text in CSV),
  ``ordered`` (expected rows are in order), ``tags`` (a list; ``;``-separated in CSV) and ``answer_columns``: the
  gold columns the question asks for (``all``: every one), each a name or a list of names that may be answered as
  one joined column (a first and a last name); the answer is then also scored as a user reads it
  (``compare.answer_holds``: those columns' values row for row, extra columns allowed) beside strict EX.
- The Spider layout: a folder with ``dev.json`` (+ ``tables.json``) and
  ``database/<db_id>/<db_id>.sqlite`` (imported through Python's sqlite3).
- The SpiderMan/DuckDB layout: a folder with ``questions.jsonl`` and ``dbs/<db_id>/`` EXPORT DATABASE
  folders.
"""
from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml


@dataclass
class Question:
    id: str
    question: str
    db: str | None = None          # resolved database path
    db_id: str | None = None
    gold_sql: str | None = None
    expected: list[list[Any]] | None = None
    ordered: bool = False
    tags: list[str] = field(default_factory=list)
    answer_columns: list[list[str]] | Literal["all"] | None = None    # None: not annotated; "all": every gold column


def _answer_columns(v: Any, where: str) -> list[list[str]] | Literal["all"] | None:
    if v is None or v == "":
        return None
    if v == "all":
        return "all"
    if isinstance(v, str):
        v = [p.strip() for p in v.split(";") if p.strip()]
    if not isinstance(v, list) or not v or not all(isinstance(e, str) or (isinstance(e, list) and e and all(
            isinstance(x, str) for x in e)) for e in v):
        raise ValueError(f"{where}: answer_columns must be 'all' or a list of column names (a list of names for "
                         "columns that may be answered joined, such as [first_name, last_name])")
    return [[e] if isinstance(e, str) else list(e) for e in v]


def _tags(v: Any) -> list[str]:
    if v is None or v == "":
        return []
    if isinstance(v, str):
        return [t.strip() for t in v.replace(",", ";").split(";") if t.strip()]
    return [str(t) for t in v]


def _from_row(row: dict[str, Any], i: int, base: Path) -> Question:
    q = row.get("question") or row.get("q")
    if not q:
        raise ValueError(f"row {i + 1} has no question")
    expected = row.get("expected")
    if isinstance(expected, str) and expected.strip():
        expected = json.loads(expected)
    db = row.get("db") or row.get("database")
    db_id = row.get("db_id")
    if db and not db_id and not any(ch in str(db) for ch in "/\\.") and not (base / str(db)).exists():
        db_id, db = str(db), None           # a bare name is a db_id
    elif db:
        p = Path(str(db)).expanduser()
        db = str(p if p.is_absolute() else (base / p))
    return Question(id=str(row.get("id") or row.get("question_id") or f"q{i + 1:04d}"), question=str(q).strip(),
                    db=db, db_id=db_id, gold_sql=row.get("gold_sql") or row.get("query") or row.get("SQL"),
                    expected=expected or None, ordered=str(row.get("ordered", "")).lower() in ("1", "true", "yes"),
                    tags=_tags(row.get("tags")), answer_columns=_answer_columns(row.get("answer_columns"),
                                                                               f"row {i + 1}"))


def load_questions(path: str | Path) -> tuple[list[Question], Path | None]:
    """The questions in ``path`` and, for folder layouts, the folder holding their databases."""
    p = Path(path).expanduser()
    if not p.exists():
        raise ValueError(f"question file not found: {p}")
    if p.is_dir():
        if (p / "questions.jsonl").is_file():
            qs, _ = load_questions(p / "questions.jsonl")
            return qs, p / "dbs"
        if (p / "dev.json").is_file():
            rows = json.loads((p / "dev.json").read_text())
            qs = [_from_row({"id": f"dev-{i:04d}", "question": r["question"], "db_id": r["db_id"],
                             "gold_sql": r.get("query")}, i, p) for i, r in enumerate(rows)]
            return qs, p / "database"
        raise ValueError(f"{p} is a folder but holds neither questions.jsonl nor dev.json")
    suffix = p.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        rows = [json.loads(line) for line in p.read_text().splitlines() if line.strip()]
    elif suffix in (".yaml", ".yml"):
        data = yaml.safe_load(p.read_text())
        rows = data.get("questions", []) if isinstance(data, dict) else data
    elif suffix == ".csv":
        with p.open(newline="") as f:
            rows = list(csv.DictReader(f))
    elif suffix == ".json":
        data = json.loads(p.read_text())
        rows = data.get("questions", []) if isinstance(data, dict) else data
    else:
        raise ValueError(f"unknown question file type {suffix!r}: use .jsonl, .yaml, .csv or a Spider folder")
    if not isinstance(rows, list):
        raise ValueError(f"{p} must hold a list of questions")
    qs = [_from_row(r, i, p.parent) for i, r in enumerate(rows)]
    seen: set[str] = set()
    for q in qs:
        if q.id in seen:
            raise ValueError(f"duplicate question id {q.id!r} in {p}")
        seen.add(q.id)
    return qs, None


def read_ids(path: str | Path) -> list[str]:
    return [line.strip() for line in Path(path).read_text().splitlines() if line.strip() and not line.startswith("#")]


def resolve_db(q: Question, *, db: str | None = None, db_dir: str | Path | None = None) -> str:
    """The database for one question: ``db`` for all, else the row's path, else its db_id in ``db_dir``."""
    if db:
        return db
    if q.db:
        return q.db
    if not q.db_id:
        raise ValueError(f"question {q.id} names no database: pass --db or give the row a db/db_id")
    if db_dir is None:
        raise ValueError(f"question {q.id} has db_id {q.db_id!r}: pass --db-dir")
    d = Path(db_dir)
    for cand in (d / f"{q.db_id}.duckdb", d / q.db_id / f"{q.db_id}.sqlite", d / q.db_id, d / f"{q.db_id}.sqlite"):
        if cand.exists():
            return str(cand)
    raise ValueError(f"no database for db_id {q.db_id!r} in {d} (looked for <id>.duckdb, <id>/ and <id>.sqlite)")


def select(questions: list[Question], ids: list[str] | None) -> list[Question]:
    """Keep ``ids`` (in the file's order); unknown ids are an error, so a typo cannot shrink a sample."""
    if not ids:
        return questions
    known = {q.id for q in questions}
    missing = [i for i in ids if i not in known]
    if missing:
        raise ValueError(f"{len(missing)} id(s) not in the question file, e.g. {missing[0]!r}")
    wanted = set(ids)
    return [q for q in questions if q.id in wanted]
