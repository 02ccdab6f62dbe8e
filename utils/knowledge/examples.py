"""Example question → SQL pairs: the type, the files a user writes, and the check every pair passes.

An examples file is YAML (a list, or ``examples:`` holding one) or JSONL, each entry with
``question`` and ``sql``::

    - question: Who scored the most points in a game this season?
      sql: SELECT PLAYER_NAME, PTS FROM nbacom_po_boxscore_traditional ORDER BY PTS DESC LIMIT 1

Run on its own (checks every pair of a file against a database)::

    python -m duckask.utils.knowledge.examples --db PATH FILE.yaml
"""
from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

from duckask.utils.db.tree import base_tables, column_names, sql_tree


@dataclass
class Example:
    question: str
    sql: str
    id: str = ""                                     # "file:3" or the store's id
    tables: list[str] = field(default_factory=list)  # the tables the SQL reads
    origin: str = "taught"                           # taught (a file, a person) or learned (``duckask learn``)

    def as_dict(self) -> dict:
        return asdict(self)


class ExampleError(ValueError):
    """A pair that cannot be kept; the message says what was wrong and what to do. ``public``, when set, is what a
    request is told instead (the store is out of reach: the message names it and the driver's text, for the log)."""

    def __init__(self, message: str, public: str | None = None):
        super().__init__(message)
        self.public = public


def shown(examples: list[dict]) -> str:
    """Example pairs as a prompt shows them: ``-- question`` then the SQL on one line (SQLGenerator,
    ProposeWrite)."""
    return "\n".join(f"-- {e['question']}\n{' '.join(e['sql'].split())};" for e in examples)


def tables_of(sql: str) -> list[str]:
    """The base tables a query reads (CTE names left out), in the order the text names them."""
    return base_tables(sql_tree(sql))


def columns_of(sql: str) -> set[str]:
    """The column names (lower-case, unqualified) a query mentions."""
    return column_names(sql_tree(sql))


def verify(db, question: str, sql: str) -> Example:
    """The pair as an ``Example`` when its SQL runs through the safe executor and returns rows;
    ``ExampleError`` otherwise. Table names are normalised to the catalog's spelling by DuckDB."""
    question, sql = " ".join((question or "").split()), (sql or "").strip().rstrip(";").strip()
    if not question:
        raise ExampleError("the question is empty: write the question this SQL answers")
    if not sql:
        raise ExampleError(f"no SQL for {question!r}: give the query that answers it")
    out = db.run(sql)
    if not out.ok:
        raise ExampleError(f"the SQL for {question!r} does not run ({out.status}): {(out.error or '').splitlines()[0]}")
    if out.df is None or len(out.df) == 0:
        raise ExampleError(f"the SQL for {question!r} returns no rows: an example must show an answer")
    return Example(question=question, sql=sql, tables=tables_of(sql))


def load_examples(path: str | Path) -> list[Example]:
    """The pairs of a YAML or JSONL file (not yet verified); a malformed file is an error naming the
    entry (YAML: the line) and what it lacks."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise ExampleError(f"examples file not found: {p}")
    text = p.read_text(encoding="utf-8")
    rows: list = []
    if p.suffix.lower() == ".jsonl":
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    rows.append((f"line {n}", json.loads(line)))
                except json.JSONDecodeError as e:
                    raise ExampleError(f"{p}, line {n}: not JSON ({e.msg})") from e
    else:
        try:
            data = yaml.compose(text)
        except yaml.YAMLError as e:
            raise ExampleError(f"{p}: not valid YAML: {e}") from e
        loaded = yaml.safe_load(text)
        if isinstance(loaded, dict) and "examples" in loaded:
            loaded = loaded["examples"]
            data = next(v for k, v in data.value if k.value == "examples")
        if not isinstance(loaded, list):
            raise ExampleError(f"{p}: expected a list of {{question, sql}} entries (or examples: [...])")
        rows = [(f"line {node.start_mark.line + 1}", item) for node, item in zip(data.value, loaded)]
    out = []
    for i, (where, row) in enumerate(rows, 1):
        if not isinstance(row, dict) or not all(str(row.get(k) or "").strip() for k in ("question", "sql")):
            raise ExampleError(f"{p}, {where}: each example needs a question and its sql")
        out.append(Example(question=" ".join(str(row["question"]).split()), sql=str(row["sql"]).strip().rstrip(";"),
                           id=f"{p.name}:{i}", tables=tables_of(str(row["sql"]))))
    return out


def main(argv: list[str] | None = None) -> int:
    from duckask.utils.db.database import open_database

    ap = argparse.ArgumentParser(description="Check every example of a file against a database.")
    ap.add_argument("--db", required=True)
    ap.add_argument("file")
    args = ap.parse_args(argv)
    db, bad = open_database(args.db), 0
    for ex in load_examples(args.file):
        try:
            verify(db, ex.question, ex.sql)
            print(f"ok    {ex.id}  {ex.question}")
        except ExampleError as e:
            bad += 1
            print(f"FAIL  {ex.id}  {e}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
