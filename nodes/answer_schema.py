"""AnswerSchema: answer a question about the database itself ("what tables are there?", "what does
hbp mean?", "which table has salaries?") from the catalog: introspection plus the semantic file.
No LLM call and no query on the data (``duckask.utils.dialogue.schema_answer``)."""
from __future__ import annotations

from duckask.nodes._base import TracedNode
from duckask.utils.dialogue.schema_answer import answer_schema
from duckask.utils.turn import Turn, finish


class AnswerSchema(TracedNode):
    def prep(self, shared: Turn):
        return shared["question"]

    def exec(self, text):
        return answer_schema(text, self.ctx.catalog)

    def post(self, shared: Turn, text, res):
        answer, df, shape = res
        how = f"From the schema ({shape.replace('_', ' ')}); no query was run on the data."
        finish(shared, "answered", answer, how, no_query=True, rows=df)
        return None
