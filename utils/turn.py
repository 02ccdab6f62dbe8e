"""The turn state: every key one turn of the graph reads and writes, declared once, typed and grouped.

PocketFlow hands one dict (``shared``) from node to node; ``Turn`` says what it may hold (mypy checks each read and
write). Each key has one owner, in its annotation: the node that writes it, or a hand-off below naming the nodes that
may call it (``@callers``: ``finish`` the answer, ``set_query`` the query...); a one-time message is read by ``take``.
``tests/test_turn.py`` holds every write and hand-off call to these owners; docs/reference/store.md is generated.
What the records under a key hold (the plan, the template, the confidence, the grades, the queries tried...), field by
field: ``utils/records.py``.
"""
from __future__ import annotations

import ast
import enum
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, TypedDict, cast, overload

from duckask.utils.records import (
    Answer,
    AnswerCheck,
    Attempt,
    AttemptOutcome,
    AttemptSource,
    BudgetStop,
    Confidence,
    Feedback,
    Grade,
    PlanRecord,
    PlanSQL,
    SQLPrompt,
    TemplateRecord,
)

if TYPE_CHECKING:        # for the type checker only (loading them here would pull pandas and the write path in)
    from pandas import DataFrame
    from typing_extensions import Unpack  # typing's from Python 3.11; the package runs on 3.10

    from duckask.utils.checks.facts import Facts
    from duckask.utils.sql.voting import Candidates
    from duckask.utils.tools.base import ToolResult
    from duckask.utils.writes.card import WriteCard


class Keep(enum.Enum):
    """The type of ``KEEP``: a hand-off parameter that may be left out says ``X | Keep`` (not ``Any``)."""
    KEEP = "keep"


#: Sentinel: a hand-off leaves this key as it is.
KEEP: Final = Keep.KEEP


def callers(*names: str):
    """Declare who may call a hand-off: node class names, or ``api`` (``utils/api/__init__.py``: it starts a turn)."""
    def mark(f):
        f.callers = frozenset(names)
        return f
    return mark


class Asked(TypedDict, total=False):
    """The question, and how the turn was routed."""
    question: Annotated[str, "restate"]
    """The question the graph works on: as typed, a follow-up made standalone, or with a clarification folded in."""
    original_question: Annotated[str, "start_turn"]
    """The turn as typed."""
    given_sql: Annotated[str | None, "start_turn"]
    """The user's own SQL handed in directly (``ask(sql=...)``, pasted SQL)."""
    history: Annotated[list[dict[str, Any]], "start_turn"]
    """Earlier turns of the conversation (``turn_record``)."""
    resolved_question: Annotated[str | None, "restate"]
    """The standalone question a follow-up or a declined query's comment became."""
    resolved_by: Annotated[str, "ResolveFollowUp"]
    """How the follow-up was resolved: the rule, ``llm`` or ``kept``."""
    previous_turn: Annotated[dict[str, Any] | None, "ResolveFollowUp"]
    """The last data turn's question, SQL and tables (an example for a follow-up)."""
    follow_up: Annotated[bool, "IntentRouter"]
    """The turn leans on the history."""
    intent: Annotated[str, "route"]
    """data, schema, general, sql, write or change."""
    intent_by: Annotated[str, "IntentRouter"]
    """The rule (or ``llm``) that set the intent."""
    clarification: Annotated[dict[str, Any], "ClarifyQuery"]
    """``{needed, reason, question}``."""
    answerable: Annotated[dict[str, Any], "CheckAnswerable"]
    """Can the data answer it (``trust/answerable.py``): ``{outcome, rule, missing, closest, reason, absent}``."""
    clarified: Annotated[str, "AskUser"]
    """The user's answer to the clarifying question (asked once: not again)."""
    source: Annotated[dict[str, Any], "ChooseSource"]
    """Which source answers: ``database``, a tool's name or ``none``; its arguments; the rule or ``llm``."""
    change_request: Annotated[str, "ProposeWrite"]
    """The plain-English request a write was proposed from (the card's ``request``)."""
    change_explanation: Annotated[str, "ProposeWrite"]
    """The model's one-line explanation of the statement it proposed (the card's ``model_says``)."""
    decision: Annotated[dict[str, Any] | None, "decide"]
    """A pending turn's decision (approve, edit, reject), handed in by the Result; taken once."""


