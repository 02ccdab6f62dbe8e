"""``ScriptedLLM``: a deterministic fake backend for tests and overhead benchmarks."""
from __future__ import annotations

from typing import Any

from duckask.utils.llm.base import LLMError, LLMReply


class ScriptedLLM:
    """A fake LLM: answers from a script, per node, and records every call.

    ``script`` maps a node name to a list of replies (consumed in order; the last one repeats) or to a
    callable ``(messages) -> str``. Replies may be exceptions, which are raised.
    """

    is_endpoint = False

    def __init__(self, script: dict[str, Any] | None = None, name: str = "scripted"):
        self.script = {k: (list(v) if isinstance(v, (list, tuple)) else v) for k, v in (script or {}).items()}
        self.name = name
        self.calls: list[dict[str, Any]] = []

    def complete(self, messages, *, node, prefix="", stop=None, max_tokens=256, temperature=None, seed=None,
                 on_text=None, stable="", grammar=None):
        self.calls.append({"node": node, "messages": messages, "prefix": prefix, "temperature": temperature,
                           "seed": seed, "grammar": grammar})
        entry = self.script.get(node)
        if entry is None:
            raise LLMError(f"ScriptedLLM has no reply for node {node}")
        if callable(entry):
            reply = entry(messages)
        else:
            reply = entry.pop(0) if len(entry) > 1 else entry[0]
        if isinstance(reply, BaseException):
            raise reply
        text = str(reply)
        if prefix and not text.startswith(prefix):
            text = prefix + text
        if on_text:
            on_text(text[len(prefix):] if prefix else text)
        words = sum(len(m["content"].split()) for m in messages)
        return LLMReply(text=text, node=node, model=self.name, prompt_tokens=words,
                        completion_tokens=len(text.split()), ms=0.0)

    def score(self, messages, continuation: str, *, node: str) -> LLMReply:
        """A scripted reviewer: the script's entry for ``node`` gives the mean log-probability of ``continuation``
        (a number, or a callable ``(messages, continuation) -> number``); recorded like a completion."""
        self.calls.append({"node": node, "messages": messages, "continuation": continuation})
        entry = self.script.get(node)
        if entry is None:
            raise LLMError(f"ScriptedLLM has no score for node {node}")
        value = entry(messages, continuation) if callable(entry) else (entry.pop(0) if len(entry) > 1 else entry[0])
        return LLMReply(text=continuation, node=node, model=self.name, prompt_tokens=0,
                        completion_tokens=max(1, len(continuation.split())), ms=0.0, mean_logprob=float(value))

    def count(self, node: str | None = None) -> int:
        return sum(1 for c in self.calls if node is None or c["node"] == node)
