"""The shapes of the turn's records: what a node (or a hand-off) keeps under one key of the turn state, key by key.

``utils/turn.py`` declares the keys and who owns them; here is what the records under some of them hold, each field
read from its writer (the node or hand-off named) and said in one line. ``Result`` (``utils/api/result.py``) hands
the same records on, so these are also the shapes of its ``plan``, ``template``, ``confidence``, ``grades`` and
``attempts`` (and of the ``--json`` object's). A leaf: it imports nothing of the package, so any layer may use it.
"""
from __future__ import annotations

from typing import Any, TypedDict


# --------------------------------------------------------------------------- the SQL path's messages
class SQLPrompt(TypedDict):
    """SQLGenerator's last prompt, for drafts drawn later from it (AssessConfidence)."""
    messages: list[dict[str, str]]      # the chat messages sent
    stable: str                         # their question-independent start (the model keeps its state)


class _Retry(TypedDict):
    kind: str                           # error or grader: what sent the turn back
    sql: str | None                     # the query that failed or was judged wrong
    message: str                        # the error's summary or the check's critique


class Feedback(_Retry, total=False):
    """What SQLGenerator's next draft is told (``ask_again``)."""
    reach: list[str]        # tables beyond the selected ones a check says hold the answer (the retry shows them)


class PlanSQL(TypedDict):
    """A plan's query waiting for the SQL path's drafts (PlanQuery, the race)."""
    sql: str                            # MetricFlow's query, as a person would write it
    logprob: float | None               # the plan's mean log-probability (None where unknown)


class BudgetStop(TypedDict):
    """The time budget stopped further work (``TracedNode.stop_for_budget``)."""
    node: str                           # the node that stopped
    instead_of: str                     # what it would have done
    after_s: float                      # seconds into the turn


# --------------------------------------------------------------------------- the queries tried
class AttemptSource(TypedDict, total=False):
    """Where a query tried came from: what ``tried``'s callers say of it."""
    source: str             # who wrote it: llm, repair, plan, template, user, user edit, model change
    after: str              # what it followed: question, error, grader, resample, confirm, review, request
    min_prob: float         # a greedy draft's least likely token's probability (the embedded model only)
    mean_logprob: float     # a greedy draft's mean token log-probability (the embedded model only)


class AttemptOutcome(TypedDict, total=False):
    """How a query tried ended: what ``mark_attempt``'s callers say of it."""
    sql: str | None         # the query (SQLExecutor: the one the vote served, in place of the draft)
    status: str             # ok, refused, timeout, error (the executor's); declined (ConfirmSQL: the user said no)
    error: str | None       # DuckDB's error, the refusal, why the user declined, or why a plan's query fell back
    ms: float               # how long it ran
    engine_sql: str         # a live source: the query as its engine ran it


class Attempt(AttemptSource, AttemptOutcome, total=False):
    """One query the turn tried (``tried`` adds it, ``mark_attempt`` says how it ended); ``sql`` always set."""


# --------------------------------------------------------------------------- the plan and the template
class PlanRecord(TypedDict, total=False):
    """PlanQuery's record of the plan path (``fall_back`` adds why it was given up)."""
    path: str                           # plan (the plan answers) or sql (the SQL path runs instead)
    why: str                            # why the SQL path runs: the plan path off, no metric named, a bad plan...
    gate: str                           # the coverage rule that found the plan does not cover the question
    reached: list[str]                  # the metrics the question names ("list of <entity>" for a list)
    text: str                           # the plan as the model wrote it (YAML)
    plan: dict[str, list[str] | int | None]     # the parsed plan: metrics, group_by, where, order_by, limit
    filtered: list[str]                 # filters put in for a grouped dimension whose value the question names
    shown: dict[str, list[str]]         # the plan in labels: measures, by, where, order, limit (what is shown)
    derivation: str                     # the plan in words, from the semantic file's names and formulas
    logprob: float | None               # the plan's mean log-probability (None where unknown)
    raced: bool                         # the plan's query was a candidate beside the SQL path's drafts
    fallback: str                       # why its answer was given up for the SQL path (``fall_back``)


class KeptPair(TypedDict):
    """The kept pair a template came from."""
    id: str                             # the pair's id ("file:3" or the store's)
    question: str                       # the question kept
    sql: str                            # the SQL kept with it
    by: str | None                      # who kept it (the audit's approver); None for a file's pair


class Slot(TypedDict):
    """One value a template put in."""
    kept: str                           # the kept pair's value
    asked: str                          # the question's value put in its place


class TemplateRecord(TypedDict, total=False):
    """MatchTemplate's record of the template that answers (``fall_back`` adds why it was given up)."""
    sql: str                            # the kept pair's SQL with the question's values put in
    pair: KeptPair                      # the kept pair it came from
    slots: list[Slot]                   # the values put in
    exact: bool                         # the same question word for word, no value changed
    reach: str                          # how the pair was reached: exact, variant or paraphrase (by meaning)
    decided: str | None                 # a paraphrase's: concepts or wording (``knowledge.reach``); else None
    fallback: str                       # why its answer was given up for the SQL path (``fall_back``)


# --------------------------------------------------------------------------- the answer's checks
class Answer(TypedDict, total=False):
    """The answer record only ``finish`` sets."""
    status: str             # answered, unsure, unanswerable, needs_clarification, error, pending, declined; a write's
    text: str               # the answer in words
    derivation: str         # how it was derived (the SQL's, the plan's or the kept pair's, in words)


class AnswerCheck(TypedDict, total=False):
    """How DataAnalyzer wrote the answer's sentence, and what its check found."""
    by: str                 # llm (the model's sentence stood) or rules (no call, or the model's was replaced)
    sentence: str           # the model's sentence the check replaced
    problems: list[str]     # what the check found wrong in it (or why the call failed)


class Grade(TypedDict, total=False):
    """One verdict of ResponseGrader."""
    verdict: str            # pass or fail
    critique: str           # what the query gets wrong ("" on a pass)
    by: str                 # rules, llm, off, user SQL, or the fallback when the grader's reply was unusable
    check: str | None       # the check that failed (``checks.registry``)
    reach: list[str]        # tables beyond the selected ones that check says hold the answer
    overridden: str         # a check passed over: it objects to the kept pair's own answer too
    sql: str | None         # the query judged


class DraftGroup(TypedDict):
    """A group of drafts AssessConfidence drew to weigh the answer, by equal results."""
    sql: str                # the group's query
    drafts: int             # how many drafts gave this result
    answer: bool            # the answer's own group
    rows: int | None        # its rows (None: it did not run)


class Confidence(TypedDict, total=False):
    """AssessConfidence's record (``trust.confidence.assess``)."""
    level: str                          # high, medium or low
    score: float                        # the fitted model's probability that the answer is right
    reasons: list[str]                  # why, in words, the largest first
    signals: dict[str, Any]             # what it was read from (``trust.signals.collect``: counts, flags, names)
    drafts: list[DraftGroup]            # the drafts drawn to weigh the answer, when some were