class Drafted(TypedDict, total=False):
    """The SQL: the tables and schema the model saw, the query, its candidates and the plan."""
    selected_tables: Annotated[list[str], "TableSelector"]
    """The tables the model sees."""
    tables_by: Annotated[str, "TableSelector"]
    """How they were chosen: all, ranker (sure), llm, fallback."""
    value_matches: Annotated[list[dict[str, str]], "TableSelector"]
    """Literal and flag matches ``{table, column, value, phrase}``."""
    examples: Annotated[list[dict[str, Any]], "TableSelector"]
    """The retrieved example pairs ``{question, sql, id, tables, similarity}``."""
    table_schemas: Annotated[str, "SchemaLookup"]
    """The DDL the model sees."""
    stable_schema: Annotated[str, "SchemaLookup"]
    """Its question-independent start (kept on disk as a prompt state)."""
    sql_query: Annotated[str | None, "set_query"]
    """The current query."""
    sql_source: Annotated[str | None, "set_query"]
    """``user`` when the query is the user's own; ``model`` for a statement ProposeWrite wrote."""
    sql_candidates: Annotated[list[str] | None, "set_query"]
    """The drafts to run and vote on; SQLExecutor takes them once."""
    attempts: Annotated[list[Attempt], "tried"]
    """Every query tried (``Attempt``): sql, source, after, then status, error, ms (``mark_attempt``); greedy drafts:
    ``min_prob``, ``mean_logprob``."""
    first_sql: Annotated[str | None, "tried"]
    """The turn's first query."""
    generation_error: Annotated[str | None, "set_query"]
    """The LLM call that should have written the query failed."""
    sql_prompt: Annotated[SQLPrompt, "SQLGenerator"]
    """The messages and stable part of the last SQL prompt (drafts are sampled from it)."""
    candidate_scores: Annotated[list[float | None], "SQLGenerator"]
    """Each draft's mean log-probability (None where unknown): ties between groups go to the likelier."""
    resampled: Annotated[bool, "SQLGenerator"]
    """The one resample of the turn was drawn."""
    feedback: Annotated[Feedback | None, "ask_again"]
    """``{kind: error/grader, sql, message}`` for SQLGenerator's next draft; taken once."""
    resample: Annotated[bool, "ask_again"]
    """SQLGenerator is asked for fresh drafts of its first prompt; taken once."""
    plan: Annotated[PlanRecord, "PlanQuery"]
    """PlanQuery's record (``PlanRecord``): the plan, its derivation, the metrics reached, why the SQL path ran
    (``why``, ``gate``; ``fallback``: its answer given up)."""
    plan_sql: Annotated[PlanSQL | None, "PlanQuery"]
    """A plan's query waiting for the SQL path's drafts (the race): its SQL and mean log-probability; taken once."""
    template: Annotated[TemplateRecord, "MatchTemplate"]
    """MatchTemplate's record (``TemplateRecord``): the kept ``pair`` (its id, question, SQL, ``by``: who kept it), the
    ``slots``, the query, ``exact``, ``reach`` (``exact``, ``variant``, ``paraphrase``), ``decided``; ``fallback``: why
    SQL ran instead."""
    path: Annotated[str | None, "answered_by"]
    """Which path answered: ``template``, ``plan`` or ``sql``."""
    repair_count: Annotated[int, "ErrorFixer"]
    """Free repairs used."""
    retry_count: Annotated[int, "ErrorFixer"]
    """LLM retries used (``max_fix_retries``)."""
    confirmations: Annotated[list[dict[str, Any]], "ConfirmSQL"]
    """Each confirm-before-run decision."""
    confirm_rounds: Annotated[int, "ConfirmSQL"]
    """Revisions asked for."""


