"""The drafts service: draw SQL drafts from one prompt, run them with the turn's limits, repair what DuckDB
rejects for free, and choose among the results. SQLGenerator, SQLExecutor, AssessConfidence, ErrorFixer and
ResponseGrader all draft, run and repair through it, so each is written once.

- ``draft`` and ``sample``: the model's replies to a prompt as tidied SQL (``FENCE``: the reply is the query), with
  how sure it was (the mean log-probability: a tie between result groups goes to the likelier);
- ``run_query``: the one way a turn's query reaches the database, with the turn's timeout and row cap (the
  connection is shared per file, so both go with each run; read-only and a live source are ``Database.run``'s);
- ``repair`` and ``run_repaired``: the free, rule-based fix of a failed query (``sql.repair``), tidied; and a
  query run again while a fix exists; ``run_all``: each draft run so;
- ``tally`` and ``choose``: the distinct drafts and their weights; the vote over their results (``sql.voting``),
  reranked by the reviewer when asked.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from duckask.utils.db.database import QueryOutcome
from duckask.utils.llm.base import complete_many
from duckask.utils.sql import repair as rules
from duckask.utils.sql.extract import extract_sql
from duckask.utils.sql.facts import SchemaFacts
from duckask.utils.sql.pivot import run_pivot
from duckask.utils.sql.tidy import tidy_sql
from duckask.utils.sql.voting import Vote, rerank, vote

FENCE = {"prefix": "```sql\n", "stop": ["```"], "max_tokens": 256}   # the reply is the query, nothing else


def _sql(reply, catalog, question: str | None) -> str:
    return tidy_sql(extract_sql(reply.text), catalog, question)


def _certainty(reply) -> dict:
    return {k: v for k in ("min_prob", "mean_logprob") if (v := getattr(reply, k, None)) is not None}


def draft(llm, messages, *, node: str, catalog, question: str, temperature: float | None = None,
          stable: str = "") -> tuple[str, dict]:
    """The tidied SQL of one reply (greedy unless ``temperature``; no seed), and how sure the model was of it
    (``min_prob``, ``mean_logprob``: greedy replies on the embedded model)."""
    reply = llm.complete(messages, node=node, temperature=temperature, stable=stable, **FENCE)
    return _sql(reply, catalog, question), _certainty(reply)


def sample(llm, messages, n: int, *, node: str, catalog, question: str, temperature: float | None, seed: int,
           stable: str = "", greedy: bool = False) -> list[tuple[str, dict]]:
    """Drafts of one prompt, each (tidied SQL, certainty): with ``greedy`` the greedy ``draft`` first, then ``n``
    sampled at ``temperature`` (seeds ``seed``..``seed+n-1``, one batch where the backend can: the embedded model
    decodes them together over the shared prompt state). No call for ``n`` = 0."""
    first = [draft(llm, messages, node=node, catalog=catalog, question=question, stable=stable)] if greedy else []
    if not n:
        return first
    return first + [(_sql(r, catalog, question), _certainty(r)) for r in complete_many(
        llm, messages, n=n, node=node, temperature=temperature, seed=seed, stable=stable, **FENCE)]


def run_query(db, settings, sql: str, *, row_cap: int | None = None, result_bytes: int | None = None) -> QueryOutcome:
    """``sql`` run on the safe, read-only connection with the turn's ``timeout_s`` and ``row_cap`` (``row_cap``
    and ``result_bytes`` given: an export's). Every node runs a turn's query through here."""
    cap = settings.row_cap if row_cap is None else row_cap
    extra = {} if result_bytes is None else {"result_bytes": result_bytes}
    return db.run(sql, timeout_s=settings.timeout_s, row_cap=cap, **extra)


def repair(sql: str, error: str, catalog, question: str | None, facts: SchemaFacts | None = None) -> str | None:
    """The free fix of a query DuckDB rejected with ``error`` (``sql.repair``'s first rule that fires; ``facts``:
    what the rules know of the schema, by default all of it), tidied (moving a column to the alias that has it can
    turn "T1.a = T2.a" into "T1.a = T1.a"); None when no rule names the fix."""
    fixed = rules.repair(sql, error, facts if facts is not None else SchemaFacts.of(catalog))
    return tidy_sql(fixed, catalog, question) if fixed else None


def run_repaired(run, sql: str, catalog, question: str | None = None, max_repairs: int = 3) -> QueryOutcome:
    """``run(sql)`` and, while DuckDB rejects the query and ``sql.repair`` (with foreign keys) has a fix,
    run the fixed and tidied query instead, at most ``max_repairs`` times. Returns the last outcome
    (its ``sql`` is the query that ran). A PIVOT without its values listed gets them first (``sql.pivot``)."""
    out = run_pivot(run, sql)
    sql = out.sql or sql
    facts = SchemaFacts.of(catalog)
    for _ in range(max_repairs):
        if out.ok or not (fixed := rules.repair(sql, out.error or "", facts)):
            break
        sql = tidy_sql(fixed, catalog, question)
        out = run(sql)
    return out


def run_all(db, settings, sqls: list[str], catalog, question: str | None, *,
            repairs: bool = True) -> list[QueryOutcome | None]:
    """Each of ``sqls`` run with the turn's limits (``run_query``), in order, with the free repairs (``repairs``
    off: the PIVOT's values only, as one query that ran alone gets); None for an empty draft. The caller chooses
    what runs: SQLExecutor each distinct draft once, AssessConfidence every draft as drawn."""
    def run(sql):
        return run_query(db, settings, sql)

    return [(run_repaired(run, q, catalog, question) if repairs else run_pivot(run, q)) if q else None for q in sqls]


def tally(drafts: list[str], scores: list[float | None], first: str) -> tuple[list[str], Counter, dict[str, float]]:
    """The distinct drafts (``first`` first, then in order of appearance), how many drafts gave each, and each
    one's best log-probability where known. Empty drafts are not counted."""
    counts = Counter(d for d in drafts if d)
    likely: dict[str, float] = {}
    for d, lp in zip(drafts, scores):
        if lp is not None and d:
            likely[d] = max(lp, likely.get(d, lp))
    return [first] + [d for d in counts if d != first], counts, likely


def choose(outcomes: list[QueryOutcome], weights: list[int] | None = None, scores: list[float | None] | None = None,
           *, question: str = "", review: Callable[[list[dict[str, str]], str], float] | None = None) -> Vote:
    """The vote over ``outcomes`` (``sql.voting.vote``: groups of equal results, the largest real one first; ties to
    the likelier query, then the earliest draft); with ``review`` (the reviewer's score of ``question``), its real
    groups reranked by how well each reads back to the question (``sql.voting.rerank``)."""
    v = vote(outcomes, weights, scores)
    if review is not None:
        v, _ = rerank(v, outcomes, weights or [1] * len(outcomes), question, review)
    return v
