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
