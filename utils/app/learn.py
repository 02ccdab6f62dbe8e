"""``duckask learn``: know a database before its first question.

Besides the catalog (its value index and samples, built by ``prepare``), ``learn`` synthesizes question/SQL pairs of
the database's own, SQL first (``knowledge.synth``: lookups, counts, lists, top-k by a measure, groupings, shares,
the joins the keys allow, DuckDB's own forms where the data has lists, structs or wide tables). Each draft is

1. run through the safe executor (on a live source: the live engine's bounds, as every question's query) and kept
   for the next step only when its result is plausible (``synth.implausible``);
2. given a question written by the model from the SQL, its plain reading and the first rows (the easy direction for
   a small model: Guo et al., EMNLP 2018);
3. read back: the model writes SQL for that question from the schema of the draft's tables, as SQLGenerator would;
   the pair is kept only when that SQL returns the same rows (``compare.results_match``). A question too vague to
   read back to its query is no example.

Every draft's outcome is appended to the database's learned store as it ends (``knowledge.learned``), so a run
stopped by its time bound, Ctrl-C or a kill resumes where it was. Bounded in time (``minutes``) and, optionally, in
drafts; progress is reported per draft.
"""
from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from duckask.utils.api import need_db, prepare
from duckask.utils.knowledge.examples import columns_of
from duckask.utils.knowledge.learned import LearnedStore, learned_path
from duckask.utils.knowledge.synth import Draft, distinct_sql, drafts, implausible
from duckask.utils.schema.ddl import render_schema
from duckask.utils.sql.compare import results_match
from duckask.utils.sql.voting import first_rows

QUESTION_SYSTEM = ("You write the question a user of this database would type to get a query's result. Write one "
                   "short, natural question in plain English: say what is asked, with its values, in the user's "
                   "words, not table or column names with underscores, and never mention SQL.")


@dataclass
class LearnReport:
    """What one run did: drafts tried this run and before, kept, refused (by why), time, and whether it stopped at
    its bound."""
    db: str
    store: str
    drafts: int = 0
    tried_before: int = 0
    tried: int = 0
    kept: int = 0
    kept_total: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    stopped: str = ""          # "", "time" or "limit": why drafts were left untried

    @property
    def read_back_share(self) -> float | None:
        """Of the drafts that reached the model (a plausible result), the share whose question read back."""
        asked = self.kept + sum(n for why, n in self.refused.items() if why.startswith(("read back", "no question")))
        return round(100.0 * self.kept / asked, 1) if asked else None


_TABLE_PHRASE = re.compile(r"\s*\b(?:from|in|of|on)\s+the\s+[\w.]+\s+(?:table|dataset|data)\b", re.I)


def write_question(llm, catalog, draft: Draft, df) -> str:
    """The model's question for ``draft`` (one line, at most 200 characters; empty when it wrote none, or one that
    still names a table: a user does not)."""
    user = (f"SQL: {draft.sql}\nIt returns {draft.reading}.\nFirst rows:\n{first_rows(df)}\n\n"
            "The question a user would ask to get exactly this (no table names):")
    reply = llm.complete([{"role": "system", "content": QUESTION_SYSTEM}, {"role": "user", "content": user}],
                         node="Learn", max_tokens=48, stop=["\n"])
    text = " ".join(_TABLE_PHRASE.sub("", reply.text.strip().strip('"')).split())
    words = set(re.findall(r"\w+", text.lower()))
    if len(text) < 8 or "select" in words or words & {t.lower() for t in draft.tables if "_" in t}:
        return ""
    return text[:200]


def focus_columns(catalog, all_drafts: list[Draft], most: int = 12) -> dict[str, list[str]]:
    """Per table, the columns a read-back's schema shows: its keys and those any of its drafts reads, at most
    ``most`` (the rest counted): one schema text per table, whatever the draft, so a table's drafts share it as
    their prompt's start. Short on purpose: on the 2-core host the prompt's tokens are most of a read-back's time."""
    used: dict[str, list[str]] = {}
    for d in all_drafts:
        names = columns_of(d.sql)
        for t in d.tables:
            table = catalog.tables[t]
            cols = [c.name for c in table.columns if c.name.lower() in names or c.pk or c.ref]
            used[t] = list(dict.fromkeys(used.get(t, []) + cols))
    return {t: cols[:most] for t, cols in used.items()}


