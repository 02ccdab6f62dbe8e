"""Wiring only: the duckask graph.

ClarifyQuery -clear-> TableSelector -> SchemaLookup -> SQLGenerator -> SQLExecutor
ClarifyQuery -ambiguous-> AskUser -answered-> TableSelector   (non-interactive: ends)
SQLExecutor -error-> ErrorFixer -resample/-retry-> SQLGenerator | -repaired-> SQLExecutor | -give_up-> ReportError
SQLExecutor -success-> DataAnalyzer -> ResponseGrader -resample/-fail-> SQLGenerator | -pass/-exhausted-> end
"""
from __future__ import annotations

import warnings

from pocketflow import Flow

from duckask.nodes import (
    AskUser,
    ClarifyQuery,
    Context,
    DataAnalyzer,
    ErrorFixer,
    ReportError,
    ResponseGrader,
    SchemaLookup,
    SQLExecutor,
    SQLGenerator,
    TableSelector,
)

# Terminal actions ("pass", "exhausted", AskUser/ReportError's end) have no successor by design.
warnings.filterwarnings("ignore", message="Flow ends:")


def build_flow(ctx: Context) -> Flow:
    clarify, ask_user = ClarifyQuery(ctx), AskUser(ctx)
    select, schema, generate = TableSelector(ctx), SchemaLookup(ctx), SQLGenerator(ctx)
    execute, fix, report = SQLExecutor(ctx), ErrorFixer(ctx), ReportError(ctx)
    analyze, grade = DataAnalyzer(ctx), ResponseGrader(ctx)

    clarify - "clear" >> select
    clarify - "ambiguous" >> ask_user
    ask_user - "answered" >> select
    select >> schema >> generate >> execute
    execute - "error" >> fix
    fix - "resample" >> generate
    fix - "retry" >> generate
    fix - "repaired" >> execute
    fix - "give_up" >> report
    execute - "success" >> analyze
    analyze >> grade
    grade - "resample" >> generate
    grade - "fail" >> generate
    return Flow(start=clarify)
