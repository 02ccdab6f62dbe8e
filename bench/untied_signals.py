"""The ``untied`` signal (issue 53, item 5) for eval records written before it existed, without asking again.

``trust.grounding.untied_names`` needs the question, the final SQL and the words of the database's table and column
names; the records hold the first two, the database gives the third (opened as the run opened it: the NBA sets
through their semantic folder). A record that carries it already gets it again (the same function). The confidence's
leave-one-kind-out report (``bench/fit_confidence.py --loko``) can then measure the rule on the fit set's records.

    .venv/bin/python bench/untied_signals.py docs/results/confidence/records/*.jsonl.gz
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from sets import question_set  # noqa: E402

#: a record file's name begins with its suite; the configuration whose semantic folder the run read
SUITES = {"nba-tuning": "raw-examples", "nba-heldout": "raw-examples", "idioms-dev": None, "idioms-heldout": None,
          "lahman": None, "spider": None}


def source_of(path: Path) -> tuple[str, str | None, str | None]:
    """(questions, database, semantic folder) of a record file, by the suite its name begins with."""
    for prefix, config in SUITES.items():
        if path.name.startswith(prefix):
            return question_set("spider-dev" if prefix == "spider" else prefix, config)
    raise SystemExit(f"{path}: no question file known for it (one of {', '.join(SUITES)})")


def add_untied(path: Path) -> tuple[int, int]:
    """(records given the signal, of them with a name left untied); the file is rewritten in place."""
    from duckask.utils.config import load_settings
    from duckask.utils.db.database import open_database
    from duckask.utils.eval.questions import load_questions, resolve_db
    from duckask.utils.schema.terms import split_ident
    from duckask.utils.semantic import get_catalog
    from duckask.utils.trust.grounding import untied_names

    qfile, db, semantic = source_of(path)
    questions, db_dir = load_questions(ROOT / qfile)
    by_id = {q.id: q for q in questions}
    settings = load_settings(None, **({"semantic": str(ROOT / semantic)} if semantic else {}))
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        records = [json.loads(line) for line in f if line.strip()]
    names: dict[str, set[str]] = {}
    done = untied = 0
    for r in records:
        sig = r.get("signals")
        if not sig or r["id"] not in by_id:
            continue
        where = resolve_db(by_id[r["id"]], db=str(ROOT / db) if db else None, db_dir=db_dir)
        if where not in names:
            cat = get_catalog(open_database(where, settings), settings)
            names[where] = {w for t in cat.tables.values() for n in [t.name, *(c.name for c in t.columns)]
                            for w in split_ident(n)}
        sig["untied"] = untied_names(r["question"], r.get("sql") or "", names[where]) if r.get("sql") else []
        done += 1
        untied += bool(sig["untied"])
    with opener(path, "wt") as f:
        f.write("".join(json.dumps(r) + "\n" for r in records))
    return done, untied


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("records", nargs="+", type=Path)
    a = ap.parse_args(argv)
    for p in a.records:
        done, untied = add_untied(p)
        print(f"{p}: {done} records given the signal, {untied} with a name the query never uses", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
