"""The layer every surface shares in front of the graph: the notebook/Python API ``ask(question, db=PATH,
**options) -> Result``, and the Result itself.

- here: ``prepare`` opens the database, catalog and LLM once (the database is always named: ``need_db``; the
  demo is the CLI's default, never the library's); ``run_turn`` runs the graph on one shared store
  and builds the ``Result``; ``ask`` is the two for one question (``Conversation`` reuses them); ``Prepared``'s
  ``run_sql``, ``propose``, ``decide``, ``refresh``;
- ``result``: ``Result``, read from the turn in one place, and what can be done with it next;
- ``present``: how a Result looks on every surface, and every exit code; ``trust_view`` (its confidence and a
  not-sure answer's candidates) and ``present_sql`` (the rows of your own SQL);
- ``chart``: the chart a result's columns call for.

Below the surfaces (``utils/app``) and ``utils/eval``, which runs question files through this same ``ask``.
"""
from __future__ import annotations

import functools
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from duckask.utils import turn
from duckask.utils.api.result import Result
from duckask.utils.config import MAX_QUESTION, Settings, load_settings, with_options
from duckask.utils.db.database import open_database
from duckask.utils.knowledge import examples_for
from duckask.utils.knowledge.examples import ExampleError
from duckask.utils.knowledge.learned import learned_for
from duckask.utils.llm import LLM, MeteredLLM, get_llm
from duckask.utils.semantic import get_catalog
from duckask.utils.semantic.manifest import layer_for
from duckask.utils.state.postgres import StateError
from duckask.utils.tools.registry import load_tools
from duckask.utils.writes.audit import AuditError

if TYPE_CHECKING:
    from duckask.utils.writes.card import WriteCard


@dataclass
class Prepared:
    """What every turn on one database shares: settings, the open database, its catalog and the LLM."""
    db: str
    settings: Settings
    database: Any
    catalog: Any
    llm: LLM
    tools: list = field(default_factory=list)     # the ``tools`` setting's tools (utils/tools), in preference order

    def refresh(self) -> None:
        """Read the catalog again when the database changed (an approved write: a new table or column)."""
        if self.catalog.key != self.database.key:
            self.catalog = get_catalog(self.database, self.settings)

    def run_sql(self, sql: str, *, export: bool = False):
        return run_sql(self.database, self.settings, sql, export=export)

    def propose(self, sql: str, *, session: str | None = None, user: str | None = None) -> WriteCard:
        """A write proposed for approval: its card (pending, or blocked with the reason), in the audit log."""
        from duckask.utils.state import writes

        return writes.propose(sql, self.database, self.settings, session=session, user=user)

    def decide(self, card: WriteCard, approve: bool, reason: str | None = None, by: str | None = None) -> WriteCard:
        """Run or drop a pending write (``by``: who decides), then read the catalog again if it changed."""
        from duckask.utils.state import writes

        card = writes.decide(card, approve, self.database, self.settings, reason, by=by)
        self.refresh()
        return card


def run_sql(database, settings: Settings, sql: str, *, export: bool = False):
    """The user's own read-only SQL through the safe executor with these settings' timeout and row cap
    (``export``: up to ``export_row_cap`` rows, for a file). The connection is shared per file and process,
    so both are passed on each call. Used by ``duckask sql``, ``/api/sql``, ``/api/export``, MCP ``run_sql``."""
    from duckask.utils.sql.drafts import run_query

    cap = settings.export_row_cap if export else settings.row_cap
    return run_query(database, settings, sql, row_cap=cap,
                     result_bytes=settings.export_bytes if export else settings.result_bytes)


class NoDatabase(ValueError):
    """A library call that names no database. The library has no default: the demo is the CLI's (``duckask demo``,
    or any command without ``--db``), so a notebook never answers about baseball by mistake."""


def need_db(db: str | os.PathLike | None, who: str) -> str:
    """``db`` as a string, or ``NoDatabase`` saying what ``who`` needs and how to give it."""
    if db is None or not str(db).strip():
        raise NoDatabase(f"{who} needs a database: pass db=\"path/to/file.duckdb\" (or a folder from EXPORT DATABASE, "
                         "a SQLite file, a postgresql:// URL), or run `duckask demo` for the baseball demo")
    return str(db)


def prepare(db: str | os.PathLike | None, *, llm: LLM | None = None, settings: Settings | None = None,
            config: str | None = None, **options: Any) -> Prepared:
    """Open ``db`` (``need_db``: always named) with the settings (``options`` override them)."""
    db = need_db(db, "prepare()")
    if settings is None:
        settings = load_settings(config, **options)
    elif options:  # options override the given settings too, as documented, and are checked the same way
        settings = with_options(settings, **options)
    from duckask.utils.knowledge.demo import demo_knowledge

    settings = demo_knowledge(settings, db)  # the demo database, when named, is taught unless the caller chose
    database = open_database(db, settings)
    # ``db`` as shown everywhere (health, results, saved sessions): a connection string's password redacted
    return Prepared(db=database.source, settings=settings, database=database, catalog=get_catalog(database, settings),
                    llm=llm if llm is not None else get_llm(settings), tools=load_tools(settings.tools))


class QuestionTooLong(ValueError):
    """A question over ``config.MAX_QUESTION`` characters, refused before any LLM call; says both numbers."""


def check_question(question: str) -> str:
    """``question``, when it is at most ``MAX_QUESTION`` characters long."""
    if len(question) > MAX_QUESTION:
        raise QuestionTooLong(f"the question is {len(question)} characters; the limit is {MAX_QUESTION}: "
                              "ask it in fewer words")
    return question


