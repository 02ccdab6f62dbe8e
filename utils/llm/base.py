"""What every LLM backend shares: the reply record, the backend protocol, the error type, and the
wrappers that add behaviour around a backend (``MeteredLLM`` keeps each call for the trace)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Protocol


@dataclass
class LLMReply:
    text: str
    node: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    ms: float
    reused_tokens: int = 0     # prompt tokens served from a stored prompt state (embedded model only)
    gen_ms: float | None = None  # of ``ms``, the time spent generating after the prompt (embedded model only)
    # How sure the model was of its greedy reply (embedded model only): the lowest probability of any
    # generated token, and the mean log-probability per token. A confidence signal, no extra call.
    min_prob: float | None = None
    mean_logprob: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class LLM(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def is_endpoint(self) -> bool: ...

    def complete(self, messages: list[dict[str, str]], *, node: str, prefix: str = "",
                 stop: list[str] | None = None, max_tokens: int = 256,
                 temperature: float | None = None, seed: int | None = None,
                 on_text: Callable[[str], None] | None = None, stable: str = "",
                 grammar: str | None = None) -> LLMReply: ...
    # ``on_text`` receives the reply's text piece by piece as it is generated (streaming); a backend that
    # cannot stream calls it once with the whole text. ``stable`` is the leading part of the last message
    # that most calls on one database share (instructions, schema): the embedded backend keeps the
    # prompt state at its end on disk; other backends ignore it (it never changes the prompt). ``grammar``
    # (GBNF) holds the embedded model's reply to it while decoding; endpoints ignore it (no portable way).


def complete_many(llm: LLM, messages: list[dict[str, str]], *, n: int, node: str, seed: int = 0,
                  **kw: Any) -> list[LLMReply]:
    """``n`` sampled replies to one prompt (seeds ``seed``..``seed+n-1``): in one batch where the backend can
    (the embedded model decodes them together; an endpoint asks for ``n`` choices), else one call each."""
    many = getattr(llm, "complete_many", None)
    if many is not None:
        return many(messages, n=n, node=node, seed=seed, **kw)
    return [llm.complete(messages, node=node, seed=seed + i, **kw) for i in range(n)]


class LLMError(RuntimeError):
    """An LLM call failed for good (after retries, or a client error that is not retried)."""


class WrappedLLM:
    """Base of backends that wrap another one: name, kind and settings are the wrapped backend's."""

    def __init__(self, llm: LLM):
        self.llm = llm

    @property
    def name(self) -> str:
        return self.llm.name

    @property
    def is_endpoint(self) -> bool:
        return self.llm.is_endpoint

    @property
    def settings(self):
        return getattr(self.llm, "settings", None)


class MeteredLLM(WrappedLLM):
    """Wraps a backend for one question and keeps every reply (node, tokens, ms) in ``calls``."""

    def __init__(self, llm: LLM):
        super().__init__(llm)
        self.calls: list[LLMReply] = []

    def complete(self, messages, **kw) -> LLMReply:
        reply = self.llm.complete(messages, **kw)
        self.calls.append(reply)
        return reply

    def complete_many(self, messages, **kw) -> list[LLMReply]:
        replies = complete_many(self.llm, messages, **kw)
        self.calls.extend(replies)
        return replies

    @property
    def can_score(self) -> bool:
        """Whether the backend scores a given reply (``score``): the embedded model and scripted ones."""
        return callable(getattr(self.llm, "score", None))

    def score(self, messages, continuation: str, **kw) -> LLMReply:
        score = getattr(self.llm, "score", None)
        if score is None:
            raise LLMError(f"{self.name} does not score a given reply (an endpoint): use rerank off")
        reply = score(messages, continuation, **kw)
        self.calls.append(reply)
        return reply
