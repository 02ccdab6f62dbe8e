"""Add the grounding signals (issue 44: ``trust.grounding``) to recorded eval runs, so the confidence can be refitted
on them without running the model again. (No LLM.)

Each answered record's final SQL runs again on its database; the grounding checks and the literal check are asked
about it as AssessConfidence asks them live: the facts are the database's (value index, table words), the values the
question names (``schema.values.match_values``) and, as the text literals may come from, the question and those
values (the records keep no conversation or examples). The signals gain ``ungrounded`` and ``literals_verified``;
nothing else in a record changes. A file is rewritten in place (gzip kept), once: a record that has them is left.

    .venv/bin/python bench/ground_records.py            # the files the shipped confidence is fitted on
    .venv/bin/python bench/ground_records.py KIND=RECORDS.jsonl.gz ...

Databases by kind: spider ``../shared/benchmarks/spider_dev/dbs/{db}``, nba ``../shared/data/nba`` (through
``bench/nba_semantic``, as those runs were), idioms ``/tmp/duckask_idioms/{db}.duckdb`` (``bench/idioms_dbs.py``
builds them), lahman ``data/lahman.duckdb``.
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from duckask.utils.config import load_settings  # noqa: E402
from duckask.utils.db.database import open_database  # noqa: E402
from duckask.utils.schema.values import match_values  # noqa: E402
from duckask.utils.semantic import get_catalog  # noqa: E402
from duckask.utils.trust.confidence import WEIGHTS  # noqa: E402
from duckask.utils.trust.grounding import facts_for, grounding  # noqa: E402

WHERE = {"spider": ("../shared/benchmarks/spider_dev/dbs/{db}", None),
         "nba": ("../shared/data/nba", "bench/nba_semantic"),
         "idioms": ("/tmp/duckask_idioms/{db}.duckdb", None),
         "lahman": ("data/lahman.duckdb", None)}


def _open(path: Path):
    return gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else path.open(encoding="utf-8")


def ground_file(kind: str, path: Path) -> tuple[int, int]:
    """(records grounded now, records in the file)."""
    template, semantic = WHERE[kind]
    with _open(path) as f:
        recs = [json.loads(line) for line in f if line.strip()]
    dbs: dict[str, tuple] = {}
    done = 0
    for r in recs:
        s = r.get("signals")
        if not s or "ungrounded" in s or s.get("status") != "answered" or not r.get("sql"):
            continue
        where = str(ROOT / template.format(db=r.get("db", ""))) if not template.startswith("/") else \
            template.format(db=r.get("db", ""))
        if where not in dbs:
            settings = load_settings(None, **({"semantic": str(ROOT / semantic)} if semantic else {}))
            database = open_database(where, settings)
            dbs[where] = (database, get_catalog(database, settings))
        database, catalog = dbs[where]
        out = database.run(r["sql"], timeout_s=20, row_cap=1000)
        named = [asdict(v) for v in match_values(catalog, r["question"])]
        shared = {"question": r["question"], "path": s.get("path"), "value_matches": named,
                  "original_question": r["question"]}
        facts, given = facts_for(catalog, database, shared)
        g = grounding(r["question"], out.sql if out.ok else r["sql"], out.df if out.ok else None, facts,
                      given_known=given is not None)
        s["ungrounded"], s["literals_verified"] = g["ungrounded"], g["literals_verified"]
        done += 1
    text = "".join(json.dumps(r, default=str) + "\n" for r in recs)
    if path.suffix == ".gz":
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return done, len(recs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("records", nargs="*", default=json.loads(WEIGHTS.read_text())["fitted_on"])
    a = ap.parse_args(argv)
    for spec in a.records:
        kind, _, path = spec.partition("=")
        done, n = ground_file(kind, ROOT / path)
        print(f"{spec}: {done} of {n} records grounded now")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