def new_shared(question: str, history: list[dict] | None = None, sql: str | None = None) -> turn.Turn:
    """A fresh per-turn store: only the question, the given SQL and the conversation's history carry over.
    Every surface's turn starts here, so a question over ``MAX_QUESTION`` characters is refused here
    (``QuestionTooLong``), before any LLM call; the user's own ``sql`` is not a question."""
    if sql is None:
        check_question(question)
    return turn.start_turn(question, history, sql)


# What a turn passes on to its surface instead of answering: the records it must keep are out of reach (the audit
# log, the shared state, the kept pairs' store); each surface says so (the server: 503), and the turn is not lost.
PASSED_ON = (AuditError, StateError, ExampleError)
_log = logging.getLogger("duckask")


def run_turn(prep: Prepared, shared: turn.Turn, *, ask_user: Callable[[str], str] | None = None,
             confirm: Callable[[str, list], dict] | None = None, on_node: Callable[[str], None] | None = None,
             on_text: Callable[[str], None] | None = None, entry: str = "route",
             on_result: Callable[[Result], None] | None = None, on_understood: Callable[[str], None] | None = None,
             approve_write: Callable[[WriteCard], dict] | None = None, session: str | None = None,
             user: str | None = None) -> Result:
    """Run the graph on ``shared`` from ``entry`` and return the Result (a pending one can be resumed)."""
    from duckask.flow import build_flow
    from duckask.nodes import Context

    prep.refresh()
    t0 = time.perf_counter()
    ctx = Context(llm=MeteredLLM(prep.llm), settings=prep.settings, db=prep.database, catalog=prep.catalog,
                  ask_user=ask_user, on_node=on_node, examples=examples_for(prep.database, prep.settings),
                  learned=learned_for(prep.database, prep.settings, prep.catalog),
                  confirm=confirm, on_text=on_text, approve_write=approve_write, session=session, user=user,
                  semantic=layer_for(prep.settings), tools=prep.tools, on_understood=on_understood)
    turn.reopen(shared)
    try:
        build_flow(ctx, entry).run(shared)
    except PASSED_ON:
        raise
    except Exception as exc:    # no question ends in a Python error: a typed "could not answer", nothing lost
        _log.exception("a turn raised inside the graph")
        words = " ".join(str(exc).split())[:300] or "no message"
        turn.finish(shared, "error", f"could not answer: {words} ({type(exc).__name__})")
    turn.clock(shared, time.perf_counter() - t0)
    again = functools.partial(run_turn, prep, ask_user=ask_user, confirm=confirm, on_node=on_node, on_text=on_text,
                              on_result=on_result, approve_write=approve_write, session=session, user=user,
                              on_understood=on_understood)

    def resume(decision: dict) -> Result:
        turn.decide(shared, decision)
        return again(shared, entry="write" if shared.get("write") else "confirm")

    # Result.to_table: a turn of its own (not recorded as this one's outcome in a conversation's history).
    result = Result.from_turn(shared, db=prep.db, settings=prep.settings, resume=resume,
                              write_sql=lambda sql: again(new_shared(sql, sql=sql), on_result=None))
    if on_result:
        on_result(result)
    return result


def confirm_option(confirm: Any, options: dict[str, Any]) -> Callable[[str, list], dict] | None:
    """``confirm=True/False`` is the setting; a callable is who answers (and turns the setting on)."""
    if isinstance(confirm, bool):
        options["confirm"] = confirm
        return None
    if confirm is not None:
        options.setdefault("confirm", True)
    return confirm


def ask(question: str | None = None, db: str | None = None, *, sql: str | None = None, llm: LLM | None = None,
        settings: Settings | None = None, config: str | None = None,
        ask_user: Callable[[str], str] | None = None, confirm: bool | Callable[[str, list], dict] | None = None,
        on_node: Callable[[str], None] | None = None, on_text: Callable[[str], None] | None = None,
        approve_write: Callable[[WriteCard], dict] | None = None, **options: Any) -> Result:
    """Answer ``question`` about the database ``db``: a DuckDB file, a folder from EXPORT DATABASE, a SQLite file or
    a postgresql:// URL. It is always named (``NoDatabase`` otherwise); the demo is the CLI's (``duckask demo``).

    ``sql`` runs your own SQL instead (shown, checked by the same safety layer, run, explained).
    ``options`` override settings (e.g. ``max_fix_retries=3, grader="llm", confirm=True, base_url=...``).
    ``ask_user`` makes clarification interactive; without it an ambiguous question returns
    status "needs_clarification" and the clarifying question, never blocking. ``confirm=True`` shows
    the SQL before it runs: the Result is "pending" (call ``approve()``, ``edit(sql)`` or ``reject()``);
    ``confirm=callable(sql, drafts) -> {"decision": "yes"|"no"|"edit", "comment", "sql"}`` answers in place.
    ``on_text`` receives the answer sentence as it is written. A ``sql`` that would change the database
    is a write: blocked unless ``allow_writes=True``, and then a pending Result to ``approve()`` or
    ``reject()`` (``docs/writes.md``, "How the write path works"); ``approve_write=callable(card) -> {"decision":
    "yes"|"no"|"edit", "sql"}`` decides in place (only "yes" writes).
    """
    if question is None and not (sql or "").strip():
        raise ValueError("ask() needs a question or sql=\"...\"")
    db = need_db(db, "ask()")
    confirm = confirm_option(confirm, options)
    shared = new_shared(question or sql or "", sql=sql)     # checked before the database and model are opened
    prep = prepare(db, llm=llm, settings=settings, config=config, **options)
    return run_turn(prep, shared, ask_user=ask_user, confirm=confirm, on_node=on_node, on_text=on_text,
                    approve_write=approve_write)
