"""The notebook/Python API: ``ask(question, db=PATH, **options) -> Result``.

``prepare`` opens the database, catalog and LLM once; ``run_turn`` runs the graph on one shared store
and builds the ``Result``; ``ask`` is the two for one question (``Conversation`` reuses them).

Run on its own::

    python -m duckask.utils.app.api --db PATH "question"
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from duckask.utils.app.chart import choose_chart
from duckask.utils.config import Settings, load_settings
from duckask.utils.db.database import open_database
from duckask.utils.knowledge import examples_for
from duckask.utils.llm import LLM, MeteredLLM, get_llm
from duckask.utils.schema import get_catalog


@dataclass
class Result:
    question: str
    status: str                          # answered | needs_clarification | error | pending | declined
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
    intent: str = "data"                 # data | schema | general | sql (IntentRouter)
    resolved_question: str | None = None  # a follow-up as one standalone question (ResolveFollowUp)
    answer_check: dict = field(default_factory=dict)   # how the answer was written, and what the check found
    confirmations: list[dict] = field(default_factory=list)   # ConfirmSQL's decisions
    routing: dict = field(default_factory=dict)   # which rule (or the LLM) set the intent and resolved the turn
    _resume: Callable[[dict], Result] | None = field(default=None, repr=False, compare=False)

    # -- confirm-before-run: a "pending" Result waits for one of these ---------------------------------
    def _continue(self, decision: dict) -> Result:
        if self.status != "pending" or self._resume is None:
            raise ValueError(f"this result is {self.status!r}, not pending: only a pending result waits for "
                             "approval (ask with confirm=True)")
        resume, self._resume = self._resume, None  # a pending result is decided once
        return resume(decision)

    def chart(self, kind: str | None = None):
        """A plotly Figure, the chart chosen from the columns (``utils/app/chart.py``; ``kind``: line, bar or
        scatter instead). Needs plotly (the ``server`` extra); ValueError when there is nothing to chart."""
        from duckask.utils.app.chart import figure

        return figure(self.df if self.df is not None else pd.DataFrame(), kind=kind)

    def approve(self) -> Result:
        """Run the SQL this pending result shows; returns the answered (or failed) Result."""
        return self._continue({"decision": "yes"})

    def edit(self, sql: str) -> Result:
        """Run ``sql`` instead (checked by the same safety layer); returns the new Result."""
        if not (sql or "").strip():
            raise ValueError("edit() needs the SQL to run instead")
        return self._continue({"decision": "edit", "sql": sql})

    def reject(self, comment: str | None = None) -> Result:
        """Do not run it. With a comment, the model writes a new query from it (which waits again)."""
        return self._continue({"decision": "no", "comment": comment or ""})

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
            "intent": self.intent, "resolved_question": self.resolved_question, "answer_check": self.answer_check,
            "confirmations": self.confirmations, "routing": self.routing, "chart": choose_chart(self.df),
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
        out = [f"Result(status={self.status!r}, intent={self.intent!r}, {self.seconds:.1f}s, "
               f"{len(self.llm_calls)} LLM calls)", f"Q: {self.question}"]
        if self.resolved_question and self.resolved_question != self.question:
            out.append(f"   (understood as: {self.resolved_question})")
        out.append(f"A: {self.answer}")
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
        from duckask.utils.app.answer import result_html

        return result_html(self)


@dataclass
class Prepared:
    """What every turn on one database shares: settings, the open database, its catalog and the LLM."""
    db: str
    settings: Settings
    database: Any
    catalog: Any
    llm: LLM


def prepare(db: str | None = None, *, llm: LLM | None = None, settings: Settings | None = None,
            config: str | None = None, **options: Any) -> Prepared:
    """Open ``db`` (default: the Lahman demo) with the settings (``options`` override them)."""
    if settings is None:
        settings = load_settings(config, **options)
    elif options:  # options override the given settings too, as documented
        settings = dataclasses.replace(settings, **{k: v for k, v in options.items() if v is not None})
    from duckask.data.lahman import demo_db_path, demo_knowledge

    if db is None:
        db = str(demo_db_path())
    settings = demo_knowledge(settings, db)  # the demo is taught, unless the caller chose otherwise
    database = open_database(db, settings)
    return Prepared(db=str(db), settings=settings, database=database, catalog=get_catalog(database, settings),
                    llm=llm if llm is not None else get_llm(settings))


def new_shared(question: str, history: list[dict] | None = None, sql: str | None = None) -> dict[str, Any]:
    """A fresh per-turn store: only the question, the given SQL and the conversation's history carry over."""
    shared: dict[str, Any] = {}
    shared.update({"question": question, "original_question": question, "given_sql": sql,
                   "history": list(history or []), "retry_count": 0, "grader_rounds": 0, "trace": [], "attempts": []})
    return shared


