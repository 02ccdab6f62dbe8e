"""Wiring only: the duckask graph.

The picture of what is wired here is docs/design.md's section 2 (a mermaid diagram that
tests/test_design.py holds to exactly these edges) and its nodes table, generated from this wiring; no
other drawing of the graph is kept, so none can drift from it.
"""
from __future__ import annotations

import warnings

from pocketflow import Flow

from duckask.nodes import (
    AnswerFromTool,
    AnswerGeneral,
    AnswerSchema,
    ApplyWrite,
    AskUser,
    AssessConfidence,
    CallTool,
    CheckAnswerable,
    ChooseSource,
    ClarifyQuery,
    ConfirmSQL,
    Context,
    DataAnalyzer,
    ErrorFixer,
    IntentRouter,
    MatchTemplate,
    PlanQuery,
    ProposeWrite,
    ReportError,
    ResolveFollowUp,
    ResponseGrader,
    ReviewWrite,
    SchemaLookup,
    SQLExecutor,
    SQLGenerator,
    TableSelector,
)

# Terminal actions ("pass", "exhausted", the answer nodes' end, ...) have no successor by design.
warnings.filterwarnings("ignore", message="Flow ends:")

#: Where a flow can start: the router (a new turn), ConfirmSQL (a pending query approved or edited) or
#: ReviewWrite (a pending write approved, edited or rejected).
ENTRIES = ("route", "confirm", "write")


def build_flow(ctx: Context, entry: str = "route") -> Flow:
    route, resolve = IntentRouter(ctx), ResolveFollowUp(ctx)
    schema_answer, general_answer, confirm = AnswerSchema(ctx), AnswerGeneral(ctx), ConfirmSQL(ctx)
    clarify, ask_user, answerable = ClarifyQuery(ctx), AskUser(ctx), CheckAnswerable(ctx)
    plan, template = PlanQuery(ctx), MatchTemplate(ctx)
    select, schema, generate = TableSelector(ctx), SchemaLookup(ctx), SQLGenerator(ctx)
    execute, fix, report = SQLExecutor(ctx), ErrorFixer(ctx), ReportError(ctx)
    analyze, grade, assess = DataAnalyzer(ctx), ResponseGrader(ctx), AssessConfidence(ctx)
    review, apply, propose = ReviewWrite(ctx), ApplyWrite(ctx), ProposeWrite(ctx)
    choose, call_tool, tool_answer = ChooseSource(ctx), CallTool(ctx), AnswerFromTool(ctx)

    route - "data" >> resolve
    route - "schema" >> schema_answer
    route - "sql" >> confirm
    route - "write" >> review
    route - "change" >> select          # a change asked in plain English: its tables, then the model's statement
    schema - "change" >> propose
    propose - "write" >> review
    propose - "read" >> clarify         # it was a question after all
    review - "approved" >> apply
    review - "edit" >> review
    # With tools (the ``tools`` setting), ChooseSource decides database / tool / none; without, it is not in
    # the graph at all. build_flow(None) (the design check) draws the wiring with tools.
    if ctx is None or ctx.tools:
        resolve >> choose
        route - "general" >> choose     # an off-topic question may be the web's
        choose - "database" >> clarify
        choose - "tool" >> call_tool
        choose - "none" >> general_answer
        call_tool - "answer" >> tool_answer
    else:
        resolve >> clarify
        route - "general" >> general_answer
    clarify - "clear" >> answerable     # "cannot": the data cannot answer it; the turn ends there
    answerable - "answerable" >> template
    template - "none" >> plan
    clarify - "ambiguous" >> ask_user
    ask_user - "answered" >> answerable
    plan - "sql" >> select
    plan - "both" >> select             # with candidates: the plan's query waits for the SQL path's drafts
    execute - "fallback" >> select
    grade - "fallback" >> select
    select >> schema >> generate
    confirm - "run" >> execute
    confirm - "revise" >> generate
    confirm - "replan" >> select
    # build_flow(None) (the design check) draws every edge there is: the confirm wiring included.
    if ctx is None or ctx.settings.confirm:
        generate >> confirm
        plan - "planned" >> confirm
        template - "template" >> confirm
        fix - "repaired" >> confirm
    else:
        generate >> execute
        plan - "planned" >> execute
        template - "template" >> execute
        fix - "repaired" >> execute
    execute - "error" >> fix
    fix - "resample" >> generate
    fix - "retry" >> generate
    fix - "give_up" >> report
    execute - "success" >> analyze
    analyze >> grade
    grade - "resample" >> generate
    grade - "fail" >> generate
    grade - "next" >> execute           # the next group of candidates
    grade - "pass" >> assess
    grade - "exhausted" >> assess
    report >> assess
    if entry not in ENTRIES:
        raise ValueError(f"entry must be one of {', '.join(ENTRIES)}, not {entry!r}")
    return Flow(start={"route": route, "confirm": confirm, "write": review}[entry])
