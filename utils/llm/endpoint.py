"""``OpenAIBackend``: any OpenAI-compatible endpoint (OpenAI, Azure, Ollama, vLLM, llama.cpp server)
through the ``openai`` package. tenacity retries transient errors (429, 5xx, timeouts, connection
errors) with exponential backoff and never other 4xx client errors; the client's own retries are off."""
from __future__ import annotations

import time

from tenacity import retry, retry_if_exception, stop_after_attempt, wait_exponential

from duckask.utils.config import Settings
from duckask.utils.llm.base import LLMError, LLMReply


def _is_transient(exc: BaseException) -> bool:
    import openai

    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError, openai.RateLimitError)):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    return False


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
            wait=wait_exponential(multiplier=0.5, min=0.2, max=8),
            reraise=True,
        )(self.client.chat.completions.create)

    def complete(self, messages, *, node, prefix="", stop=None, max_tokens=256, temperature=None, seed=None):
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
            resp = self._create(model=model, messages=msgs, temperature=float(opts.get("temperature") or 0.0),
                                max_tokens=max_tokens, stop=stop or None, **extra)
        except Exception as e:
            raise LLMError(f"{node}: LLM endpoint call failed: {type(e).__name__}: {e}") from e
        ms = (time.perf_counter() - t0) * 1000
        text = (resp.choices[0].message.content or "") if resp.choices else ""
        usage = getattr(resp, "usage", None)
        return LLMReply(text=text, node=node, model=resp.model or model,
                        prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                        completion_tokens=getattr(usage, "completion_tokens", 0) or 0, ms=ms)
