"""The page's threads: each browser session's conversation, kept by the server (``duckask serve``).

A thread is what ``Conversation`` keeps (``conversation.turn_record``: enough to resolve a follow-up such as
"and in 2015?") plus each turn as the page showed it (the answer's JSON, its rows cut to ``SHOWN_ROWS``), so a
reload draws the thread again. Threads are keyed by the asker (the user of a key, or the client's address on
an open server) and the page's ``X-Duckask-Session``, so one person never sees another's. Bounded: at most
``MAX_TURNS`` turns a thread (the oldest go), ``MAX_THREADS`` threads (the least recently used go) and
``MAX_AGE_S`` of quiet (a thread older than that starts again). In this process: a restart forgets them, and
several servers behind a balancer keep a thread each (route a session to one server, sticky).
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

MAX_TURNS = 50
MAX_THREADS = 500
MAX_AGE_S = 24 * 3600.0
SHOWN_ROWS = 200


@dataclass
class Thread:
    history: list[dict] = field(default_factory=list)     # conversation.turn_record of each turn
    shown: list[dict] = field(default_factory=list)       # each turn's answer JSON as the page drew it
    touched: float = 0.0


class Threads:
    def __init__(self, max_threads: int = MAX_THREADS, max_turns: int = MAX_TURNS, max_age_s: float = MAX_AGE_S,
                 clock=time.monotonic):
        self.max_threads, self.max_turns, self.max_age_s, self.clock = max_threads, max_turns, max_age_s, clock
        self._threads: OrderedDict[tuple[str, str], Thread] = OrderedDict()
        self._lock = threading.Lock()

    def _get(self, key: tuple[str, str]) -> Thread:
        now = self.clock()
        thread = self._threads.get(key)
        if thread is None or now - thread.touched > self.max_age_s:
            thread = self._threads[key] = Thread()
        thread.touched = now
        self._threads.move_to_end(key)
        while len(self._threads) > self.max_threads:
            self._threads.popitem(last=False)
        return thread

    def history(self, key: tuple[str, str]) -> list[dict]:
        """The turns a follow-up is resolved against (copies: a running turn never sees another change them)."""
        with self._lock:
            return [dict(t) for t in self._get(key).history]

    def shown(self, key: tuple[str, str]) -> list[dict]:
        with self._lock:
            return list(self._get(key).shown)

    def add(self, key: tuple[str, str], record: dict, shown: dict[str, Any]) -> None:
        shown = {**shown, "rows": (shown.get("rows") or [])[:SHOWN_ROWS]}
        with self._lock:
            thread = self._get(key)
            thread.history.append(record)
            thread.shown.append(shown)
            del thread.history[:-self.max_turns], thread.shown[:-self.max_turns]

    def clear(self, key: tuple[str, str]) -> None:
        with self._lock:
            self._threads.pop(key, None)
