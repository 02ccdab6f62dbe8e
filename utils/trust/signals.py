"""The signals a finished question leaves behind, the inputs of its confidence, collected in one
plain dict so that a live run (AssessConfidence) and an eval record give the same thing.

Every signal costs nothing extra to collect: which path answered, the repairs and corrected attempts
the query needed, whether the first query failed or found nothing and drafts were voted on (and how
many of them agreed), the grader's verdict, the shape of the result (empty, all NULL, cut at the row
cap), how sure the model was of its greedy query (the lowest token probability and the mean
log-probability, embedded model only), the query's shape (tables joined, nesting), the closest
verified example's similarity, the size of the database (its tables), and whether the router placed the
question by a rule or by the model; and how well the answer is tied to the question and the data (the grounding
checks that still object to the final answer, and whether the values it compares are values of their columns:
``trust.grounding``).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from duckask.utils.db.tree import nested_selects, sql_tree, table_names
from duckask.utils.records import Attempt, Grade


def query_shape(sql: str) -> dict[str, int]:
    """Tables read (a CTE read counts as one) and SELECTs nested inside the outer one (0 when it does not parse)."""
    tree = sql_tree(sql)
    return {"tables": len(table_names(tree)), "nested": nested_selects(tree)}


def _certainty(attempts: list[Attempt]) -> dict[str, float]:
    """How sure the model was of the query the answer came from: the last LLM attempt (a free repair
    after it keeps its text mostly); {} when that attempt was sampled, or came from an endpoint."""
    last: Attempt = next((a for a in reversed(attempts) if a.get("source") == "llm"), Attempt())
    sure = {"min_prob": last.get("min_prob"), "mean_logprob": last.get("mean_logprob")}
    return {k: v for k, v in sure.items() if v is not None}


def collect(*, status: str, sql: str | None, df, attempts: list[Attempt], vote: list[dict], grades: list[Grade],
            truncated: bool = False, examples: list[dict] | None = None, path: str | None = None,
            intent_by: str | None = None, drafts: dict | None = None, db_tables: int | None = None,
            moves: int = 0, grounding: dict | None = None,
            budget_stop: Mapping[str, Any] | None = None, missing: list[str] | None = None,
            absent: list[str] | None = None, reach: str | None = None) -> dict[str, Any]:
    """The signals of one answered (or failed) question. ``drafts``: agreement measured after the answer
    ({"n", "agree"}, AssessConfidence); otherwise the candidates' (or a resample's) vote gives it, and
    ``dissent`` counts the drafts that ran and gave another result. ``moves``: candidate groups the
    checks rejected before this one. ``grounding``: ``trust.grounding.grounding`` of the final answer (the
    grounding checks that object to it, whether its literals are values of their columns). ``budget_stop``: the
    time budget ended the turn's work (``TracedNode.stop_for_budget``: which node, what it would have done).
    ``missing``: the question's words tied to nothing in the database (CheckAnswerable, ``trust.answerable``);
    ``absent``: those of them that name a thing. ``reach``: how a template's kept pair was reached (``exact``,
    ``variant``: the same words; ``paraphrase``: the same meaning worded otherwise, ``knowledge.reach``)."""
    llm = [a for a in attempts if a.get("source") == "llm"]
    ballots = [b for b in vote if b.get("status") == "ok"]
    n_drafts = sum(b.get("drafts", 1) for b in vote)
    agree = sum(b.get("drafts", 1) for b in ballots if b.get("agrees"))
    dissent = sum(b.get("drafts", 1) for b in ballots if not b.get("agrees"))
    if drafts:
        n_drafts, agree, dissent = drafts["n"], drafts["agree"], drafts.get("dissent", 0)
    objections = [g for g in grades if g.get("verdict") == "fail"]
    rows = None if df is None else len(df)
    return {
        "status": status, "path": path or "sql",
        "budget_stop": (budget_stop or {}).get("instead_of"),
        "retries": sum(1 for a in llm if a.get("after") in ("error", "grader")),
        "repairs": sum(1 for a in attempts if a.get("source") == "repair"),
        "resampled": any(a.get("after") == "resample" for a in llm),
        "drafts": n_drafts, "agree": agree, "dissent": dissent, "moved": moves,
        "grader": (grades[-1]["verdict"] if grades else None), "grader_by": (grades[-1].get("by") if grades else None),
        "objections": len(objections),
        "rows": rows, "empty": rows == 0,
        "null_only": bool(rows) and bool(df.isna().all().all()),
        "truncated": bool(truncated),
        **_certainty(attempts),
        # MetricFlow's SQL is nested by construction: its shape says nothing of the model's work on a plan.
        **(query_shape(sql or "") if path != "plan" else {"tables": None, "nested": None}),
        "example_similarity": max((e.get("similarity") or 0.0 for e in examples or []), default=None),
        "intent_by": intent_by, "db_tables": db_tables,
        "ungrounded": list((grounding or {}).get("ungrounded") or []),
        "literals_verified": (grounding or {}).get("literals_verified"),
        "untied": list((grounding or {}).get("untied") or []),
        "missing": list(missing or []), "absent": list(absent or []),
        "reach": reach if path == "template" else None,
    }