class Ran(TypedDict, total=False):
    """What running it gave: rows, the vote, a tool's answer, a write's card."""
    query_result: Annotated[DataFrame | None, "show_rows"]
    """The rows (a DataFrame) shown with the answer."""
    truncated: Annotated[bool, "show_rows"]
    """More rows existed than the row cap."""
    execution_error: Annotated[str | None, "SQLExecutor"]
    """DuckDB's error or the refusal."""
    candidates: Annotated[Candidates, "SQLExecutor"]
    """The vote (``sql/voting.Candidates``): each distinct draft on the ballot (the query run, status, rows, chosen),
    the result groups best first, the group served and the grader's moves; ``next_group()``: the next real answer."""
    candidate_moves: Annotated[list[dict[str, str]], "ResponseGrader"]
    """Each move to the next candidate group: the query left and why (the failed check's critique)."""
    tool_calls: Annotated[list[dict[str, Any]], "CallTool"]
    """Each tool asked: ok, error, ms, arguments, sources."""
    tool_result: Annotated[ToolResult | None, "CallTool"]
    """The tool answer that worked."""
    sources: Annotated[list[dict[str, str]], "AnswerFromTool"]
    """What a tool's answer cites (``{name, url, title}``)."""
    write: Annotated[WriteCard | None, "card"]
    """The write's ``WriteCard`` (``utils/writes/card.py``): SQL, tier, estimate, decision, outcome, audit id."""


class Answered(TypedDict, total=False):
    """The answer, its checks and how sure it is."""
    answer: Annotated[Answer, "finish"]
    """The outcome: ``status`` (none until the run ends), the answer in words (``text``), its ``derivation``."""
    answer_check: Annotated[AnswerCheck, "DataAnalyzer"]
    """How the sentence was written (``by``: ``llm``, or ``rules`` when no call was made or the model's sentence was
    replaced), the model's ``sentence`` a check replaced, and the ``problems`` the check found."""
    best: Annotated[dict[str, Any], "DataAnalyzer"]
    """The last good answer, kept in case a later retry fails."""
    grades: Annotated[list[Grade], "ResponseGrader"]
    """The verdict of each grading round (``Grade``): verdict, critique, by, the check that failed, the query."""
    facts: Annotated[Facts, "ResponseGrader"]
    """What the checks compared the answer with (``checks.facts.Facts``), handed on to AssessConfidence."""
    grader_rounds: Annotated[int, "ResponseGrader"]
    """Grading rounds used."""
    grade_status: Annotated[str | None, "grade"]
    """pass, retry or fail."""
    warning: Annotated[str | None, "grade"]
    """A warning shown with the answer (the grader's objection)."""
    confidence: Annotated[Confidence | None, "AssessConfidence"]
    """Level, score, reasons, signals, and the drafts drawn to weigh the answer (``Confidence``); None: not assessed
    (the user's own SQL)."""
    alternatives: Annotated[list[dict[str, Any]], "AssessConfidence"]
    """An unsure answer's candidates: SQL, rows, drafts."""


class Spent(TypedDict, total=False):
    """What the turn cost: the trace, the LLM calls, the time."""
    trace: Annotated[list[dict[str, Any]], "TracedNode"]
    """Per node: action, ms, LLM calls, tokens, attempt, what it decided."""
    llm_calls: Annotated[list[dict[str, Any]], "TracedNode"]
    """Per LLM call: node, model, tokens, ms, reused tokens."""
    budget_stop: Annotated[BudgetStop, "TracedNode"]
    """The time budget stopped further work: which node, what it would have done, after how many seconds."""
    seconds: Annotated[float, "clock"]
    """Seconds across the turn's runs (a pending turn's resume adds to them)."""


class Turn(Asked, Drafted, Ran, Answered, Spent, total=False):
    """Everything one turn's shared store may hold."""


GROUPS = (Asked, Drafted, Ran, Answered, Spent)


def owners() -> dict[str, str]:
    """Each key's owner (a node's class name or a hand-off's) from its annotation's text, not evaluated."""
    text = {k: str(getattr(t, "__forward_arg__", t)) for k, t in Turn.__annotations__.items()}
    return {k: ast.literal_eval(ast.parse(t, mode="eval").body.slice.elts[1])  # type: ignore[attr-defined]
            for k, t in text.items()}


