"""``OpenAIBackend``: any OpenAI-compatible endpoint (OpenAI, Azure, Ollama, vLLM, llama.cpp server)
through the ``openai`` package. tenacity retries transient errors (429, 5xx, timeouts, connection
errors) with exponential backoff, or after the server's ``Retry-After`` when it sends one (capped at
``RETRY_AFTER_CAP_S``), and never other 4xx client errors; the client's own retries are off."""
from __future__ import annotations

import email.utils
import time
import uuid

from tenacity import RetryCallState, retry, retry_if_exception, stop_after_attempt, wait_exponential

from duckask.utils.config import Settings
from duckask.utils.llm.base import LLMError, LLMReply


def _is_transient(exc: BaseException) -> bool:
    import openai

    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError, openai.RateLimitError)):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    return False


#: The longest a server's Retry-After is honoured; a larger one waits this long (the attempt budget holds).
RETRY_AFTER_CAP_S = 30.0
_BACKOFF = wait_exponential(multiplier=0.5, min=0.2, max=8)


def retry_after_s(exc: BaseException | None) -> float | None:
    """The seconds a 429/503 response's ``Retry-After`` header asks for (delta-seconds or an HTTP date)."""
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _wait(state: RetryCallState) -> float:
    asked = retry_after_s(state.outcome.exception() if state.outcome else None)
    return min(asked, RETRY_AFTER_CAP_S) if asked is not None else _BACKOFF(state)


class OpenAIBackend:
    is_endpoint = True

    def __init__(self, settings: Settings):
        import openai

        self.settings = settings
        self.name = settings.model or "gpt-4o-mini"
        # The openai client's own retries are off: tenacity owns the retry policy.
        self.client = openai.OpenAI(
            base_url=settings.base_url or None,
            api_key=settings.api_key or "not-needed",
            timeout=settings.request_timeout_s,
            max_retries=0,
        )
        self._create = retry(
            retry=retry_if_exception(_is_transient),
            stop=stop_after_attempt(max(1, settings.max_http_retries)),
            wait=_wait,
            reraise=True,
        )(self.client.chat.completions.create)

    def complete_many(self, messages, *, node, n, prefix="", stop=None, max_tokens=256, temperature=None, seed=0,
                      stable=""):
        """``n`` sampled replies in one request (``n`` choices) where the server gives them; a server that
        ignores ``n`` (Ollama, llama.cpp's) is asked again for the rest, one request each."""
        first = self.complete(messages, node=node, prefix=prefix, stop=stop, max_tokens=max_tokens,
                              temperature=temperature, seed=seed, n=n)
        replies = first if isinstance(first, list) else [first]
        return replies + [self.complete(messages, node=node, prefix=prefix, stop=stop, max_tokens=max_tokens,
                                        temperature=temperature, seed=seed + i) for i in range(len(replies), n)]

    def complete(self, messages, *, node, prefix="", stop=None, max_tokens=256, temperature=None, seed=None,
                 on_text=None, stable="", n=1, grammar=None):
        opts = self.settings.node_options(node)
        if temperature is not None:
            opts["temperature"] = temperature
        model = opts.get("model") or self.name
        msgs = list(messages)
        if prefix:
            # Chat endpoints cannot be pre-filled portably: ask for the prefix instead.
            msgs[-1] = {**msgs[-1], "content": msgs[-1]["content"] + f"\nStart your answer with: {prefix.strip()}"}
            # The reply now begins with the prefix itself, so a stop sequence inside it (``` in
            # "```sql") would end the reply at once: drop those.
            stop = [s for s in (stop or []) if s not in prefix]
        t0 = time.perf_counter()
        try:
            extra = {"seed": seed} if seed is not None else {}
            if n > 1:
                extra["n"] = n
            # One key per logical call, the same on each retry: a server that honours idempotency keys
            # answers a retried request once, and a log can tell retries from new calls.
            resp = self._create(model=model, messages=msgs, temperature=float(opts.get("temperature") or 0.0),
                                max_tokens=max_tokens, stop=stop or None,
                                extra_headers={"Idempotency-Key": f"duckask-{uuid.uuid4().hex}"}, **extra)
        except Exception as e:
            raise LLMError(f"{node}: LLM endpoint call failed: {type(e).__name__}: {e}") from e
        ms = (time.perf_counter() - t0) * 1000
        usage = getattr(resp, "usage", None)
        texts = [c.message.content or "" for c in resp.choices or []] or [""]
        if on_text and texts[0]:
            on_text(texts[0])  # endpoints answer fast: the whole reply at once, no streaming protocol needed
        replies = [LLMReply(text=text, node=node, model=resp.model or model,
                            prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                            completion_tokens=(getattr(usage, "completion_tokens", 0) or 0) // len(texts),
                            ms=ms / len(texts)) for text in texts]
        return replies if n > 1 else replies[0]