def run_turn(prep: Prepared, shared: dict[str, Any], *, ask_user: Callable[[str], str] | None = None,
             confirm: Callable[[str, list], dict] | None = None, on_node: Callable[[str], None] | None = None,
             on_text: Callable[[str], None] | None = None, entry: str = "route",
             on_result: Callable[[Result], None] | None = None) -> Result:
    """Run the graph on ``shared`` from ``entry`` and return the Result (a pending one can be resumed)."""
    from duckask.flow import build_flow
    from duckask.nodes import Context

    t0 = time.perf_counter()
    ctx = Context(llm=MeteredLLM(prep.llm), settings=prep.settings, db=prep.database, catalog=prep.catalog,
                  ask_user=ask_user, on_node=on_node, examples=examples_for(prep.database, prep.settings),
                  confirm=confirm, on_text=on_text)
    shared.pop("status", None)
    build_flow(ctx, entry).run(shared)
    shared["seconds"] = shared.get("seconds", 0.0) + time.perf_counter() - t0
    result = _result(prep, shared)
    if result.status == "pending":
        def resume(decision: dict) -> Result:
            shared["decision"] = decision
            return run_turn(prep, shared, ask_user=ask_user, confirm=confirm, on_node=on_node, on_text=on_text,
                            entry="confirm", on_result=on_result)

        result._resume = resume
    if on_result:
        on_result(result)
    return result


def _result(prep: Prepared, shared: dict[str, Any]) -> Result:
    status = shared.get("status", "error")
    ok = status == "answered"
    question = shared.get("original_question") or shared.get("question") or ""
    return Result(
        question=question, status=status, answer=shared.get("final_answer") or "",
        sql=shared.get("sql_query") or None,
        df=shared.get("query_result") if ok else None,
        tables=shared.get("selected_tables", []), derivation=shared.get("derivation", "") if ok else "",
        warning=shared.get("warning"),
        clarifying_question=((shared.get("clarification") or {}).get("question")
                             if status == "needs_clarification" else None),
        trace=shared.get("trace", []), llm_calls=shared.get("llm_calls", []), attempts=shared.get("attempts", []),
        grades=shared.get("grades", []), grade_status=shared.get("grade_status"), first_sql=shared.get("first_sql"),
        vote=shared.get("vote") or [], truncated=bool(shared.get("truncated")),
        seconds=shared.get("seconds", 0.0), db=prep.db, examples=shared.get("examples") or [],
        settings=prep.settings, intent=shared.get("intent") or "data",
        resolved_question=shared.get("resolved_question"), answer_check=shared.get("answer_check") or {},
        confirmations=shared.get("confirmations") or [],
        routing={"intent_by": shared.get("intent_by"), "resolved_by": shared.get("resolved_by")})


def confirm_option(confirm: Any, options: dict[str, Any]) -> Callable[[str, list], dict] | None:
    """``confirm=True/False`` is the setting; a callable is who answers (and turns the setting on)."""
    if isinstance(confirm, bool):
        options["confirm"] = confirm
        return None
    if confirm is not None:
        options.setdefault("confirm", True)
    return confirm


def ask(question: str | None = None, db: str | None = None, *, sql: str | None = None, llm: LLM | None = None,
        settings: Settings | None = None, config: str | None = None,
        ask_user: Callable[[str], str] | None = None, confirm: bool | Callable[[str, list], dict] | None = None,
        on_node: Callable[[str], None] | None = None, on_text: Callable[[str], None] | None = None,
        **options: Any) -> Result:
    """Answer ``question`` about the DuckDB database ``db`` (default: the Lahman demo database).

    ``sql`` runs your own SQL instead (shown, checked by the same safety layer, run, explained).
    ``options`` override settings (e.g. ``max_fix_retries=3, grader="llm", confirm=True, base_url=...``).
    ``ask_user`` makes clarification interactive; without it an ambiguous question returns
    status "needs_clarification" and the clarifying question, never blocking. ``confirm=True`` shows
    the SQL before it runs: the Result is "pending" (call ``approve()``, ``edit(sql)`` or ``reject()``);
    ``confirm=callable(sql, drafts) -> {"decision": "yes"|"no"|"edit", "comment", "sql"}`` answers in place.
    ``on_text`` receives the answer sentence as it is written.
    """
    if question is None and not (sql or "").strip():
        raise ValueError("ask() needs a question or sql=\"...\"")
    confirm = confirm_option(confirm, options)
    prep = prepare(db, llm=llm, settings=settings, config=config, **options)
    shared = new_shared(question or sql or "", sql=sql)
    return run_turn(prep, shared, ask_user=ask_user, confirm=confirm, on_node=on_node, on_text=on_text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Ask one question (Python API).")
    ap.add_argument("--db")
    ap.add_argument("--sql", help="run this SQL instead of a question")
    ap.add_argument("question", nargs="?")
    args = ap.parse_args(argv)
    print(repr(ask(args.question, db=args.db, sql=args.sql)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
