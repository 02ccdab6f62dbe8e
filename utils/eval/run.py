"""Batch evaluation: run the graph (and optionally the single-prompt baseline) over a question file,
score execution accuracy, append one JSONL record per question, and summarise.

- Gold and predicted SQL run through the same safe executor (timeout, row cap); a timeout or error
  counts as wrong and is recorded as such.
- Records are appended (and fsynced) as each question finishes (``records.py``); rerunning with the
  same ``out`` skips the ids already there, so a kill loses nothing and repeats nothing that had
  finished. The summary and report are in ``report.py``.
- Questions are grouped by database so the embedded model's KV cache keeps the schema warm.
"""
from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pandas as pd

from duckask.utils.config import Settings, load_settings
from duckask.utils.db.database import open_database
from duckask.utils.eval.questions import Question, load_questions, read_ids, resolve_db, select
from duckask.utils.eval.records import RecordWriter, read_records
from duckask.utils.eval.report import summarize, write_report
from duckask.utils.llm import LLM, get_llm
from duckask.utils.semantic import get_catalog
from duckask.utils.sql.compare import answer_holds, results_match
from duckask.utils.sql.describe import has_top_level_order_by


# --------------------------------------------------------------------------- one question
def _gold(q: Question, database) -> tuple[pd.DataFrame | None, bool, str | None]:
    if q.expected is not None:
        return pd.DataFrame(q.expected), q.ordered, None
    if q.gold_sql:
        out = database.run(q.gold_sql)
        return (out.df if out.ok else None), has_top_level_order_by(q.gold_sql), (None if out.ok else out.error)
    return None, False, "no gold SQL or expected rows"


def _error_record(q: Question, db: str, err: str | None, seconds: float, gold_error: str | None,
                  baseline: str | None) -> dict[str, Any]:
    """A failed question's record, with the same keys as an answered one (one schema per file)."""
    rec = {"id": q.id, "db": q.db_id or Path(db).stem, "question": q.question, "tags": q.tags, "sql": None,
           "status": "error", "correct": False, "error": err, "first_sql": None, "first_correct": False,
           "first_graded_correct": None, "grades": [], "grader_rounds": 0, "fixer_attempts": 0, "repairs": 0,
           "llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "reused_tokens": 0, "tables": [],
           "seconds": round(seconds, 3), "trace": [], "gold_error": gold_error,
           "holds": False if q.answer_columns is not None else None}
    if baseline:
        rec.update(baseline_sql=None, baseline_status="error", baseline_correct=False, baseline_error=err,
                   baseline_seconds=0.0, baseline_llm_calls=0, baseline_prompt_tokens=0, baseline_completion_tokens=0)
    return rec


def holds_of(q: Question, df: pd.DataFrame | None, gold_df: pd.DataFrame | None, ordered: bool,
             correct: bool) -> bool | None:
    """The answer scored as a user reads it (``compare.answer_holds``) where the question says which columns it asks
    for; None where it does not (a Spider question keeps strict EX alone). A strictly right answer holds."""
    if q.answer_columns is None:
        return None
    if correct:
        return True
    columns = None if q.answer_columns == "all" else q.answer_columns
    return answer_holds(df, gold_df, columns, order_matters=ordered)


def rescore(questions: str | Path, *, out: str | Path, db: str | None = None, db_dir: str | Path | None = None,
            report: str | Path | None = None, config: str | None = None, semantic_dir: str | Path | None = None,
            **options: Any) -> dict[str, Any]:
    """Score the records of an earlier run (``out``) as a user reads them (``holds``), without asking again: each
    record's final SQL and its question's gold run on the database as the run opened it; the records and the report
    are rewritten with ``holds`` beside the recorded ``correct`` (strict EX, unchanged)."""
    from duckask.utils.knowledge.demo import demo_knowledge

    settings = eval_settings(load_settings(config, **options))
    qs, default_dir = load_questions(questions)
    by_id = {q.id: q for q in qs}
    records = read_records(out)
    for rec in records:
        q = by_id.get(rec["id"])
        if q is None:
            continue
        d = resolve_db(q, db=db, db_dir=db_dir or default_dir)
        own = Path(semantic_dir) / f"{q.db_id or Path(d).stem}.yaml" if semantic_dir else None
        s = dataclasses.replace(settings, descriptions=str(own)) if own is not None and own.is_file() else settings
        database = open_database(d, demo_knowledge(s, d))
        gold_df, ordered, _ = _gold(q, database)
        got = database.run(rec["sql"]) if rec.get("sql") else None
        rec["holds"] = holds_of(q, got.df if got is not None and got.ok else None, gold_df, ordered,
                                bool(rec.get("correct")))
    tmp = Path(str(out) + ".tmp")
    tmp.write_text("".join(json.dumps(r, default=str) + "\n" for r in records))
    tmp.replace(out)
    summary = summarize([r for r in records if r["id"] in by_id])
    if report:
        write_report(summary, report)
    return summary


