"""Replay TableSelector alone on the NBA tuning questions (the models config, no learned pairs): does its pick cover
the gold tables (directly or through the models it picks), which way it chose (ranker or llm), and in how many
seconds.

    .venv/bin/python bench/table_pick.py --n 12 --out docs/results/table-pick/needed8.jsonl

Used for issue 63 (item 5) to compare table lines of the first 14 columns (``first14.jsonl``, at the commit before
the change) with lines of the 8 columns the question needs (``TableSelector.LINE_COLUMNS``, ``needed8.jsonl``) on
the development set; nothing in it is fitted. Times are of today's host: compare them within one day only.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from schema_linking import gold_tables

from duckask.nodes import Context
from duckask.nodes.table_selector import TableSelector
from duckask.utils.api import prepare
from duckask.utils.llm.base import MeteredLLM

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=12, help="the first N tuning questions")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--db", default=str(ROOT.parent / "shared" / "data" / "nba"))
    a = ap.parse_args(argv)
    prep = prepare(a.db, semantic=str(ROOT / "bench" / "nba_models"), column_pruning="wide", learned="off")
    ctx = Context(llm=MeteredLLM(prep.llm), settings=prep.settings, db=prep.database, catalog=prep.catalog)
    questions = yaml.safe_load((ROOT / "bench" / "nba_questions.yaml").read_text())
    node = TableSelector(ctx)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    with a.out.open("w") as out:
        for q in questions[: a.n]:
            gold = {t.lower() for t in gold_tables(q["gold_sql"])}
            p = {"question": q["question"], "previous": None}
            t0 = time.perf_counter()
            try:
                res = node.exec(p)
            except Exception as exc:        # the node's own way out: the ranker's top three
                res = node.exec_fallback(p, exc)
            sel = res["selected"]
            reach = {t.lower() for t in sel} | {r.lower() for t in sel for r in prep.catalog.tables[t].reads}
            rec = {"id": q["id"], "by": res["by"], "covers": gold <= reach, "selected": sel, "gold": sorted(gold),
                   "s": round(time.perf_counter() - t0, 1)}
            print(json.dumps(rec), flush=True)
            out.write(json.dumps(rec) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
