"""``duckask warm``: process, once, the prompt prefixes that questions on a database start with, and
keep their states on disk, so the first question of every later process skips them.

The prefixes are the SQLGenerator's stable schema text (``SchemaLookup``: the instructions, then the
tables in a fixed order, each always showing the same columns): first the part every question
shares (the database's instructions), then, for each example pair of the database (the questions
its users ask), the schema of the tables such a question selects (TableSelector's choice without the model,
``ranker.choice_without_llm``: every table of a small schema, the pre-ranker's sure choice; where the
model would pick, the pair's own tables, with their parents). Distinct prefixes only, the most common first, at
most ``limit``; when the database has a semantic layer the plan path uses, PlanQuery's catalog (the
start of every plan prompt) comes first, within the limit. Only the embedded model keeps prompt states;
with an endpoint there is nothing to do.
"""
from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from duckask.utils.api import need_db, prepare
from duckask.utils.schema.ddl import render_instructions
from duckask.utils.semantic.manifest import layer_for


def _stable_schema(prep, ctx, question: str, tables: list[str] | None) -> str:
    """The stable schema text SchemaLookup gives for ``question`` (on ``tables`` when given)."""
    from duckask.nodes import SchemaLookup, TableSelector
    from duckask.utils.api import new_shared
    from duckask.utils.schema.ranker import with_parents

    shared = new_shared(question)       # a turn as every surface starts one, written by the nodes that own its keys
    selector = TableSelector(ctx)
    p = selector.prep(shared)
    ranked, decided = selector.ranked_choice(p)          # TableSelector's own choice, where it needs no model
    chosen = decided or (with_parents(prep.catalog, tables or [r.table for r in ranked["ranked"][:3]]), "pair")
    selector.post(shared, p, {**ranked, "selected": chosen[0], "by": chosen[1]})
    node = SchemaLookup(ctx)
    return node.exec(node.prep(shared))["stable"]


def warm(db: str | None = None, *, limit: int = 8, progress: Callable[[str], None] | None = None,
         **options: Any) -> list[dict]:
    """Warm ``db``'s prompt prefixes (see the module's text); returns one record per prefix."""
    from duckask.nodes import Context
    from duckask.nodes.sql_generator import SYSTEM
    from duckask.utils.knowledge import examples_for
    from duckask.utils.llm import MeteredLLM

    prep = prepare(need_db(db, "warm()"), **options)
    prefill = getattr(prep.llm, "prefill", None)
    if prefill is None:
        return []
    examples = examples_for(prep.database, prep.settings)
    ctx = Context(llm=MeteredLLM(prep.llm), settings=prep.settings, db=prep.database, catalog=prep.catalog,
                  examples=examples)
    heads: Counter[str] = Counter()
    if prep.catalog.instructions:   # the part every question shares, whatever its tables
        heads[render_instructions(prep.catalog)] += len(examples) + 1
    for ex in examples:
        heads[_stable_schema(prep, ctx, ex.question, ex.tables)] += 1
    prompts = [([{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"Schema:\n{head}\nQuestion: ?"}],
                f"Schema:\n{head}", n) for head, n in heads.most_common(limit)]
    layer = layer_for(prep.settings)
    plans = prep.settings.plan_path == "on" or (prep.settings.plan_path == "auto" and layer and not layer.draft)
    if layer is not None and plans:
        from duckask.utils.semantic.plan_prompt import build_messages

        messages, stable = build_messages(layer, "?")     # PlanQuery's catalog: the same for every question
        prompts = [(messages, stable, len(examples) + 1)] + prompts[:max(0, limit - 1)]
    out = []
    for i, (messages, stable, n) in enumerate(prompts, 1):
        t0 = time.perf_counter()
        rec = {**prefill(messages, stable=stable), "questions": n, "seconds": round(time.perf_counter() - t0, 2)}
        out.append(rec)
        if progress:
            progress(f"warm {i}/{len(prompts)}: {rec['tokens']} tokens ({rec['reused']} already stored), "
                     f"{rec['seconds']:.1f}s")
    return out
