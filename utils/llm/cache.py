"""An on-disk LLM response cache, so that rerunning an unchanged configuration is nearly free.

``CachedLLM(llm, path)`` wraps any backend. The key is a sha256 of the model name, the node, its model
and temperature, the messages, the answer prefix, the stop sequences and max_tokens; the value is
the reply with its original token counts (so accounting still shows what the call cost) and
``ms=0``. Storage is one SQLite file (Python's sqlite3), safe across threads and processes.

Run on its own::

    python -m duckask.utils.llm.cache PATH       # entries and size
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import threading
from dataclasses import asdict
from pathlib import Path

from duckask.utils.llm.base import LLM, LLMReply, WrappedLLM, complete_many


class CachedLLM(WrappedLLM):
    def __init__(self, llm: LLM, path: str | Path):
        super().__init__(llm)
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._con = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
        self._con.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, reply TEXT NOT NULL)")
        self._con.commit()
        self.hits = 0
        self.misses = 0

    def key(self, messages, *, node, prefix="", stop=None, max_tokens=256, temperature=None, seed=None,
            grammar=None) -> str:
        settings = self.settings
        opts = settings.node_options(node) if settings is not None else {}
        if temperature is not None:
            opts = {**opts, "temperature": temperature}
        if seed is not None:
            opts = {**opts, "seed": seed}
        blob = json.dumps({"model": self.llm.name, "node": node, "opts": opts, "messages": messages, "prefix": prefix,
                           "stop": list(stop or []), "max_tokens": max_tokens,
                           **({"grammar": grammar} if grammar else {})}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()

    def _get(self, k: str, node: str) -> list[LLMReply] | None:
        """The stored replies under ``k`` (ms 0, every prompt token reused), counting a hit or a miss."""
        with self._lock:
            row = self._con.execute("SELECT reply FROM replies WHERE key = ?", (k,)).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        stored = json.loads(row[0])
        return [LLMReply(**{**d, "node": node, "ms": 0.0, "reused_tokens": d.get("prompt_tokens", 0)})
                for d in (stored if isinstance(stored, list) else [stored])]

    def _put(self, k: str, value) -> None:
        with self._lock:
            self._con.execute("INSERT OR REPLACE INTO replies VALUES (?, ?)", (k, json.dumps(value)))
            self._con.commit()

    def complete(self, messages, *, node, prefix="", stop=None, max_tokens=256, temperature=None,
                 seed=None, on_text=None, stable="", grammar=None) -> LLMReply:
        k = self.key(messages, node=node, prefix=prefix, stop=stop, max_tokens=max_tokens, temperature=temperature,
                     seed=seed, grammar=grammar)
        if (hit := self._get(k, node)) is not None:
            if on_text:
                on_text(hit[0].text[len(prefix):])
            return hit[0]
        reply = self.llm.complete(messages, node=node, prefix=prefix, stop=stop, max_tokens=max_tokens,
                                  temperature=temperature, seed=seed, on_text=on_text, stable=stable,
                                  **({"grammar": grammar} if grammar else {}))
        self._put(k, asdict(reply))
        return reply

    def complete_many(self, messages, *, node, n, seed=0, **kw) -> list[LLMReply]:
        """A batch of sampled replies, cached as one entry (the key adds ``n``)."""
        k = self.key(messages, node=node, seed=seed, **{a: kw[a] for a in ("prefix", "stop", "max_tokens",
                                                                             "temperature") if a in kw})
        k = hashlib.sha256(f"{k}:n={n}".encode()).hexdigest()
        if (hit := self._get(k, node)) is not None:
            return hit
        replies = complete_many(self.llm, messages, n=n, node=node, seed=seed, **kw)
        self._put(k, [asdict(r) for r in replies])
        return replies

    def __bool__(self) -> bool:
        # Defining __len__ would make an empty cache falsy, and ``llm or get_llm()`` would then
        # silently bypass it for the configured (e.g. embedded) model.
        return True

    def __len__(self) -> int:
        with self._lock:
            return self._con.execute("SELECT count(*) FROM replies").fetchone()[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Show an LLM response cache file.")
    ap.add_argument("path")
    args = ap.parse_args(argv)
    con = sqlite3.connect(args.path)
    n = con.execute("SELECT count(*) FROM replies").fetchone()[0]
    print(f"{n} cached replies, {Path(args.path).stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
