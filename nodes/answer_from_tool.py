"""AnswerFromTool: the answer, in a sentence or two, from what a tool returned, and the sources cited.

One LLM call with only the tool's (trimmed) answer and the question (``PROMPT``); the citation is added by
rule, not left to the model: ``(source: omdb, https://…)`` for an API, numbered URLs for web hits. If the
model cannot be asked, the tool's answer is shown as it came, with the same citation.
"""
from __future__ import annotations

from duckask.nodes._base import TracedNode
from duckask.utils.tools.base import TEXT_CHARS
from duckask.utils.turn import Turn, finish

PROMPT = """Answer the question in one or two sentences using ONLY the information below, which came from
{tool}. If it does not contain the answer, say that it does not.
Information: {text}
Question: {question}
Answer:"""


def cite(sources: list[dict]) -> str:
    if len(sources) == 1:
        return f"(source: {sources[0]['name']}, {sources[0]['url']})"
    return "Sources: " + " ".join(f"[{i}] {s['url']}" for i, s in enumerate(sources, 1))


class AnswerFromTool(TracedNode):
    def __init__(self, ctx):
        super().__init__(ctx, max_retries=2)

    def prep(self, shared: Turn):
        r = shared["tool_result"]
        assert r is not None, "AnswerFromTool runs only after CallTool's answer"
        return {"tool": r.tool, "text": r.text[:TEXT_CHARS], "sources": r.sources, "question": shared["question"]}

    def exec(self, p):
        reply = self.ctx.llm.complete([{"role": "user", "content": PROMPT.format(**p)}], node="AnswerFromTool",
                                      max_tokens=120)
        sentence = " ".join(reply.text.split())
        if not sentence:
            raise ValueError("an empty answer")
        return sentence

    def exec_fallback(self, p, exc):
        return f"{p['tool']} answered: {p['text'][:400]}"

    def post(self, shared: Turn, p, sentence):
        shared["sources"] = p["sources"]
        finish(shared, "answered", f"{sentence} {cite(p['sources'])}",
               f"from the {p['tool']} tool, not from your database", no_query=True)
        return None
