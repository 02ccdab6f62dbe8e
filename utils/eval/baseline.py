"""The single-prompt baseline: full compact schema + question -> SQL, one LLM call, nothing else.

This is the plain text-to-SQL that the graph must beat: the same model and executor, the schema of
every table as compact DDL (keys, no sample values, no comments, no value hints), and no table
selection, repair, retry or grading.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from duckask.utils.db.database import Database
from duckask.utils.llm import LLM
from duckask.utils.schema.catalog import Catalog
from duckask.utils.schema.ddl import render_ddl
from duckask.utils.sql.extract import extract_sql

PROMPT = ("{schema}\n\n-- Using valid DuckDB SQL, answer the following question for the tables provided above."
          "\n-- {question}")


def _plain_ddl(catalog: Catalog) -> str:
    # No samples and no comments: the plain schema a simple text-to-SQL prompt would show.
    stripped = Catalog(key=catalog.key, tables={
        n: type(t)(name=t.name, comment="", rows=t.rows, pk=t.pk,
                   columns=[type(c)(name=c.name, type=c.type, pk=c.pk, ref=c.ref) for c in t.columns])
        for n, t in catalog.tables.items()})
    return render_ddl(stripped, samples=False)


@dataclass
class BaselineResult:
    sql: str
    status: str
    df: object
    error: str | None
    seconds: float
    prompt_tokens: int
    completion_tokens: int


def single_prompt(llm: LLM, db: Database, catalog: Catalog, question: str) -> BaselineResult:
    t0 = time.perf_counter()
    msgs = [{"role": "user", "content": PROMPT.format(schema=_plain_ddl(catalog), question=question)}]
    try:
        reply = llm.complete(msgs, node="Baseline", prefix="```sql\n", stop=["```"], max_tokens=256)
    except Exception as e:
        return BaselineResult("", "error", None, f"LLM call failed: {e}", time.perf_counter() - t0, 0, 0)
    sql = extract_sql(reply.text)
    out = db.run(sql) if sql else None
    return BaselineResult(sql=sql, status=out.status if out else "error", df=out.df if out and out.ok else None,
                          error=(out.error if out else "no SQL"), seconds=time.perf_counter() - t0,
                          prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens)
