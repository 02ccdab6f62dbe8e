"""How answers without a model read (issue 47): on 100 recorded answers, the share of sentences that show a column
name the question does not say, or read "The answer is ...", before and after.

The answers are recorded runs' own, kept in bench/sentence_answers.jsonl (question, database, SQL; run again here
for the rows): the 25 Lahman questions (lahman/shipped at 8f35086), the first 55 answered Spider sample100 ones
(shipped at e30c7f8), 18 answered NBA held-out ones and the first 2 of the tuning set (raw-examples). Each is
said by ``dialogue.answer_rules.rules_answer`` as the installed code has it, so the same script measures another
commit with that commit's sources first on PYTHONPATH (the code before issue 47 takes no question). This is the
sentence a person sees for a one-value answer, for any answer with ``analyzer: rules`` (what eval uses), and
whenever the model's sentence disagrees with the rows. The rules were corrected while reading the sentences of
that set (selection bias); bench/sentence_answers_heldout.jsonl holds 100 others never read while writing them
(80 answered Spider heldout100 questions, 20 more NBA tuning ones):

    .venv/bin/python bench/sentences.py --out docs/results/sentences/after.json
    .venv/bin/python bench/sentences.py --answers bench/sentence_answers_heldout.jsonl \
        --out docs/results/sentences/heldout-after.json
"""
from __future__ import annotations

import argparse
import inspect
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ANSWERS = ROOT / "bench" / "sentence_answers.jsonl"
SPIDER = ROOT / "../shared/benchmarks/spider_dev/dbs"
NBA = ROOT / "../shared/data/nba"


def raw_names(sentence: str, question: str, columns: list[str]) -> list[str]:
    """The column names a sentence shows that the question does not say (as a whole word)."""
    said = question.lower()
    return [c for c in columns if re.search(rf"(?<![\w]){re.escape(c.lower())}(?![\w])", sentence.lower())
            and c.lower() not in said]


def database(db: str) -> str:
    from duckask.data.lahman import DEFAULT_PATH

    return str(DEFAULT_PATH) if db == "lahman" else str(NBA) if db == "nba" else str(SPIDER / db)


def main(argv: list[str] | None = None) -> int:
    from duckask.utils.db.database import open_database
    from duckask.utils.dialogue.answer_rules import rules_answer

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--answers", default=str(ANSWERS), help="the recorded answers (JSONL: set, id, db, question, sql)")
    ap.add_argument("--out", default=None, help="write the figures and every sentence here (JSON)")
    args = ap.parse_args(argv)
    if not SPIDER.exists() or not NBA.exists():
        sys.exit("bench/sentences.py: ../shared is missing (Spider and NBA databases)")
    takes_question = "question" in inspect.signature(rules_answer).parameters
    rows = []
    for rec in map(json.loads, Path(args.answers).read_text().splitlines()):
        out = open_database(database(rec["db"])).run(rec["sql"], timeout_s=20, row_cap=1000)
        if not out.ok or out.df is None:
            continue
        said = rules_answer(out.df, out.truncated, **({"question": rec["question"]} if takes_question else {}))
        rows.append({"set": rec["set"], "id": rec["id"], "question": rec["question"], "shape": list(out.df.shape),
                     "sentence": said, "raw": raw_names(said, rec["question"], [str(c) for c in out.df.columns]),
                     "the_answer_is": said.startswith("The answer is")})
    n = len(rows)
    bad = [r for r in rows if r["raw"] or r["the_answer_is"]]
    figures = {"answers": n, "raw_column_name": sum(bool(r["raw"]) for r in rows),
               "the_answer_is": sum(r["the_answer_is"] for r in rows), "either": len(bad),
               "either_pct": round(100 * len(bad) / n, 1) if n else None,
               "by_set": {s: sum(1 for r in bad if r["set"] == s) for s in ("lahman", "spider", "nba")},
               "date": time.strftime("%Y-%m-%d"), "takes_question": takes_question}
    print(json.dumps(figures, indent=1))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps({"figures": figures, "sentences": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
