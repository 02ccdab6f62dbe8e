"""CheckAnswerable: say when the data cannot answer the question, before any SQL (issue 64).

``trust.answerable.reach`` reads the question's content words against what the database answers to: its names,
descriptions, synonyms and metrics, the words of its values, and the questions of its taught and learned pairs. A
question that asks for advice or an opinion, that names nothing the database holds, or whose counted or measured
thing is tied to nothing ends here with the status ``unanswerable`` and the reason ("no table or column holds
'microchip'; the closest it has: ..."): no query is written, none is run. Every other question goes on, with the
words tied to nothing kept (``answerable.missing``) for AssessConfidence to say what it could not find, and those
naming a thing (``answerable.absent``: "seat" in "what seat does each passenger prefer") make the answer ``low``.
``answerable: off`` skips the check. No LLM call.
"""
from __future__ import annotations

from duckask.nodes._base import TracedNode
from duckask.utils.trust.answerable import cannot_answer_text, reach, taught_vocabulary
from duckask.utils.turn import Turn, finish


class CheckAnswerable(TracedNode):
    def prep(self, shared: Turn):
        return {"question": shared["question"], "on": self.ctx.settings.answerable == "on"}

    def exec(self, p):
        if not p["on"]:
            return None
        known = tuple(ex.question for ex in [*self.ctx.examples, *self.ctx.learned])   # taught and learned pairs
        vocab = taught_vocabulary(self.ctx.catalog, known)
        return reach(p["question"], vocab)

    def post(self, shared: Turn, p, found):
        if found is None:
            return "answerable"
        shared["answerable"] = found.as_dict()
        if found.outcome == "cannot":
            finish(shared, "unanswerable", cannot_answer_text(found), no_query=True)
            return "cannot"
        return "answerable"

    def trace_detail(self, shared: Turn):
        found = shared.get("answerable") or {}
        return {"rule": found.get("rule"), "missing": found.get("missing")}
