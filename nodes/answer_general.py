"""AnswerGeneral: a short, polite answer to general talk ("hi", "what can you do?", "write me a
poem", "what's the weather in Boston?"): what this assistant does, the tables it knows and a question
to try. No LLM call and no database access (``duckask.utils.dialogue.general``)."""
from __future__ import annotations

from duckask.nodes._base import TracedNode
from duckask.utils.dialogue.general import answer_general
from duckask.utils.turn import Turn, finish


class AnswerGeneral(TracedNode):
    def prep(self, shared: Turn):
        return shared["question"]

    def exec(self, text):
        example = self.ctx.examples[0].question if self.ctx.examples else None
        return answer_general(text, self.ctx.catalog, example)

    def post(self, shared: Turn, text, answer):
        finish(shared, "answered", answer, "", no_query=True)
        return None
