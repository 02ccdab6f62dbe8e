"""How long is the schema part of the SQLGenerator prompt under each column-pruning mode? (No LLM.)

For every question of a question file, the tables its gold SQL reads stand in for the selected
tables; the schema text SchemaLookup would render is measured under ``column_pruning`` budget, wide
and off, in characters and in the embedded model's tokens (its tokenizer, loaded vocabulary-only:
no weights, no generation). Writes a markdown table.

    .venv/bin/python bench/prompt_size.py bench/nba_questions.yaml bench/nba_questions_heldout.yaml \\
        --db ../shared/data/nba --descriptions bench/nba_descriptions.yaml
"""
from __future__ import annotations

import argparse
import statistics

from duckask.utils.config import load_settings
from duckask.utils.db.database import open_database
from duckask.utils.eval.questions import load_questions
from duckask.utils.knowledge.examples import tables_of
from duckask.utils.schema import get_catalog
from duckask.utils.schema.ddl import render_schema
from duckask.utils.schema.ranker import keep_columns
from duckask.utils.schema.values import match_values


def tokenizer():
    from llama_cpp import Llama

    from duckask.utils.llm.model_store import model_path

    vocab = Llama(model_path=str(model_path()), vocab_only=True, verbose=False)
    return lambda text: len(vocab.tokenize(text.encode(), add_bos=False))


def sizes(cat, settings, question: str, tables: list[str]) -> dict[str, str]:
    values = match_values(cat, question)
    full = render_schema(cat, tables)
    budget = full if len(full) <= settings.schema_char_budget else \
        render_schema(cat, tables, columns=keep_columns(cat, tables, question, values))
    wide = render_schema(cat, tables, columns=keep_columns(cat, tables, question, values, settings.wide_table_columns),
                         name_hidden=True)
    return {"off": full, "budget": budget, "wide": wide}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("questions", nargs="+")
    ap.add_argument("--db", required=True)
    ap.add_argument("--descriptions")
    args = ap.parse_args(argv)
    settings = load_settings(None, descriptions=args.descriptions)
    cat = get_catalog(open_database(args.db, settings), settings)
    rows = []
    for path in args.questions:
        for q in load_questions(path)[0]:
            tables = [t for t in tables_of(q.gold_sql or "") if t in cat.tables]
            if tables:
                rows.append(sizes(cat, settings, q.question, tables))
    count = tokenizer()
    print(f"{len(rows)} questions (schema of the tables each gold SQL reads)\n")
    print("| column_pruning | median chars | median tokens | p90 tokens | mean tokens |\n|---|---:|---:|---:|---:|")
    for mode in ("off", "budget", "wide"):
        chars = [len(r[mode]) for r in rows]
        toks = sorted(count(r[mode]) for r in rows)
        p90 = toks[min(len(toks) - 1, int(0.9 * (len(toks) - 1) + 0.5))]
        print(f"| {mode} | {statistics.median(chars):,.0f} | {statistics.median(toks):,.0f} | {p90:,} | "
              f"{statistics.mean(toks):,.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
