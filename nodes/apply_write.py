"""ApplyWrite: run the approved write (``writes.approve``) and say what happened.

The approval is recorded in the audit log before the data write; the statement runs on its own
read-write connection in a transaction, rolled back when the row count differs from the estimate by
more than ``write_tolerance``, on an error or at the timeout; the outcome is recorded after. The
read-only connection reopens on the changed file, so later turns see the change (and a new table).
"""
from __future__ import annotations

import dataclasses

from duckask.nodes._base import TracedNode
from duckask.utils.state import writes
from duckask.utils.turn import Turn, finish
from duckask.utils.turn import card as card_of


class ApplyWrite(TracedNode):
    def prep(self, shared: Turn):
        return shared["write"]

    def exec(self, card):
        return writes.approve(dataclasses.replace(card), self.ctx.db, self.ctx.settings)

    def trace_detail(self, shared: Turn):
        card = shared.get("write")
        return {"outcome": card.outcome, "rows": card.actual_rows} if card else {"outcome": None, "rows": None}

    def post(self, shared: Turn, card, done):
        card_of(shared, done)
        finish(shared, done.status, done.summary())
        return None
