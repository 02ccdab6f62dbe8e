"""``Result``: what a question (or the user's SQL, or a write) came to, and what can be done with it next.

A pending Result continues with ``approve()`` / ``edit(sql)`` / ``reject()`` (a query waiting for
``confirm``, or a write waiting for its approval). An answered one can be kept as an example
(``save_as_example``) or fixed (``fix``: the right SQL kept for its question), charted (``chart``),
written to a file (``to_file``: csv, parquet, json, xlsx),
emailed (``email``) or stored as a new table of the database (``to_table``: a T2 write, pending until
approved). ``to_dict`` is the ``--json`` object and the HTML repr the notebook view, both from
``present.py``.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import pandas as pd

from duckask.utils.config import Settings, load_settings
from duckask.utils.records import AnswerCheck

if TYPE_CHECKING:
    from duckask.utils.records import Attempt, BudgetStop, Confidence, Grade, PlanRecord, TemplateRecord
    from duckask.utils.turn import Turn
    from duckask.utils.writes.card import WriteCard

T = TypeVar("T")


def _or(value: T | None, default: T) -> T:
    """A turn's value, or the field's default where the turn holds none (the key absent, or None)."""
    return default if value is None else value


@dataclass
class Result:
    question: str
    # answered | unsure | unanswerable | needs_clarification | error | pending | declined; a write: written...
    status: str
    answer: str
    sql: str | None = None
    df: pd.DataFrame | None = None
    tables: list[str] = field(default_factory=list)
    derivation: str = ""
    warning: str | None = None
    clarifying_question: str | None = None
    trace: list[dict] = field(default_factory=list)
    llm_calls: list[dict] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)   # every query tried (utils/records.py: Attempt)
    grades: list[Grade] = field(default_factory=list)       # ResponseGrader's verdicts
    grade_status: str | None = None      # pass | fail (grader budget exhausted) | None (not graded)
    first_sql: str | None = None
    vote: list[dict] = field(default_factory=list)   # drafts SQLExecutor ran and voted on (sql_candidates > 1)
    candidate_moves: list[dict] = field(default_factory=list)   # groups the checks rejected: {"from": sql, "why"}
    truncated: bool = False
    seconds: float = 0.0
    db: str | None = None
    examples: list[dict] = field(default_factory=list)   # the example pairs SQLGenerator was shown
    settings: Settings | None = field(default=None, repr=False)
    intent: str = "data"                 # data | schema | general | sql (IntentRouter)
    resolved_question: str | None = None  # a follow-up as one standalone question (ResolveFollowUp)
    answer_check: AnswerCheck = field(default_factory=AnswerCheck)  # how the sentence was written; what its check found
    confirmations: list[dict] = field(default_factory=list)   # ConfirmSQL's decisions
    routing: dict = field(default_factory=dict)   # which rule (or the LLM) set the intent and resolved the turn
    answerable: dict = field(default_factory=dict)   # can the data answer it: outcome, rule, missing words, closest
    write: WriteCard | None = None       # a write's card (utils/writes/card.py)
    path: str | None = None              # which path answered: "template", "plan" (MetricFlow) or "sql"; None: neither
    plan: PlanRecord | None = None       # PlanQuery's record: the plan, its derivation, or why the SQL path ran
    template: TemplateRecord | None = None   # MatchTemplate's record: the kept pair, the values put in (or why not)
    # AssessConfidence: {"level": high|medium|low, "score", "reasons": [...], "signals": {...}}; None: not assessed
    confidence: Confidence | None = None
    alternatives: list[dict] = field(default_factory=list)   # the not-sure answer's two candidates (sql, df, votes)
    sources: list[dict] = field(default_factory=list)   # a tool's answer: what it cites ({name, url, title})
    budget_stop: BudgetStop | None = None      # the time budget stopped further work: {node, instead_of, after_s}
    _resume: Callable[[dict], Result] | None = field(default=None, repr=False, compare=False)
    _write_sql: Callable[[str], Result] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_turn(cls, shared: Turn, *, db: str | None = None, settings: Settings | None = None,
                  resume: Callable[[dict], Result] | None = None,
                  write_sql: Callable[[str], Result] | None = None) -> Result:
        """The Result of a turn, read from its state (``utils/turn.py``), each field from the keys named here (a
        field the turn holds nothing for keeps its default); the rows and the derivation only of an answered turn.
        ``resume`` continues a pending turn with its decision (kept only when the turn is pending); ``write_sql``
        runs a statement as a turn of its own (``to_table``)."""
        outcome = shared.get("answer") or {}         # finish's record: status, text, derivation
        status = outcome.get("status", "error")
        answered = status == "answered"
        voted = shared.get("candidates")
        clarification = shared.get("clarification") or {}
        return cls(
            question=shared.get("original_question") or shared.get("question") or "", status=status,
            answer=outcome.get("text") or "", sql=shared.get("sql_query") or None,
            df=shared.get("query_result") if answered else None,
            tables=_or(shared.get("selected_tables"), []),
            derivation=outcome.get("derivation") or "" if answered else "",
            warning=shared.get("warning"),
            clarifying_question=clarification.get("question") if status == "needs_clarification" else None,
            trace=_or(shared.get("trace"), []), llm_calls=_or(shared.get("llm_calls"), []),
            attempts=_or(shared.get("attempts"), []), grades=_or(shared.get("grades"), []),
            grade_status=shared.get("grade_status"), first_sql=shared.get("first_sql"),
            vote=list(voted.ballot) if voted else [], candidate_moves=_or(shared.get("candidate_moves"), []),
            truncated=bool(shared.get("truncated")), seconds=_or(shared.get("seconds"), 0.0), db=db,
            examples=_or(shared.get("examples"), []), settings=settings, intent=shared.get("intent") or "data",
            resolved_question=shared.get("resolved_question"), confirmations=_or(shared.get("confirmations"), []),
            answer_check=_or(shared.get("answer_check"), AnswerCheck()),
            routing={"intent_by": shared.get("intent_by"), "resolved_by": shared.get("resolved_by"),
                     **({"source": shared["source"]} if shared.get("source") else {}),
                     **({"tool_calls": shared["tool_calls"]} if shared.get("tool_calls") else {})},
            answerable=_or(shared.get("answerable"), {}), write=shared.get("write"), path=shared.get("path"),
            plan=shared.get("plan"), template=shared.get("template"), confidence=shared.get("confidence"),
            alternatives=_or(shared.get("alternatives"), []), sources=_or(shared.get("sources"), []),
            budget_stop=shared.get("budget_stop"), _resume=resume if status == "pending" else None,
            _write_sql=write_sql)

    @property
    def engine_sql(self) -> str | None:
        """A live source (``source_mode: live``): the answer's query as its engine ran it (the engine's dialect
        and table names); None when the query ran in DuckDB."""
        if self.status != "answered":
            return None
        return next((a["engine_sql"] for a in reversed(self.attempts)
                     if a.get("engine_sql") and a.get("status") == "ok"), None)

    # -- confirm-before-run: a "pending" Result waits for one of these ---------------------------------
    def _continue(self, decision: dict) -> Result:
        if self.status != "pending" or self._resume is None:
            raise ValueError(f"this result is {self.status!r}, not pending: only a pending result (a query waiting "
                             "with confirm=True, or a write waiting for its approval) can be approved, edited or "
                             "rejected, once")
        resume, self._resume = self._resume, None  # a pending result is decided once
        return resume(decision)

    def chart(self, kind: str | None = None):
        """A plotly Figure, the chart chosen from the columns (``utils/api/chart.py``; ``kind``: line, bar or
        scatter instead). Needs plotly (the ``server`` extra); ValueError when there is nothing to chart."""
        from duckask.utils.api.chart import figure

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

    def to_file(self, path: str, format: str | None = None):
        """Write the result's rows to ``path`` (csv, parquet, json or xlsx, from the suffix unless ``format``
        says) by duckask's own process; returns the path. A result cut by ``row_cap`` is run again (read-only,
        up to ``export_row_cap`` rows), so the file holds every row. ``ExportError`` says what was wrong."""
        from duckask.utils.delivery.export import ExportError, export_frame

        if self.df is None:
            raise ExportError(f"this result is {self.status!r} and has no rows to export")
        return export_frame(self.all_rows(), path, format)

    def all_rows(self) -> pd.DataFrame:
        """The rows, all of them: when ``row_cap`` cut the result, its SQL runs again up to ``export_row_cap``."""
        if not self.truncated or not self.sql or self.db is None:
            return self.df
        from duckask.utils.db.database import open_database
        from duckask.utils.delivery.export import ExportError

        settings = self.settings or load_settings()
        out = open_database(self.db, settings).run(self.sql, row_cap=settings.export_row_cap,
                                                   result_bytes=settings.export_bytes)
        if not out.ok:
            raise ExportError(f"the query could not be run again for all its rows: {out.error}")
        if out.truncated:
            raise ExportError(f"the result has more than export_row_cap={settings.export_row_cap:,} rows; raise it "
                              "(config or DUCKASK_* env) or narrow the query")
        return out.df

    def email(self, to: str | list[str], *, attachment_format: str = "csv", subject: str | None = None, **kw):
        """Send the answer, the SQL and the rows (attached) by SMTP (settings ``smtp_*``); returns the message."""
        from duckask.utils.config import load_settings
        from duckask.utils.delivery.mail import send_result

        return send_result(self, to, self.settings or load_settings(), attachment_format=attachment_format,
                           subject=subject, **kw)

    def to_table(self, name: str) -> Result:
        """Store this result's query as the new table ``name`` of the database: a T2 schema change, so the
        returned Result is pending (``approve()`` runs it) and needs ``allow_writes``; else it is blocked."""
        from duckask.utils.db.quoting import quote_ident

        if not self.sql or self.status != "answered" or self._write_sql is None:
            raise ValueError(f"this result is {self.status!r}: only an answered question's rows can become a table")
        if not (name or "").strip():
            raise ValueError("to_table() needs the new table's name")
        return self._write_sql(f"CREATE TABLE {quote_ident(name.strip())} AS {self.sql}")

    def save_as_example(self, question: str | None = None):
        """Teach duckask this answer: store (question, SQL) as a verified example pair for this
        database, shown to the model for similar questions from now on. Returns the stored
        ``Example``; ``ExampleError`` when the SQL does not run or returns no rows."""
        from duckask.utils.knowledge import ExampleError, teach

        if not self.sql or self.db is None:
            raise ExampleError("this result has no SQL to keep: only an answered question can become an example")
        return teach(question or self.question, self.sql, self.db, self.settings)

    def fix(self, sql: str, question: str | None = None):
        """This answer was wrong and ``sql`` is the right query: it is run (the safe executor; it must return rows)
        and kept with the question, so the next question like it is answered from it (a template when only its
        values differ). Returns the stored ``Example``; ``ExampleError`` when the SQL does not run or finds
        nothing (nothing is kept)."""
        from duckask.utils.knowledge import ExampleError, teach

        if not (sql or "").strip():
            raise ExampleError("fix() needs the SQL that answers the question right")
        if self.db is None:
            raise ExampleError("this result has no database to keep the fixed pair for")
        return teach(question or self.question, sql, self.db, self.settings)

    @property
    def ok(self) -> bool:
        return self.status == "answered"

    def to_dict(self, max_rows: int | None = None) -> dict[str, Any]:
        """The ``--json`` object (``utils/api/present.py``: how every surface shows a Result)."""
        from duckask.utils.api.present import as_json

        return as_json(self, max_rows)

    def trace_table(self) -> str:
        from duckask.utils.api.present import trace_table

        return trace_table(self.trace)

    def __repr__(self) -> str:
        from duckask.utils.api.present import text

        return f"Result(status={self.status!r}, intent={self.intent!r}, {self.seconds:.1f}s, " \
               f"{len(self.llm_calls)} LLM calls)\nQ: {self.question}\n" + text(self, 10)

    def _repr_html_(self) -> str:
        from duckask.utils.api.present import html

        return html(self)