def signals_of(r) -> dict[str, Any]:
    """The confidence signals of a Result (``utils/trust/signals.py``): those AssessConfidence collected,
    or, for a Result that did not pass through it, the same collected from the Result's record."""
    from duckask.utils.trust.signals import collect

    if (r.confidence or {}).get("signals"):
        return r.confidence["signals"]
    return collect(status=r.status, sql=r.sql, df=r.df, attempts=r.attempts, vote=r.vote, grades=r.grades,
                   truncated=r.truncated, examples=r.examples, path=r.path, intent_by=r.routing.get("intent_by"))


def confidence_of(r) -> dict[str, Any] | None:
    """The record's ``confidence``: {"level", "score", "reasons"} (the signals are recorded beside it)."""
    if r.confidence:
        return {k: r.confidence[k] for k in ("level", "score", "reasons")}
    return None


def eval_settings(settings: Settings) -> Settings:
    """What ``auto`` means in a batch run: every question file row is a data question (no router, no
    LLM call to place it) and the answer is the template (no sentence call): both are chat features
    whose cost an accuracy run should not pay. Set ``router``/``analyzer`` explicitly to measure them."""
    return dataclasses.replace(settings, router="off" if settings.router == "auto" else settings.router,
                               analyzer="rules" if settings.analyzer == "auto" else settings.analyzer)


def evaluate_one(q: Question, db: str, *, llm: LLM, settings: Settings, mode: str = "spider",
                 baseline: str | None = None) -> dict[str, Any]:
    from duckask.utils.api import ask
    from duckask.utils.knowledge.demo import demo_knowledge

    settings = demo_knowledge(settings, db)  # as ``ask`` will: the gold runs against the same catalog
    try:
        database = open_database(db, settings)
        catalog = get_catalog(database, settings)
    except Exception as e:
        return _error_record(q, db, f"database: {type(e).__name__}: {e}", 0.0, None, baseline)
    gold_df, ordered, gold_error = _gold(q, database)
    scored: dict[str, bool] = {}

    def score(sql: str | None, df: pd.DataFrame | None = None) -> bool:
        if not sql or gold_df is None:
            return False
        if sql not in scored:
            if df is None:
                out = database.run(sql)
                df = out.df if out.ok else None
            scored[sql] = results_match(df, gold_df, order_matters=ordered, mode=mode)
        return scored[sql]

    t0 = time.perf_counter()
    try:
        r = ask(q.question, db=db, llm=llm, settings=settings)
        err = None
    except Exception as e:
        r, err = None, f"{type(e).__name__}: {e}"
    seconds = time.perf_counter() - t0
    rec: dict[str, Any] = {"id": q.id, "db": q.db_id or Path(db).stem, "question": q.question, "tags": q.tags}
    if r is None:
        rec = _error_record(q, db, err, seconds, gold_error, None)
    else:
        correct = r.ok and score(r.sql, r.df)
        rec["holds"] = holds_of(q, r.df if r.ok else None, gold_df, ordered, bool(correct))
        # Each judgement with the check that spoke and whether the answer it judged was right (the live per-check
        # table: how often a check fired on a right answer, and whether the retry it caused ended right).
        grades = [{"verdict": g["verdict"], "by": g["by"], "critique": g.get("critique", ""),
                   **({"check": g["check"], "judged_correct": score(g.get("sql"))} if g.get("check") else {})}
                  for g in r.grades]
        first_graded = r.grades[0]["sql"] if r.grades else None
        rec.update(
            sql=r.sql, status=r.status, correct=bool(correct),
            error=None if r.ok else r.answer.splitlines()[0][:300],
            first_sql=r.first_sql, first_correct=score(r.first_sql) if r.first_sql else False,
            first_graded_correct=score(first_graded) if first_graded else None,
            candidates=[{"sql": c["sql"], "draft": c.get("draft", c["sql"]), "positions": c["positions"],
                         "status": c["status"], "chosen": c["chosen"],
                         "correct": score(c["sql"]) if c["status"] == "ok" else False} for c in r.vote],
            grades=grades, grader_rounds=max(0, len(grades) - 1),
            fixer_attempts=sum(1 for a in r.attempts if a.get("after") == "error" and a.get("source") == "llm"),
            repairs=sum(1 for a in r.attempts if a.get("source") == "repair"),
            resampled=any(a.get("after") == "resample" for a in r.attempts),
            llm_calls=len(r.llm_calls), prompt_tokens=sum(c["prompt_tokens"] for c in r.llm_calls),
            completion_tokens=sum(c["completion_tokens"] for c in r.llm_calls),
            reused_tokens=sum(c.get("reused_tokens", 0) for c in r.llm_calls),
            tables=r.tables, seconds=round(seconds, 3), path=r.path,
            plan={k: v for k, v in (r.plan or {}).items()
                  if k in ("plan", "why", "fallback", "reached", "filtered", "gate")}
            or None,
            examples=[{"id": e["id"], "similarity": e["similarity"]} for e in r.examples],
            trace=[{k: t[k] for k in ("node", "action", "ms", "llm_calls")} for t in r.trace],
            signals=signals_of(r), confidence=confidence_of(r), budget_stop=r.budget_stop)
    rec["gold_error"] = gold_error
    if baseline == "single-prompt":
        from duckask.utils.eval.baseline import single_prompt

        b = single_prompt(llm, database, catalog, q.question)
        rec.update(baseline_sql=b.sql, baseline_status=b.status,
                   baseline_correct=bool(b.df is not None and score(b.sql, b.df)),
                   baseline_error=None if b.status == "ok" else b.error, baseline_seconds=round(b.seconds, 3),
                   baseline_llm_calls=1, baseline_prompt_tokens=b.prompt_tokens,
                   baseline_completion_tokens=b.completion_tokens)
    return rec


