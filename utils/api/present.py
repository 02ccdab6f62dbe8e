"""How an answer looks, in one place: a ``Result`` (or the rows of the user's own SQL) is turned into its
parts once (``parts``), and each surface renders those parts its own way:

- ``text``: plain text (``duckask ask``, the piped chat, ``repr(result)`` in Python);
- ``rich_lines``: the terminal chat's and ``ask``'s rich output (markup, highlighted SQL, aligned table);
- ``html``: the notebook view (``Result._repr_html_``);
- ``as_json``: the ``--json`` object, the server's JSON and the chat's JSON lines (``Result.to_dict``);
- ``for_agent``: what the MCP ``ask`` tool returns (a subset of ``as_json``, the same values);
- the user's own SQL (``duckask sql --json``, ``/api/sql``, MCP ``run_sql``): ``present_sql.py``.

Rows become JSON in one function (``rows_json``), and a status becomes an exit code in one map
(``exit_code``). To change how an answer looks, change this file.
"""
from __future__ import annotations

import html as _html
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import duckask.utils.api.trust_view as tv
from duckask.utils.delivery.export import nulls_shown

if TYPE_CHECKING:
    import pandas as pd

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_CLARIFY = 0, 1, 2, 3
#: A Result's status -> the exit code of every command (README "Exit codes"). 3: a person must act (answer a
#: clarifying question, or approve what waits); 1: it failed or was refused.
EXIT_CODES = {"answered": EXIT_OK, "declined": EXIT_OK, "written": EXIT_OK, "rejected": EXIT_OK,
              "needs_clarification": EXIT_CLARIFY, "pending": EXIT_CLARIFY, "unsure": EXIT_CLARIFY,
              "blocked": EXIT_FAIL, "rolled_back": EXIT_FAIL, "error": EXIT_FAIL, "unanswerable": EXIT_FAIL}
#: Intents whose SQL is part of the answer (a schema or general answer shows none).
SQL_INTENTS = ("data", "sql", "change")


def exit_code(status: str, detail: str | None = None) -> int:
    """The exit code for a Result's status; a write rejected for want of a terminal is 3 (a person must act)."""
    from duckask.utils.state.writes import NO_APPROVER

    if status == "rejected" and detail == NO_APPROVER:
        return EXIT_CLARIFY
    return EXIT_CODES.get(status, EXIT_FAIL)


def rows_json(df: pd.DataFrame | None, max_rows: int | None = None) -> list[list]:
    """Rows as JSON values (dates ISO, anything else as text): the one serialiser of rows."""
    if df is None:
        return []
    rows = df if max_rows is None else df.head(max_rows)
    binary = [c for c in range(rows.shape[1]) if rows.dtypes.iloc[c].kind == "O" and
              rows.iloc[:, c].map(lambda v: isinstance(v, bytes | bytearray)).any()]
    if binary:              # bytes as Postgres and DuckDB print them (\x hex): JSON has no bytes, nor must it guess
        rows = rows.copy()
        for c in binary:
            rows.isetitem(c, rows.iloc[:, c].map(lambda v: "\\x" + bytes(v).hex() if isinstance(v, bytes | bytearray)
                                                 else v))
    return json.loads(rows.to_json(orient="values", date_format="iso", default_handler=str))


@dataclass
class Parts:
    """What a Result shows, computed once for every surface."""
    question: str
    understood: str | None          # the follow-up as one standalone question, when it differs
    status: str
    intent: str
    answer: str
    derivation: str
    warning: str | None
    sql: str | None                 # shown for data and sql intents
    df: pd.DataFrame                # all the rows the Result holds (a surface shows the head)
    truncated: bool
    card: str | None                # a write's approval card as text
    stats: str                      # "1.2s, 3 LLM calls"
    trace: str                      # the trace table
    llm: dict = field(default_factory=dict)
    plan: str | None = None         # the plan MetricFlow compiled, when the plan path answered
    confidence: str | None = None   # "Confidence: medium — reasons" (utils/api/trust_view.py)
    engine_sql: str | None = None   # a live source: the query as its engine ran it

    def more(self, shown: int) -> str | None:
        """"... N rows" when more rows exist than ``shown``."""
        if len(self.df) <= shown:
            return None
        return f"... {len(self.df)}{'+' if self.truncated else ''} rows"


def llm_totals(r) -> dict[str, int]:
    calls = r.llm_calls
    return {"calls": len(calls), "prompt_tokens": sum(c["prompt_tokens"] for c in calls),
            "completion_tokens": sum(c["completion_tokens"] for c in calls),
            "reused_tokens": sum(c.get("reused_tokens", 0) for c in calls)}


def trace_table(trace: list[dict]) -> str:
    lines = [f"{'node':<15} {'action':<12} {'ms':>9} {'calls':>5} {'prompt':>7} {'compl':>6} {'try':>3}"]
    for t in trace:
        lines.append(f"{t['node']:<15} {t['action']:<12} {t['ms']:>9.1f} {t['llm_calls']:>5} "
                     f"{t['prompt_tokens']:>7} {t['completion_tokens']:>6} {t['attempt']:>3}")
    return "\n".join(lines)