def read_back(llm, catalog, draft: Draft, question: str, focus: dict[str, list[str]] | None = None) -> str:
    """The SQL the model writes for ``question`` from the schema of the draft's tables (their ``focus`` columns),
    in SQLGenerator's prompt but with no examples and no DuckDB reference lines (a pair must read back on its own;
    measured: no draft in DuckDB's own forms does, 0 of 24 on 2026-12-02)."""
    from duckask.nodes.sql_generator import build_messages
    from duckask.utils.sql import drafts as sql_drafts

    schema = render_schema(catalog, list(draft.tables), columns=focus)
    return sql_drafts.draft(llm, build_messages(schema, question, [], None), node="Learn", catalog=catalog,
                            question=question)[0]


def distinct_counts(database, catalog, deadline: float) -> dict[str, dict[str, int]]:
    """Per table, the approximate distinct values of its text and year columns (one bounded query a table)."""
    out: dict[str, dict[str, int]] = {}
    for t in catalog.tables.values():
        if time.monotonic() > deadline:
            break
        sql = distinct_sql(t)
        if not sql or t.rows == 0:
            continue
        res = database.run(sql)
        if res.ok and res.df is not None and len(res.df):
            out[t.name] = {c: int(v) for c, v in res.df.iloc[0].items() if v is not None}
    return out


def learn(db: str | None = None, *, minutes: float = 15.0, limit: int | None = None,
          progress: Callable[[LearnReport, str], None] | None = None, **options: Any) -> LearnReport:
    """Learn ``db`` (see the module's text) for at most ``minutes`` (and ``limit`` drafts); ``progress(report,
    line)`` is called after each draft. Returns the run's report."""
    t0 = time.monotonic()
    deadline = t0 + minutes * 60
    prep = prepare(need_db(db, "learn()"), **options)
    store = LearnedStore(learned_path(prep.database, prep.settings))
    before = store.tried(prep.llm.name)
    todo = drafts(prep.catalog, distinct_counts(prep.database, prep.catalog, deadline))
    focus = focus_columns(prep.catalog, todo)
    report = LearnReport(db=str(prep.db), store=str(store.path), drafts=len(todo),
                         tried_before=sum(d.sql in before for d in todo), kept_total=len(store.kept()))
    todo = [d for d in todo if d.sql not in before]
    for n, d in enumerate(todo):
        if limit is not None and n >= limit:
            report.stopped = "limit"
            break
        if time.monotonic() > deadline:
            report.stopped = "time"
            break
        record: dict[str, Any] = {"sql": d.sql, "kind": d.kind, "tables": list(d.tables), "model": prep.llm.name}
        record.update(_try(prep, d, focus))
        store.add(record)
        report.tried += 1
        if record["status"] == "kept":
            report.kept += 1
            report.kept_total += 1
        else:
            why = record["why"].split(":")[0]
            report.refused[why] = report.refused.get(why, 0) + 1
        report.seconds = round(time.monotonic() - t0, 1)
        if progress:
            progress(report, f"{record['status']:7} {d.kind:13} {record.get('question') or record['why']}")
    report.seconds = round(time.monotonic() - t0, 1)
    return report


def _try(prep, d: Draft, focus: dict[str, list[str]]) -> dict:
    """One draft's outcome: ``{"status": "kept", "question", "rows"}`` or ``{"status": "refused", "why"}``."""
    out = prep.database.run(d.sql)
    why = implausible(out, d.kind)
    if why:
        return {"status": "refused", "why": why}
    question = write_question(prep.llm, prep.catalog, d, out.df)
    if not question:
        return {"status": "refused", "why": "no question: the model wrote none"}
    back = read_back(prep.llm, prep.catalog, d, question, focus)
    again = prep.database.run(back) if back else None
    if again is None or not again.ok or not results_match(again.df, out.df):
        return {"status": "refused", "why": "read back to other rows", "question": question, "read_back": back}
    return {"status": "kept", "question": question, "rows": len(out.df), "read_back": back}
