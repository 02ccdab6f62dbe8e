"""``Conversation``: several turns on one database, with memory.

    from duckask import Conversation
    c = Conversation("file.duckdb")          # always a named database (the demo: `duckask chat`)
    c.ask("Who hit the most home runs in 2019?")
    r = c.ask("and in 2018?")                # r.resolved_question == "Who hit the most home runs in 2018?"
    c.save("session.json"); c = Conversation.load("session.json")

Each turn runs the whole graph on a fresh shared store (selected tables, SQL, results, errors and
grader state never leak from one turn to the next); only the history carries over: for each turn its
text, resolved question, intent, status, SQL, tables, a one-line answer and the first rows. The
database, catalog and LLM are opened once. ``ask()`` returns the same ``Result`` as ``duckask.ask``.
A session file is JSON (``SESSION_VERSION``); loading checks it and says what is wrong.
"""
from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from duckask.utils.api import Prepared, Result, confirm_option, need_db, new_shared, prepare, run_turn
from duckask.utils.config import Settings
from duckask.utils.llm import LLM

if TYPE_CHECKING:
    from duckask.utils.writes.card import WriteCard

SESSION_VERSION = 1
#: Turns of history shown to the graph (ResolveFollowUp reads the last data turn; IntentRouter whether any).
HISTORY_TURNS = 6


def turn_record(r: Result, text: str) -> dict[str, Any]:
    """What the history keeps of a turn: enough to resolve a follow-up and to show the session again."""
    rows = []
    if r.df is not None and len(r.df):
        rows = json.loads(r.df.head(3).to_json(orient="values", date_format="iso", default_handler=str))
    return {"text": text, "resolved_question": r.resolved_question or r.question, "intent": r.intent,
            "status": r.status, "sql": r.sql, "tables": list(r.tables or []),
            "answer": " ".join((r.answer or "").split())[:300],
            "columns": [str(c) for c in r.df.columns] if r.df is not None else [], "rows": rows,
            "seconds": round(r.seconds, 2)}


class SessionError(ValueError):
    """A session file that cannot be resumed; the message says why and what to do."""


class Conversation:
    def __init__(self, db: str | None = None, *, llm: LLM | None = None, settings: Settings | None = None,
                 config: str | None = None, ask_user: Callable[[str], str] | None = None,
                 confirm: bool | Callable[[str, list], dict] | None = None,
                 on_node: Callable[[str], None] | None = None, on_text: Callable[[str], None] | None = None,
                 approve_write: Callable[[WriteCard], dict] | None = None, history: list[dict] | None = None,
                 session: str | None = None, on_understood: Callable[[str], None] | None = None, **options: Any):
        confirm = confirm_option(confirm, options)
        self.prep: Prepared = prepare(need_db(db, "Conversation()"), llm=llm, settings=settings, config=config,
                                      **options)
        self.history: list[dict] = list(history or [])
        #: The conversation's id in the audit log of writes (one per Conversation unless given).
        self.session = session or f"chat-{uuid.uuid4().hex[:8]}"
        #: ``run_turn`` with this conversation's callbacks (each turn adds its own ``on_result``).
        self._run = functools.partial(run_turn, ask_user=ask_user, confirm=confirm, on_node=on_node, on_text=on_text,
                                      approve_write=approve_write, session=self.session, on_understood=on_understood)
        self.last: Result | None = None

    @property
    def db(self) -> str:
        return self.prep.db

    def ask(self, text: str | None = None, *, sql: str | None = None) -> Result:
        """One turn: a question, a follow-up, a schema question, small talk or SQL (``sql=`` or pasted)."""
        if text is None and not (sql or "").strip():
            raise ValueError("ask() needs the turn's text or sql=\"...\"")
        shared = new_shared(text or sql or "", history=self.history[-HISTORY_TURNS:], sql=sql)
        index = len(self.history)
        self.history.append({"text": text or sql, "status": "running", "intent": None})

        def record(r: Result) -> None:  # also called when a pending turn is approved later
            self.history[index] = turn_record(r, text or sql or "")
            self.last = r

        return self._run(self.prep, shared, on_result=record)

    def add_turn(self, question: str, sql: str | None = None, answer: str = "") -> None:
        """Put a known turn into the history (e.g. a gold one in a benchmark), without running it."""
        tables: list[str] = []
        if sql:
            from duckask.utils.knowledge.examples import tables_of

            tables = tables_of(sql)
        self.history.append({"text": question, "resolved_question": question, "intent": "data",
                             "status": "answered" if sql else "error", "sql": sql, "tables": tables,
                             "answer": answer, "columns": [], "rows": [], "seconds": 0.0})

    # -- sessions ----------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {"version": SESSION_VERSION, "db": self.db, "turns": [t for t in self.history
                                                                     if t.get("status") != "running"]}

    def save(self, path: str | Path) -> Path:
        """Write the session (database and history) as JSON; atomic, so a crash never leaves half a file."""
        p = Path(path).expanduser()
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_text(json.dumps(self.to_json(), indent=1, default=str), encoding="utf-8")
        tmp.replace(p)
        return p

    @staticmethod
    def read_session(path: str | Path) -> dict[str, Any]:
        p = Path(path).expanduser()
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError as e:
            raise SessionError(f"no session file at {p}: save one with /save or Conversation.save()") from e
        except json.JSONDecodeError as e:
            raise SessionError(f"{p} is not a duckask session (not JSON: {e}); it was left untouched") from e
        if not isinstance(data, dict) or data.get("version") != SESSION_VERSION \
                or not isinstance(data.get("turns"), list):
            raise SessionError(f"{p} is not a duckask session of version {SESSION_VERSION} "
                               "(expected {version, db, turns}); it was left untouched")
        return data

    @classmethod
    def load(cls, path: str | Path, db: str | None = None, **kw: Any) -> Conversation:
        """Resume a saved session (on its database unless ``db`` names another)."""
        data = cls.read_session(path)
        return cls(db or data.get("db"), history=data["turns"], **kw)