def parts(r) -> Parts:
    import pandas as pd

    understood = r.resolved_question if r.resolved_question and r.resolved_question != r.question else None
    return Parts(question=r.question, understood=understood, status=r.status, intent=r.intent, answer=r.answer,
                 derivation=r.derivation, warning=r.warning, sql=r.sql if r.intent in SQL_INTENTS else None,
                 df=r.df if r.df is not None else pd.DataFrame(), truncated=r.truncated,
                 card=r.write.text() if r.write and r.status == "pending" else None,
                 stats=f"{seconds_said(r.seconds)}, {len(r.llm_calls)} LLM calls", trace=trace_table(r.trace),
                 llm=llm_totals(r), plan=plan_text(r), confidence=tv.confidence_line(r.confidence),
                 engine_sql=r.engine_sql if r.intent in SQL_INTENTS else None)


def plan_text(r) -> str | None:
    """The plan that answered, one part a line, its names as labels ("by: player's full name"; the plan as the
    model wrote it where a record has no labels), or None on the SQL path."""
    if r.path != "plan" or not r.plan or not r.plan.get("plan"):
        return None
    plan = r.plan.get("shown") or r.plan["plan"]
    return "\n".join(f"{k}: " + (", ".join(map(str, v)) if isinstance(v, list) else str(v))
                     for k, v in plan.items() if v not in (None, [], ""))


def seconds_said(seconds: float) -> str:
    """Time as people say it: "85 s" from ten seconds up, "1.2 s" below."""
    return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"


# --------------------------------------------------------------------------- plain text
def _streamed_note(p: Parts, streamed: str) -> tuple[bool, str | None]:
    """(show the answer again?, a note first): a sentence streamed while written is not printed twice,
    unless it differs from the checked answer."""
    if not streamed:
        return True, None
    if " ".join(streamed.split()) == p.answer:
        return False, None
    return True, "That sentence did not match the result; from the data:"


def text(r, max_rows: int = 20, *, streamed: str = "", trace: bool = False) -> str:
    p = parts(r)
    out = [""] if streamed else []
    if p.understood:
        out.append(f"(understood as: {p.understood})")
    again, note = _streamed_note(p, streamed)
    out += [x for x in (note, p.answer if again else None, p.derivation or None, p.confidence) if x]
    if p.warning:
        out.append(f"Warning: {p.warning}")
    if p.card:
        out += ["", p.card]
    if p.plan:
        out += ["", "Plan (MetricFlow wrote the SQL):", p.plan]
    if p.sql:
        out += ["", "SQL:", p.sql]
    if p.engine_sql:
        out += ["", "Ran in the source as:", p.engine_sql]
    if len(p.df):
        out += ["", nulls_shown(p.df.head(max_rows)).to_string(index=False)]
        out += [m for m in (p.more(max_rows),) if m]
    out += tv.candidates_text(r, max_rows)
    if trace:
        t = p.llm
        out += ["", p.trace, f"total: {seconds_said(r.seconds)}, {t['calls']} LLM calls, {t['prompt_tokens']} prompt + "
                             f"{t['completion_tokens']} completion tokens"]
    return "\n".join(out)


# --------------------------------------------------------------------------- rich (terminal)
def rich_lines(r, max_rows: int = 20, *, streamed: str = "", understood_said: bool = False) -> list:
    """Renderables for a rich Console, in order (strings are markup). ``understood_said``: the follow-up's
    standalone question was already shown, before the answer (``Terminal.understood``)."""
    from rich.markup import escape
    from rich.table import Table

    p = parts(r)
    out: list = [""] if streamed else []
    if p.understood and not understood_said:
        out.append(f"[dim](understood as: {escape(p.understood)})[/dim]")
    again, note = _streamed_note(p, streamed)
    if note:
        out.append(f"[yellow]{note}[/yellow]")
    if again:
        out.append(f"[bold]A:[/bold] {escape(p.answer)}")
    if p.derivation:
        out.append(f"[dim]{escape(p.derivation)}[/dim]")
    if p.confidence:
        out.append(f"[{ {'high': 'green', 'medium': 'yellow'}.get(r.confidence['level'], 'red')}]"
                   f"{escape(p.confidence)}[/]")
    if p.warning:
        out.append(f"[red]Warning: {escape(p.warning)}[/red]")
    if p.card:
        out.append(escape(p.card))
    if p.plan:
        out.append(f"[cyan]Plan (MetricFlow wrote the SQL):[/cyan]\n{escape(p.plan)}")
    if p.sql:
        out.append(sql_syntax(p.sql))
    if p.engine_sql:
        out.append("[cyan]Ran in the source as:[/cyan]")
        out.append(sql_syntax(p.engine_sql))
    if len(p.df):
        t = Table(show_lines=False)
        for c in p.df.columns:
            t.add_column(str(c), justify="right" if p.df[c].dtype.kind in "iuf" else "left")
        for row in nulls_shown(p.df.head(max_rows)).itertuples(index=False):
            t.add_row(*[str(v) for v in row])
        out.append(t)
        out += [f"[dim]{m}[/dim]" for m in (p.more(max_rows),) if m]
    out += [escape(x) for x in tv.candidates_text(r, max_rows)]
    return out


