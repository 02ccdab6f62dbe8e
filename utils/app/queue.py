"""The server's queue: at most ``slots`` questions (and write proposals and decisions) at once, the others
waiting in order and told their position; each request works on a thread of its own while it waits.
Used by ``server.py`` and ``server_actions.py``."""
from __future__ import annotations

import asyncio
import threading


class Gate:
    """At most ``slots`` questions at once; the others wait in order and know their position."""

    def __init__(self, slots: int):
        self.slots = max(1, slots)
        self.running = 0
        self.waiting: list[object] = []
        self.cond = threading.Condition()

    def enter(self, ticket: object, on_wait=None) -> None:
        with self.cond:
            self.waiting.append(ticket)
            while self.running >= self.slots or self.waiting[0] is not ticket:
                if on_wait:
                    on_wait(self.waiting.index(ticket) + 1)
                self.cond.wait(timeout=1.0)
            self.waiting.pop(0)
            self.running += 1
            self.cond.notify_all()

    def leave(self) -> None:
        with self.cond:
            self.running -= 1
            self.cond.notify_all()

    def run(self, fn, *args, on_wait=None, **kw):
        """``fn(*args, **kw)`` when its turn comes (``on_wait(position)`` while it waits): every question,
        proposal and decision enters the queue here."""
        ticket = object()
        self.enter(ticket, on_wait)
        try:
            return fn(*args, **kw)
        finally:
            self.leave()

    @property
    def queued(self) -> int:
        with self.cond:
            return len(self.waiting)


async def in_thread(fn, *args, **kw):
    """Run ``fn`` on a thread of its own: a queued question waits in the Gate, where it can report
    its position, not unseen in a small shared thread pool (6 threads on 2 cores)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future = loop.create_future()

    def work() -> None:
        try:
            value, error = fn(*args, **kw), None
        except BaseException as e:  # handed to the awaiting request
            value, error = None, e

        def settle() -> None:
            if not done.done():
                done.set_result(value) if error is None else done.set_exception(error)

        loop.call_soon_threadsafe(settle)

    threading.Thread(target=work, daemon=True, name="duckask-request").start()
    return await done
