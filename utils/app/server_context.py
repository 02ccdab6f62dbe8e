"""What every route of one ``duckask serve`` shares (``Served``), and the request-to-turn path they all take.

``create_app`` builds one ``Served`` per app and keeps it on ``app.state.served``; each route (``server_routes``,
``server_actions``) is a named function that reads it with ``served(request)``. ``Served.answer`` is the one way a
question becomes a turn over HTTP (``/api/ask`` and ``/api/ask/stream`` alike): the request's options and the
asker's scope applied to the prepared database, the thread's history, the queue (``Gate``), ``api.run_turn``, and
the answer as the JSON of ``duckask ask --json`` (a write typed into the question box held for its decision).
"""
# No "from __future__ import annotations": the routes' modules import it, and FastAPI reads their annotations.

import dataclasses
import logging
from collections.abc import Callable
from typing import Any

from duckask.utils.app.pending import PendingWrites
from duckask.utils.app.queue import Gate
from duckask.utils.app.server_guards import parse_body, scoped
from duckask.utils.config import SettingError, check_settings, with_options

_log = logging.getLogger("duckask.serve")

#: What a request may set in ``options``: graph behaviour only, never the backend, paths or limits.
REQUEST_OPTIONS = {"resample_drafts", "max_fix_retries", "max_grader_rounds", "grader", "analyzer", "clarify",
                   "column_pruning", "dialect_notes", "router", "follow_ups", "time_budget_s"}

Events = Callable[[str, dict], None]


@dataclasses.dataclass
class Served:
    """One server's prepared database (``api.Prepared``), its queue, its users (``access.Users``; None: an open
    server), the writes held for a decision and the conversation threads."""
    prep: Any
    gate: Gate
    keys: Any
    pending: PendingWrites
    threads: Any

    async def read_json(self, request, key: str, limit: int) -> tuple[str, dict]:
        """The body's non-empty string ``key`` (at most ``limit`` characters) and its checked ``options``; a 422
        (or a 400 for an option's bad value) that says what was wrong."""
        from starlette.exceptions import HTTPException

        body = parse_body(await request.body(), f'{{"{key}": "..."}}')
        if not isinstance(body, dict) or not isinstance(body.get(key), str) or not body[key].strip():
            raise HTTPException(422, f"send a JSON object with a non-empty string \"{key}\"")
        if len(body[key]) > limit:
            raise HTTPException(422, f"\"{key}\" is {len(body[key])} characters; the limit is {limit}")
        opts = body.get("options") or {}
        if not isinstance(opts, dict) or set(opts) - REQUEST_OPTIONS:
            raise HTTPException(422, f"options may set only: {', '.join(sorted(REQUEST_OPTIONS))}")
        try:
            return body[key], check_settings(opts)
        except SettingError as e:
            raise HTTPException(400, f"bad option: {e}") from e

    def answer(self, question: str, opts: dict, events: Events | None = None,
               asker: tuple[str, str] = ("http", "http"), user=None, thread: bool = False) -> dict:
        """``question`` answered as ``user`` (waiting in the queue; ``events`` hears the position, each node and
        the streamed sentence), kept in the asker's thread when ``thread``; the answer's JSON."""
        from duckask.utils.api import new_shared, run_turn
        from duckask.utils.app.conversation import HISTORY_TURNS, turn_record
        from duckask.utils.state.postgres import StateError
        from duckask.utils.state.threads import ThreadsFull

        p = dataclasses.replace(self.prep, settings=with_options(self.prep.settings, **opts)) if opts else self.prep
        p = scoped(p, user) if user else p
        key = (user.id if user else asker[1], asker[0])   # the key (not the name), then the page's session
        history = self.threads.history(key, last=HISTORY_TURNS) if thread else None
        r = self.gate.run(run_turn, p, new_shared(question, history=history), on_wait=_positions(events),
                          session=asker[0], user=asker[1],
                          on_node=(lambda n: events("node", {"node": n})) if events else None,
                          on_text=(lambda t: events("text", {"text": t})) if events else None)
        out = r.to_dict(max_rows=self.prep.settings.row_cap)
        if r.status == "pending" and r.write:   # a write typed into the question box: decided on /api/writes/{id}
            r.write.proposer_id = user.id if user else ""
            out["write"] = {**out["write"], "approval_token": self.pending.hold(r.write, self.prep)}
        if thread:
            try:
                self.threads.add(key, turn_record(r, question), out)
            except StateError as e:         # the answer stands; the page is told its thread did not keep it
                _log.warning("%s", e)
                out["thread_error"] = StateError.PUBLIC
            except ThreadsFull as e:
                out["thread_error"] = str(e)
        return out


def _positions(events: Events | None) -> Callable[[int], None]:
    """The queue's ``on_wait``: the position reported when it changes, not on every wake-up."""
    last = [0]

    def waiting(n: int) -> None:
        if events and n != last[0]:
            last[0] = n
            events("queued", {"position": n})
    return waiting


def served(request) -> Served:
    """The ``Served`` of the app ``request`` came to."""
    return request.app.state.served