# --------------------------------------------------------------------------- the run
class _Progress:
    """A tqdm bar with running accuracy on a terminal; plain lines otherwise."""

    def __init__(self, total: int, done: int, enabled: bool | None):
        self.tty = sys.stderr.isatty() if enabled is None else enabled
        self.total, self.n, self.right = total, 0, 0
        self.bar = None
        if self.tty:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc="eval", unit="q", file=sys.stderr)
        elif done:
            print(f"eval: resuming, {done} question(s) already in the output", file=sys.stderr)

    def update(self, rec: dict[str, Any]) -> None:
        self.n += 1
        self.right += bool(rec["correct"])
        ex = 100.0 * self.right / self.n
        if self.bar is not None:
            self.bar.set_postfix_str(f"EX {ex:.1f}%")
            self.bar.update(1)
        else:
            mark = "ok " if rec["correct"] else "-- "
            print(f"[{self.n}/{self.total}] {mark}{rec['id']} {rec['seconds']:.1f}s  running EX {ex:.1f}%",
                  file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def evaluate(questions: str | Path | list[Question], *, db: str | None = None, db_dir: str | Path | None = None,
             ids: list[str] | str | Path | None = None, out: str | Path | None = None, mode: str = "spider",
             baseline: str | None = None, workers: int = 1, cache: bool | str | Path = False,
             report: str | Path | None = None, limit: int | None = None, llm: LLM | None = None,
             settings: Settings | None = None, config: str | None = None, progress: bool | None = None,
             on_record: Callable[[dict], None] | None = None, semantic_dir: str | Path | None = None,
             **options: Any) -> pd.DataFrame:
    """Evaluate a question file; returns every record in ``out`` (this run's and earlier ones) as a DataFrame.
    ``semantic_dir``: a semantic file per database, ``DIR/<database name>.yaml``, used where one exists."""
    if mode not in ("spider", "bird"):
        raise ValueError("mode must be spider or bird")
    if baseline not in (None, "single-prompt"):
        raise ValueError("the only baseline is 'single-prompt'")
    settings = eval_settings(settings or load_settings(config, **options))
    default_dir = None
    if isinstance(questions, (str, Path)):
        questions, default_dir = load_questions(questions)
    if isinstance(ids, (str, Path)):
        ids = read_ids(ids)
    qs = select(list(questions), ids)[: limit or None]
    jobs = [(q, resolve_db(q, db=db, db_dir=db_dir or default_dir)) for q in qs]
    out = Path(out) if out else settings.resolved_cache_dir / "eval" / f"results-{int(time.time())}.jsonl"
    done = {r["id"] for r in read_records(out)}
    todo = [(q, d) for q, d in jobs if q.id not in done]
    # Group by database (stable), so consecutive questions share the schema prefix in the KV cache.
    order = {d: i for i, d in enumerate(dict.fromkeys(d for _, d in todo))}
    todo.sort(key=lambda j: order[j[1]])

    backend = llm if llm is not None else get_llm(settings)
    if cache:
        from duckask.utils.llm.cache import CachedLLM

        cache_path = Path(cache) if isinstance(cache, (str, Path)) else settings.resolved_cache_dir / "llm-cache.sqlite"
        backend = CachedLLM(backend, cache_path)
    if workers > 1 and not backend.is_endpoint:
        print("eval: the embedded model runs one question at a time; --workers ignored", file=sys.stderr)
        workers = 1

    writer = RecordWriter(out)
    bar = _Progress(len(todo), len(done), progress)

    def run(job):
        q, d = job
        own = Path(semantic_dir) / f"{q.db_id or Path(d).stem}.yaml" if semantic_dir else None
        s = dataclasses.replace(settings, descriptions=str(own)) if own is not None and own.is_file() else settings
        rec = evaluate_one(q, d, llm=backend, settings=s, mode=mode, baseline=baseline)
        writer.append(rec)
        return rec

    pool = ThreadPoolExecutor(max_workers=workers) if workers > 1 else None
    try:
        results: Iterable[dict] = pool.map(run, todo) if pool else map(run, todo)
        for rec in results:
            bar.update(rec)
            if on_record:
                on_record(rec)
    finally:
        if pool:
            # On an interrupt, questions not started yet are dropped (they rerun on resume); those in
            # flight finish and are written whole.
            pool.shutdown(wait=True, cancel_futures=True)
        bar.close()
    records = [r for r in read_records(out) if r["id"] in {q.id for q in qs}]
    summary = summarize(records)
    if report:
        write_report(summary, report)
    df = pd.DataFrame(records)
    df.attrs["summary"] = summary
    df.attrs["out"] = str(out)
    return df