def sql_syntax(sql: str):
    """The SQL laid out and highlighted for a terminal."""
    from rich.syntax import Syntax

    from duckask.utils.sql.format import format_sql

    return Syntax(format_sql(sql), "sql", word_wrap=True, theme="ansi_dark")


# --------------------------------------------------------------------------- HTML (notebook)
def html(r, max_rows: int = 20) -> str:
    """The notebook view: the answer first, then how it was derived, the SQL laid out and wrapped,
    the table, and the trace folded away."""
    from duckask.utils.sql.format import format_sql

    p, e = parts(r), _html.escape
    out = [f"<div><p style='font-size:1.1em'>{e(p.answer)}</p>"]
    if p.derivation:
        out.append(f"<p><i>{e(p.derivation)}</i></p>")
    out.append(tv.badge_html(r.confidence))
    if p.warning:
        out.append(f"<p style='color:#b00'>{e(p.warning)}</p>")
    asked = e(p.question) + (f" <i>(understood as: {e(p.understood)})</i>" if p.understood else "")
    out.append(f"<p style='color:#666'>Q: {asked} · {e(p.status)}, {e(p.intent)}, {e(p.stats)}</p>")
    if p.card:
        out.append(f"<pre>{e(p.card)}</pre>")
    if p.plan:
        out.append(f"<p>Plan (MetricFlow wrote the SQL):</p><pre>{e(p.plan)}</pre>")
    for label, sql in (("", p.sql), ("<p>Ran in the source as:</p>", p.engine_sql)):
        if sql:
            out.append(label + "<pre style='white-space:pre-wrap;word-break:break-word'>" + e(format_sql(sql))
                       + "</pre>")
    if len(p.df):
        out.append(nulls_shown(p.df.head(max_rows)).to_html(index=False))
        out += [f"<p>{m}</p>" for m in (p.more(max_rows),) if m]
    out += tv.candidates_html(r, max_rows)
    out.append("<details><summary>trace</summary><pre>" + e(p.trace) + "</pre></details></div>")
    return "\n".join(out)


# --------------------------------------------------------------------------- JSON
def as_json(r, max_rows: int | None = None) -> dict[str, Any]:
    """The ``--json`` object (and the server's, the chat's JSON lines)."""
    from duckask.utils.api.chart import choose_chart

    p = parts(r)
    return {
        "status": r.status, "question": r.question, "answer": r.answer, "sql": r.sql, "engine_sql": r.engine_sql,
        "columns": [str(c) for c in p.df.columns], "rows": rows_json(p.df, max_rows),
        "row_count": len(p.df), "truncated": r.truncated, "tables": r.tables,
        "derivation": r.derivation, "warning": r.warning,
        "clarifying_question": r.clarifying_question, "first_sql": r.first_sql,
        "intent": r.intent, "resolved_question": r.resolved_question, "answer_check": r.answer_check,
        "confirmations": r.confirmations, "routing": r.routing, "answerable": r.answerable, "chart": choose_chart(r.df),
        "write": r.write.public() if r.write else None, "path": r.path, "plan": r.plan,
        "template": r.template, "confidence": tv.public(r.confidence),
        "alternatives": tv.candidates_json(r, rows_json, max_rows),
        "sources": r.sources, "vote": r.vote, "attempts": r.attempts, "grades": r.grades,
        "grade_status": r.grade_status,
        "trace": r.trace, "llm": p.llm,
        "llm_calls": [{k: v for k, v in c.items() if k != "text"} for c in r.llm_calls],
        "seconds": round(r.seconds, 3), "db": r.db,
        "examples": [{"id": e["id"], "question": e["question"], "similarity": e["similarity"]} for e in r.examples],
    }


#: The keys of ``as_json`` an agent gets from the MCP ``ask`` tool.
AGENT_KEYS = ("status", "answer", "sql", "engine_sql", "intent", "derivation", "warning", "clarifying_question",
              "write", "path", "template", "confidence", "alternatives", "sources", "answerable")


def for_agent(r, max_rows: int) -> dict[str, Any]:
    """The MCP ``ask`` tool's reply: the same values as ``as_json``, fewer keys; rows only when there are some."""
    d = as_json(r, max_rows)
    out = {k: d[k] for k in AGENT_KEYS if d[k] not in (None, "", [])}
    if r.df is not None:
        out.update(columns=d["columns"], rows=d["rows"], row_count=d["row_count"], truncated=d["truncated"])
    return out
