"""What every node shares: the per-question Context and TracedNode, which records the trace."""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pocketflow import Node

from duckask.utils.config import Settings
from duckask.utils.db.database import Database
from duckask.utils.llm import MeteredLLM
from duckask.utils.schema.catalog import Catalog
from duckask.utils.turn import Turn

if TYPE_CHECKING:        # for the type checker only: importing them loads MetricFlow and the tools' clients
    from duckask.utils.knowledge.examples import Example
    from duckask.utils.semantic.manifest import SemanticLayer
    from duckask.utils.tools.base import Tool
    from duckask.utils.writes.card import WriteCard


@dataclass
class Context:
    """Resources for one question, handed to nodes at construction (the shared store holds data only)."""
    llm: MeteredLLM
    settings: Settings
    db: Database
    catalog: Catalog
    ask_user: Callable[[str], str] | None = None     # interactive clarification; None = never block
    on_node: Callable[[str], None] | None = None      # progress callback, called as each node starts
    examples: list[Example] = field(default_factory=list)  # verified example pairs for this database (knowledge)
    learned: list[Example] = field(default_factory=list)   # pairs `duckask learn` verified: examples, not templates
    confirm: Callable[[str, list], dict] | None = None  # confirm-before-run prompt; None = end "pending"
    on_text: Callable[[str], None] | None = None      # the answer sentence, piece by piece as it is written
    on_understood: Callable[[str], None] | None = None   # a follow-up as the standalone question it became
    approve_write: Callable[[WriteCard], dict] | None = None  # a write's card shown; the decision (None: pending)
    session: str | None = None                        # who is asking, for the audit log (None: this process)
    user: str | None = None                           # (None: the OS user)
    semantic: SemanticLayer | None = None             # the semantic layer (utils.semantic), None without one
    tools: list[Tool] = field(default_factory=list)   # read-only outside sources (utils.tools), in preference order
    started: float = field(default_factory=time.monotonic)   # when the turn began (the time budget counts from it)


class TracedNode(Node):
    """A PocketFlow Node that appends {node, action, ms, llm_calls, tokens, attempt} to shared["trace"]."""

    def __init__(self, ctx: Context, max_retries: int = 1, wait: float = 0):
        super().__init__(max_retries=max_retries, wait=wait)
        self.ctx = ctx

    def mode(self, setting: str, local_default: str) -> str:
        """A node's mode setting with "auto" resolved: "llm" on endpoints, ``local_default`` on the
        embedded model (where every call costs seconds)."""
        if setting == "auto":
            return "llm" if self.ctx.llm.is_endpoint else local_default
        return setting

    def can_resample(self, shared: Turn) -> bool:
        """Whether a resample (fresh drafts of the first prompt, once a question) is still allowed."""
        return self.ctx.settings.resample_drafts > 0 and not shared.get("resampled")

    def over_budget(self) -> bool:
        """Whether the turn has spent its ``time_budget_s``: then no node starts more work (a retry, a resample,
        another path, more drafts); the best answer so far goes on to its confidence."""
        budget = self.ctx.settings.time_budget_s
        return bool(budget) and time.monotonic() - self.ctx.started > budget

    def stop_for_budget(self, shared: Turn, instead: str) -> None:
        """Record that this node stopped the turn's work at the budget, and what it would have done (the first
        stop is kept: a node after it only ends what is left)."""
        shared.setdefault("budget_stop", {"node": type(self).__name__, "instead_of": instead,
                                          "after_s": round(time.monotonic() - self.ctx.started, 1)})

    def _run(self, shared: Turn):
        name = type(self).__name__
        if self.ctx.on_node:
            self.ctx.on_node(name)
        trace = shared.setdefault("trace", [])
        calls_before = len(self.ctx.llm.calls)
        t0 = time.perf_counter()
        action = super()._run(shared)
        calls = self.ctx.llm.calls[calls_before:]
        shared.setdefault("llm_calls", []).extend(c.as_dict() for c in calls)
        trace.append({
            "node": name,
            "action": action or "end",
            "ms": round((time.perf_counter() - t0) * 1000, 1),
            "llm_calls": len(calls),
            "prompt_tokens": sum(c.prompt_tokens for c in calls),
            "completion_tokens": sum(c.completion_tokens for c in calls),
            "attempt": sum(1 for t in trace if t["node"] == name) + 1,
            **self.trace_detail(shared),
        })
        return action

    def trace_detail(self, shared: Turn) -> dict:
        """What this node decided, for its trace entry (e.g. the resolved question); none by default."""
        return {}
