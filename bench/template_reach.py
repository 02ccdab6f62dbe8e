"""Which questions of the accuracy benchmarks a kept pair's template would answer (issue 45), with no model run.

The shipped pairs of each set (the demo's for Lahman, ``bench/nba_examples.yaml`` for the NBA sets; Spider and
the idiom sets have none) against its questions, through MatchTemplate's own choice (``nodes.match_template.
matched``: word for word, then by meaning; ``--words``: word for word only). A question no template answers takes
the same path as before templates existed (MatchTemplate says ``none`` and adds no model call), so its accuracy
cannot move; one a template answers is listed with the pair, how it was reached (``variant``, ``paraphrase``) and
whether the template's result is the gold's (``right``: strict EX; ``holds``: the question's answer columns;
``WRONG``; by execution).

    .venv/bin/python bench/template_reach.py --out docs/results/learning-curve/reach.md
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETS = [("lahman", "bench/lahman_questions.yaml", "demo", {}),
        ("nba-heldout", "bench/nba_questions_heldout.yaml", "../shared/data/nba",
         {"examples": "bench/nba_examples.yaml", "descriptions": "bench/nba_semantic"}),
        ("nba-tuning", "bench/nba_questions.yaml", "../shared/data/nba",
         {"examples": "bench/nba_examples.yaml", "descriptions": "bench/nba_semantic"})]


def _right(database, sql: str, q) -> str:
    """"right" (strict EX), "holds" (the user's ruler: the question's answer columns, ``eval.run.holds_of``) or
    "WRONG"."""
    from duckask.utils.eval.run import holds_of
    from duckask.utils.sql.compare import results_match
    from duckask.utils.sql.describe import has_top_level_order_by

    if not q.gold_sql:
        return "WRONG"
    got, gold = database.run(sql), database.run(q.gold_sql)
    if not (got.ok and gold.ok):
        return "WRONG"
    ordered = has_top_level_order_by(q.gold_sql)
    if results_match(got.df, gold.df, order_matters=ordered):
        return "right"
    return "holds" if holds_of(q, got.df, gold.df, ordered, False) else "WRONG"


def main(argv: list[str] | None = None) -> int:
    from duckask.data.lahman import DEFAULT_PATH
    from duckask.nodes.match_template import matched
    from duckask.utils.api import prepare
    from duckask.utils.eval.questions import load_questions
    from duckask.utils.knowledge import examples_for
    from duckask.utils.llm import ScriptedLLM
    from duckask.utils.schema.value_index import ValueIndex

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None)
    ap.add_argument("--words", action="store_true", help="word for word only (settings templates: words)")
    args = ap.parse_args(argv)
    lines = ["| set | shipped pairs | questions | answered from a template |", "|---|---|---|---|"]
    for name, qfile, db, opts in SETS:
        if db.startswith("../shared") and not (ROOT / db).exists():
            sys.exit("bench/template_reach.py: ../shared is missing (the NBA sets read it)")
        state = tempfile.mkdtemp(prefix="duckask-reach-")      # no taught pair of this machine's
        prep = prepare(str(DEFAULT_PATH) if db == "demo" else str(ROOT / db), llm=ScriptedLLM({}),
                       knowledge_file=f"{state}/knowledge.duckdb",
                       **{k: str(ROOT / v) for k, v in opts.items()})
        pairs = examples_for(prep.database, prep.settings)
        values = ValueIndex.of(prep.database, prep.catalog)
        qs, _ = load_questions(ROOT / qfile)
        hits = [f"{q.id} (pair {found[1].id}, {found[2]}, {_right(prep.database, found[0].sql, q)})"
                for q in qs if (found := matched(q.question, pairs, values, prep.catalog, not args.words))]
        lines.append(f"| {name} | {len(pairs)} | {len(qs)} | {len(hits)}{': ' + ', '.join(hits) if hits else ''} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
