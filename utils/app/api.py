"""The notebook/Python API: ``ask(question, db=PATH, **options) -> Result``.

Run on its own::

    python -m duckask.utils.app.api --db PATH "question"
"""
from __future__ import annotations

import argparse
import dataclasses
import html
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from duckask.utils.config import Settings, load_settings
from duckask.utils.db.database import open_database
from duckask.utils.knowledge import examples_for
from duckask.utils.llm import LLM, MeteredLLM, get_llm
from duckask.utils.schema import get_catalog


@dataclass
class Result:
    question: str
    status: str                          # answered | needs_clarification | error
    answer: str
    sql: str | None = None
    df: pd.DataFrame | None = None
    tables: list[str] = field(default_factory=list)
    derivation: str = ""
    warning: str | None = None
    clarifying_question: str | None = None
    trace: list[dict] = field(default_factory=list)
    llm_calls: list[dict] = field(default_factory=list)
    attempts: list[dict] = field(default_factory=list)
    grades: list[dict] = field(default_factory=list)
    grade_status: str | None = None      # pass | fail (grader budget exhausted) | None (not graded)
    first_sql: str | None = None
    vote: list[dict] = field(default_factory=list)   # drafts SQLExecutor ran and voted on (sql_candidates > 1)
    truncated: bool = False
    seconds: float = 0.0
    db: str | None = None
    examples: list[dict] = field(default_factory=list)   # the example pairs SQLGenerator was shown
    settings: Settings | None = field(default=None, repr=False)

    def save_as_example(self, question: str | None = None):
        """Teach duckask this answer: store (question, SQL) as a verified example pair for this
        database, shown to the model for similar questions from now on. Returns the stored
        ``Example``; ``ExampleError`` when the SQL does not run or returns no rows."""
        from duckask.utils.knowledge import ExampleError, teach

        if not self.sql or self.db is None:
            raise ExampleError("this result has no SQL to keep: only an answered question can become an example")
        return teach(question or self.question, self.sql, self.db, self.settings)

    @property
    def ok(self) -> bool:
        return self.status == "answered"

    def to_dict(self, max_rows: int | None = None) -> dict[str, Any]:
        df = self.df if self.df is not None else pd.DataFrame()
        rows = df if max_rows is None else df.head(max_rows)
        return {
            "status": self.status, "question": self.question, "answer": self.answer, "sql": self.sql,
            "columns": [str(c) for c in df.columns],
            "rows": json.loads(rows.to_json(orient="values", date_format="iso", default_handler=str)),
            "row_count": len(df), "truncated": self.truncated, "tables": self.tables,
            "derivation": self.derivation, "warning": self.warning,
            "clarifying_question": self.clarifying_question, "first_sql": self.first_sql,
            "vote": self.vote, "attempts": self.attempts, "grades": self.grades, "grade_status": self.grade_status,
            "trace": self.trace,
            "llm": {"calls": len(self.llm_calls),
                    "prompt_tokens": sum(c["prompt_tokens"] for c in self.llm_calls),
                    "completion_tokens": sum(c["completion_tokens"] for c in self.llm_calls)},
            "seconds": round(self.seconds, 3), "db": self.db,
            "examples": [{"id": e["id"], "question": e["question"], "similarity": e["similarity"]}
                         for e in self.examples],
        }

    def trace_table(self) -> str:
        lines = [f"{'node':<15} {'action':<12} {'ms':>9} {'calls':>5} {'prompt':>7} {'compl':>6} {'try':>3}"]
        for t in self.trace:
            lines.append(f"{t['node']:<15} {t['action']:<12} {t['ms']:>9.1f} {t['llm_calls']:>5} "
                         f"{t['prompt_tokens']:>7} {t['completion_tokens']:>6} {t['attempt']:>3}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        out = [f"Result(status={self.status!r}, {self.seconds:.1f}s, {len(self.llm_calls)} LLM calls)",
               f"Q: {self.question}", f"A: {self.answer}"]
        if self.derivation:
            out.append(f"   {self.derivation}")
        if self.warning:
            out.append(f"Warning: {self.warning.splitlines()[0]}")
        if self.sql:
            out.append(f"SQL: {self.sql}")
        if self.df is not None and len(self.df):
            out.append(self.df.head(10).to_string(index=False))
            if len(self.df) > 10:
                out.append(f"... {len(self.df)} rows")
        return "\n".join(out)

    def _repr_html_(self) -> str:
        e = html.escape
        parts = [f"<div><b>{e(self.status)}</b> in {self.seconds:.1f}s, {len(self.llm_calls)} LLM calls",
                 f"<p><b>Q:</b> {e(self.question)}<br><b>A:</b> {e(self.answer)}</p>"]
        if self.derivation:
            parts.append(f"<p><i>{e(self.derivation)}</i></p>")
        if self.warning:
            parts.append(f"<p style='color:#b00'>{e(self.warning)}</p>")
        if self.sql:
            parts.append(f"<pre>{e(self.sql)}</pre>")
        if self.df is not None and len(self.df):
            parts.append(self.df.head(20).to_html(index=False))
        parts.append("<details><summary>trace</summary><pre>" + e(self.trace_table()) + "</pre></details></div>")
        return "\n".join(parts)


