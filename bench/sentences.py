"""Sentence answers: what they cost and how often the check rejects them.

For each question of the sets, the gold SQL's result is what DataAnalyzer would see; the configured
LLM writes the sentence (``utils/dialogue/sentence.py``'s prompt, as in ``ask``) and ``check_sentence``
compares it with the result. Reports per set: sentences written (results of 1-20 rows; others get the
template with no call), how many the check rejected (the template is shown instead), the added
seconds per question (median, p90) and tokens. Every sentence and verdict goes to the JSONL records,
to be read.

    .venv/bin/python bench/sentences.py [--out docs/results/dialogue/sentences.jsonl]

Sets: bench/lahman_questions.yaml (25, the demo) and the first 25 of Spider dev sample100.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPIDER = ROOT.parent / "shared" / "benchmarks" / "spider_dev"


def questions() -> list[tuple[str, str, str, str]]:
    """(set, id, question, db, gold SQL)."""
    from duckask.data.lahman import demo_db_path
    from duckask.utils.eval.questions import load_questions, read_ids, select

    out = [("lahman", q.id, q.question, str(demo_db_path()), q.gold_sql)
           for q in load_questions(ROOT / "bench" / "lahman_questions.yaml")[0]]
    if SPIDER.is_dir():
        qs, _ = load_questions(SPIDER)
        for q in select(qs, read_ids(SPIDER / "sample100.txt"))[:25]:
            out.append(("spider", q.id, q.question, str(SPIDER / "dbs" / q.db_id), q.gold_sql))
    return out


def main(argv: list[str] | None = None) -> int:
    from duckask.utils.config import load_settings
    from duckask.utils.db.database import open_database
    from duckask.utils.dialogue.sentence import MAX_ROWS, check_sentence, prompt
    from duckask.utils.llm import get_llm

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "results" / "dialogue" / "sentences.jsonl"))
    args = ap.parse_args(argv)
    settings = load_settings()
    llm = get_llm(settings)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    recs = []
    with out.open("w") as f:
        for which, qid, question, db, gold in questions():
            res = open_database(db, settings).run(gold)
            rec = {"set": which, "id": qid, "question": question, "rows": None if res.df is None else len(res.df)}
            if res.ok and 0 < len(res.df) <= MAX_ROWS:
                t0 = time.perf_counter()
                reply = llm.complete([{"role": "user", "content": prompt(question, res.df, res.truncated)}],
                                     node="DataAnalyzer", max_tokens=90)
                text = " ".join(reply.text.split())
                problems = check_sentence(text, res.df, question)
                rec.update(sentence=text, problems=problems, accepted=not problems,
                           seconds=round(time.perf_counter() - t0, 2), prompt_tokens=reply.prompt_tokens,
                           completion_tokens=reply.completion_tokens)
                print(f"{qid} {'ok ' if not problems else 'REJ'} {rec['seconds']:.1f}s {text[:110]!r} {problems}",
                      flush=True)
            recs.append(rec)
            f.write(json.dumps(rec, default=str) + "\n")
    for which in ("lahman", "spider"):
        written = [r for r in recs if r["set"] == which and "sentence" in r]
        if not written:
            continue
        secs = sorted(r["seconds"] for r in written)
        rejected = [r for r in written if not r["accepted"]]
        print(f"{which}: {len(written)} sentences of {sum(r['set'] == which for r in recs)} questions, "
              f"{len(rejected)} rejected by the check ({100 * len(rejected) / len(written):.0f} %); added s/q median "
              f"{statistics.median(secs):.1f}, p90 {secs[int(0.9 * (len(secs) - 1))]:.1f}; prompt tokens median "
              f"{statistics.median(r['prompt_tokens'] for r in written):.0f}, completion "
              f"{statistics.median(r['completion_tokens'] for r in written):.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
