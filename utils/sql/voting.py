"""Execution-guided voting over candidate SQL queries (self-consistency on results, not on text).

Several drafts of the same question often differ in text but agree on the rows they return; the
largest group of drafts with equal results is the most likely answer. Results are compared with the
scorer's semantics (rows as a multiset, any column order, rounded numbers), so two queries that only
order or alias their columns differently vote together. Drafts that fail to run get no vote; a group
whose result is empty or all NULL ranks below any group with a real answer; ties go to the group whose
likeliest query the model gave the highest mean log-probability, then to the one holding the earliest draft
(the greedy one).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from duckask.utils.db.database import QueryOutcome
from duckask.utils.sql.compare import results_match


@dataclass
class Vote:
    chosen: int                 # index into the outcomes of the query the vote picked
    groups: list[list[int]]     # indices of the successful outcomes, grouped by equal results, best first


def substantive(df) -> bool:
    """A result with at least one non-NULL value."""
    return df is not None and len(df) > 0 and bool(df.notna().to_numpy().any())


def vote(outcomes: list[QueryOutcome], weights: list[int] | None = None,
         scores: list[float | None] | None = None) -> Vote:
    """Pick one of ``outcomes`` (``weights[i]`` drafts produced outcome i; ``scores[i]`` is the model's mean
    log-probability of its query, where known: of two groups as large, the likelier wins). With no successful
    outcome, the first one is chosen and ``groups`` is empty."""
    weights = weights or [1] * len(outcomes)
    likely = [s if s is not None else float("-inf") for s in (scores or [None] * len(outcomes))]
    groups: list[list[int]] = []
    for i, o in enumerate(outcomes):
        if not o.ok:
            continue
        for g in groups:
            if results_match(o.df, outcomes[g[0]].df):
                g.append(i)
                break
        else:
            groups.append([i])
    groups.sort(key=lambda g: (not substantive(outcomes[g[0]].df), -sum(weights[i] for i in g),
                               -max(likely[i] for i in g), g[0]))
    return Vote(chosen=groups[0][0] if groups else 0, groups=groups)


#: The reviewer's instruction: it reads a query and its result and is scored on the question (``rerank``).
REVIEWER = "You read a DuckDB query and its result, and write the question a user asked to get it."


def first_rows(df, rows: int = 3) -> str:
    """A result's column names and first ``rows`` rows as short comma-separated lines (what a model is shown of it)."""
    head = [", ".join(str(v)[:40] for v in r) for r in df.head(rows).itertuples(index=False)]
    return "\n".join([", ".join(map(str, df.columns)), *head])


def reviewer_messages(sql: str, df) -> list[dict[str, str]]:
    """The reviewer's prompt for one draft: its SQL and first rows; the question is the continuation scored."""
    rows = "(it failed)" if df is None else first_rows(df)
    return [{"role": "system", "content": REVIEWER},
            {"role": "user", "content": f"SQL: {' '.join(sql.split())}\nResult:\n{rows}\n\nThe question:"}]


def rerank(v: Vote, outcomes: list[QueryOutcome], weights: list[int], question: str,
           score: Callable[[list[dict[str, str]], str], float]) -> tuple[Vote, list[float | None]]:
    """``v`` with its groups that hold a real answer ordered by how well each reads back to ``question``: the
    reviewer's log-probability of the question given the group's query and result (``score``: summed over the
    question's tokens), plus the log of the drafts that agree on it (the vote as a prior). After Zhang et al.,
    "Coder-Reviewer Reranking for Code Generation" (2022), and LEVER (Ni et al., 2023: the program's execution result
    is part of what is scored). Groups with nothing in them stay last, in the vote's order. Returns the vote and each
    group's score (None: not scored)."""
    real = [g for g in v.groups if substantive(outcomes[g[0]].df)]
    if len(real) < 2:               # nothing to choose between: no model call
        return v, [None] * len(v.groups)
    rest = [g for g in v.groups if g not in real]
    scored = {id(g): score(reviewer_messages(outcomes[g[0]].sql, outcomes[g[0]].df), " " + question)
              + math.log(sum(weights[i] for i in g)) for g in real}
    real.sort(key=lambda g: -scored[id(g)])
    groups = real + rest
    return Vote(chosen=groups[0][0] if groups else v.chosen, groups=groups), \
        [round(scored[id(g)], 3) if id(g) in scored else None for g in groups]


@dataclass(frozen=True)
class Candidates:
    """One turn's vote, as SQLExecutor left it: the ``ballot`` (each distinct draft: its SQL, the query that ran
    after free repairs, how many drafts gave it, their positions, status, rows, and whether it is ``chosen`` or
    ``agrees`` with the answer), the result ``groups`` best first (``members``, ``lead``, ``sql``, ``outcome``,
    ``plan``: the plan's query is among them), the group served (``at``) and how many of ResponseGrader's moves
    had been asked for when it was served (``served``). SQLExecutor replaces it whole (``serve``); nothing else
    writes it."""
    ballot: tuple[dict, ...] = ()
    groups: tuple[dict, ...] = ()
    at: int = 0
    served: int = 0

    def next_group(self) -> int | None:
        """The next group after the one served with a real answer, if any: when the checks reject one answer, an
        empty or all-NULL one is no better."""
        return next((i for i in range(self.at + 1, len(self.groups)) if substantive(self.groups[i]["outcome"].df)),
                    None)

    def asked_to_move(self, moves: int) -> bool:
        """ResponseGrader has asked for another group (``moves`` so far) since this one was served."""
        return moves > self.served

    @property
    def current(self) -> dict:
        """The group served (empty when one query ran alone)."""
        return self.groups[self.at] if self.groups else {}

    def serve(self, at: int, moves: int) -> Candidates:
        """These candidates serving group ``at`` (after ``moves`` of the grader's): the ballot marks the draft
        chosen and the drafts that agree with it."""
        lead = self.groups[at] if self.groups else {}
        ballot = tuple({**b, "chosen": i == lead.get("lead", 0), "agrees": i in lead.get("members", [])}
                       for i, b in enumerate(self.ballot))
        return Candidates(ballot, self.groups, at, moves)

    def alone(self) -> Candidates:
        """One query ran on its own (a repair, a retry): the ballot stays on record, no group to move to."""
        return Candidates(self.ballot)