def ask(question: str, db: str | None = None, *, llm: LLM | None = None, settings: Settings | None = None,
        config: str | None = None, ask_user: Callable[[str], str] | None = None,
        on_node: Callable[[str], None] | None = None, **options: Any) -> Result:
    """Answer ``question`` about the DuckDB database ``db`` (default: the Lahman demo database).

    ``options`` override settings (e.g. ``max_fix_retries=3, grader="llm", base_url=...``).
    ``ask_user`` makes clarification interactive; without it an ambiguous question returns
    status "needs_clarification" and the clarifying question, never blocking.
    """
    from duckask.flow import build_flow
    from duckask.nodes import Context

    t0 = time.perf_counter()
    if settings is None:
        settings = load_settings(config, **options)
    elif options:  # options override the given settings too, as documented
        settings = dataclasses.replace(settings, **{k: v for k, v in options.items() if v is not None})
    from duckask.data.lahman import demo_db_path, demo_knowledge

    if db is None:
        db = str(demo_db_path())
    settings = demo_knowledge(settings, db)  # the demo is taught, unless the caller chose otherwise
    database = open_database(db, settings)
    catalog = get_catalog(database, settings)
    metered = MeteredLLM(llm if llm is not None else get_llm(settings))
    ctx = Context(llm=metered, settings=settings, db=database, catalog=catalog, ask_user=ask_user, on_node=on_node,
                  examples=examples_for(database, settings))
    shared: dict[str, Any] = {"question": question, "retry_count": 0,
                              "grader_rounds": 0, "trace": [], "attempts": []}
    build_flow(ctx).run(shared)
    status = shared.get("status", "error")
    ok = status == "answered"
    return Result(
        question=question, status=status, answer=shared.get("final_answer") or "",
        sql=shared.get("sql_query") if ok else (shared.get("sql_query") or None),
        df=shared.get("query_result") if ok else None,
        tables=shared.get("selected_tables", []), derivation=shared.get("derivation", "") if ok else "",
        warning=shared.get("warning"),
        clarifying_question=((shared.get("clarification") or {}).get("question")
                             if status == "needs_clarification" else None),
        trace=shared.get("trace", []), llm_calls=shared.get("llm_calls", []), attempts=shared.get("attempts", []),
        grades=shared.get("grades", []), grade_status=shared.get("grade_status"), first_sql=shared.get("first_sql"),
        vote=shared.get("vote") or [], truncated=bool(shared.get("truncated")),
        seconds=time.perf_counter() - t0, db=str(db), examples=shared.get("examples") or [], settings=settings)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Ask one question (Python API).")
    ap.add_argument("--db")
    ap.add_argument("question")
    args = ap.parse_args(argv)
    print(repr(ask(args.question, db=args.db)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