# --------------------------------------------------------------------------- starting a turn
@callers("api")
def start_turn(question: str, history: list[dict] | None = None, sql: str | None = None) -> Turn:
    """A fresh store: only the question, the given SQL and the conversation's history come in."""
    from duckask.utils.sql.voting import Candidates  # here, not at the top: declaring the state loads nothing
    return {"question": question, "original_question": question, "given_sql": sql, "history": list(history or []),
            "retry_count": 0, "grader_rounds": 0, "trace": [], "attempts": [], "candidates": Candidates()}


@callers("api")
def clock(shared: Turn, seconds: float) -> None:
    """Add one run's seconds to the turn's (a pending turn resumed runs again)."""
    shared["seconds"] = shared.get("seconds", 0.0) + seconds


# --------------------------------------------------------------------------- hand-offs between nodes
@callers("AnswerFromTool", "AnswerGeneral", "AnswerSchema", "ApplyWrite", "AskUser", "AssessConfidence", "CallTool",
         "CheckAnswerable", "ConfirmSQL", "DataAnalyzer", "ProposeWrite", "ReportError", "ReviewWrite", "api")
def finish(shared: Turn, status: str | None, answer: str, derivation: str | Keep = KEEP, *, no_query: bool = False,
           rows: DataFrame | None | Keep = KEEP) -> None:
    """End the answer: status, words, derivation; ``no_query``: none shown (a tool, small talk), only ``rows``.
    The one writer of ``answer``: a status of None clears the outcome and keeps the words (``reopen``)."""
    before = shared.get("answer") or {}
    said: Answer = {"text": answer, "derivation": before.get("derivation", "") if derivation is KEEP else derivation}
    shared["answer"] = said if status is None else {"status": status, **said}
    if no_query:
        set_query(shared, None, candidates=KEEP)
        show_rows(shared, None if rows is KEEP else rows)
    elif rows is not KEEP:
        show_rows(shared, rows)


@callers("ConfirmSQL", "ErrorFixer", "IntentRouter", "MatchTemplate", "PlanQuery", "ProposeWrite", "ReportError",
         "ReviewWrite", "SQLExecutor", "SQLGenerator")
def set_query(shared: Turn, sql: str | None, source: str | None | Keep = KEEP, *,
              candidates: list[str] | None | Keep = None, error: str | None | Keep = KEEP) -> None:
    """Make ``sql`` the current query. ``candidates``: the drafts SQLExecutor runs and votes on (None: just this one);
    ``source``: whose it is (``user``, ``model``); ``error``: the LLM call that should have written it failed."""
    shared["sql_query"] = sql
    if candidates is not KEEP:
        shared["sql_candidates"] = candidates
    if source is not KEEP:
        shared["sql_source"] = source
    if error is not KEEP:
        shared["generation_error"] = error


@callers("ConfirmSQL", "ErrorFixer", "IntentRouter", "MatchTemplate", "PlanQuery", "ProposeWrite", "ReviewWrite",
         "SQLGenerator")
def tried(shared: Turn, sql: str | None, *, first: bool = False, **attempt: Unpack[AttemptSource]) -> None:
    """Add a query to the ones tried (its ``source``, ``after``...); ``first``: the turn's ``first_sql`` unless set."""
    shared.setdefault("attempts", []).append({"sql": sql, **attempt})
    if first:
        shared.setdefault("first_sql", sql)


@callers("ConfirmSQL", "SQLExecutor")
def mark_attempt(shared: Turn, **outcome: Unpack[AttemptOutcome]) -> None:
    """How the current query's attempt ended: ``status``, ``error``, ``ms`` (ConfirmSQL: the user declined it)."""
    shared["attempts"][-1].update({**outcome})     # a copy: a record of the attempt's own type


@callers("ReportError", "SQLExecutor")
def show_rows(shared: Turn, rows: DataFrame | None, truncated: bool | Keep = KEEP) -> None:
    """The rows shown with the answer (a DataFrame, or None), and whether the row cap cut them."""
    shared["query_result"] = rows
    if truncated is not KEEP:
        shared["truncated"] = truncated


@callers("ConfirmSQL", "ErrorFixer", "ResponseGrader")
def ask_again(shared: Turn, feedback: Feedback | None | Keep = KEEP, *, resample: bool | Keep = KEEP) -> None:
    """Send the turn back to SQLGenerator with ``feedback`` (an error, a critique) or for a ``resample`` (fresh drafts
    of its first prompt); it takes both once."""
    if feedback is not KEEP:
        shared["feedback"] = feedback
    if resample is not KEEP:
        shared["resample"] = resample


@callers("AskUser", "ConfirmSQL", "ResolveFollowUp")
def restate(shared: Turn, question: str, resolved: str | None | Keep = KEEP) -> None:
    """The question worked on from here (a follow-up made standalone...); ``resolved``: what the record shows."""
    shared["question"] = question
    if resolved is not KEEP:
        shared["resolved_question"] = resolved


@callers("IntentRouter", "ProposeWrite")
def route(shared: Turn, intent: str) -> None:
    """What kind of turn this is (IntentRouter; ProposeWrite when a change request turns out to be a question)."""
    shared["intent"] = intent


@callers("api")
def decide(shared: Turn, decision: dict) -> None:
    """A person's decision on a pending turn (approve, edit, reject), for the node that waits for it."""
    shared["decision"] = decision


@callers("api")
def reopen(shared: Turn) -> None:
    """A turn about to run (again: a pending one resumed) has no outcome yet (``finish`` without a status keeps its
    words and derivation); its run ends with ``finish``."""
    if "answer" in shared:
        finish(shared, None, shared["answer"].get("text", ""))


@callers("ApplyWrite", "ReviewWrite")
def card(shared: Turn, write: WriteCard | None) -> None:
    """The write's card: proposed and decided by ReviewWrite, its outcome by ApplyWrite."""
    shared["write"] = write


@callers("ReportError", "ResponseGrader")
def grade(shared: Turn, status: str, warning: str | None | Keep = KEEP) -> None:
    """The grader's verdict (pass, retry, fail) and the warning shown with the answer."""
    shared["grade_status"] = status
    if warning is not KEEP:
        shared["warning"] = warning


@callers("MatchTemplate", "PlanQuery", "SQLExecutor")
def answered_by(shared: Turn, path: str) -> None:
    """Which path's query the answer comes from: ``template``, ``plan`` or ``sql`` (a fallback or the race moves it)."""
    shared["path"] = path


#: The paths whose answer is given up for the SQL path when it fails, finds nothing or is judged wrong.
GIVE_UP = ("plan", "template")


@callers("ResponseGrader", "SQLExecutor")
def fall_back(shared: Turn, why: str, *, to_sql: bool = True) -> None:
    """The plan's or template's answer is given up (its query failed, found nothing, the grader objected): the reason
    goes on that path's record and, with ``to_sql``, the question goes on the SQL path."""
    record = shared["plan"] if shared["path"] == "plan" else shared["template"]
    record["fallback"] = why
    if to_sql:
        answered_by(shared, "sql")


#: The one-time messages a reader takes (reads and clears), each with the value it is cleared to.
MESSAGES = {"decision": None, "feedback": None, "resample": False, "plan_sql": None, "sql_candidates": None}


@overload
def take(shared: Turn, key: Literal["decision"]) -> dict[str, Any] | None: ...
@overload
def take(shared: Turn, key: Literal["feedback"]) -> Feedback | None: ...
@overload
def take(shared: Turn, key: Literal["resample"]) -> bool: ...
@overload
def take(shared: Turn, key: Literal["plan_sql"]) -> PlanSQL | None: ...
@overload
def take(shared: Turn, key: Literal["sql_candidates"]) -> list[str] | None: ...
@callers("ConfirmSQL", "ReviewWrite", "SQLExecutor", "SQLGenerator")
def take(shared: Turn, key: str) -> Any:
    """Read a one-time message and clear it, so that a later pass does not act on it again."""
    if key not in MESSAGES:
        raise KeyError(f"{key} is not a one-time message ({', '.join(MESSAGES)})")
    store = cast(dict, shared)       # the key is checked above; a TypedDict takes only literal keys
    value = store.get(key, MESSAGES[key])
    store[key] = MESSAGES[key]
    return value
