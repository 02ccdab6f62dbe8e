"""The peer beside every figure (issue 53, item 7): LangChain's one-call ``create_sql_query_chain`` on the same sets.

The peer is what a user of the field's best-known tool would build in ten lines: ``SQLDatabase`` over the database
(SQLAlchemy's ``duckdb-engine``; its default table info, three sample rows a table; ``peer_sqldatabase`` says why its
metadata is read from DuckDB's own catalog), ``create_sql_query_chain``
with its default prompt, and ``ChatOpenAI`` pointed at the same GGUF duckask embeds, served by llama.cpp's own
OpenAI-compatible server (``llama_cpp.server``, started here on 127.0.0.1, temperature 0). On the NBA sets the peer
reads the same models as duckask (``bench/nba_models``, created as plain views in a copy of the imported warehouse,
and only those: ``include_tables``), as the house's measurement did; on Lahman, the idiom sets and Spider's held-out
100 (each question's own database, the suite's ids), every table.

The chain's reply is cleaned as its users do (a leading ``SQLQuery:``, code fences and anything after the first
statement dropped), run read-only on the same file, and scored with duckask's own rulers: strict EX
(``compare.results_match``) and the user's (``eval.run.holds_of``: the question's answer columns). Seconds are each
question's wall time (chain and query). CAL is timed by ``bench/run.py`` in the same run.

    .venv/bin/python -m pip install -e '.[local,peer]'
    .venv/bin/python bench/run.py run peer      # or: bench/peer.py --set nba-heldout --out docs/results/peer.json

Writes one record a question (``--out`` with ``.jsonl``) and the summary (``--out``) per set.
"""
from __future__ import annotations

import argparse
import functools
import json
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from sets import ids_of, question_set  # noqa: E402

#: name: (questions, database (None: each question's own), models directory or None), as the runner's suites say
SETS = {name: question_set(name, "models" if name.startswith("nba") else None)
        for name in ("nba-heldout", "nba-tuning", "lahman", "idioms-heldout", "spider-heldout100")}
WORK = Path("/tmp/duckask_peer")


def clean_sql(reply: str) -> str:
    """The SQL in the chain's reply, as its users clean it: what follows the prompt's ``SQLQuery:`` label (the small
    model often echoes ``Question: ...`` before it), code fences and whatever follows the first statement (a
    ``SQLResult:`` the model went on to imagine) dropped."""
    text = reply.strip()
    fenced = re.search(r"```(?:sql)?\s*(.*?)```", text, re.S | re.I)
    if fenced:
        text = fenced.group(1)
    labelled = re.split(r"SQL\s*Query\s*:", text, maxsplit=1, flags=re.I)     # the prompt's format, echoed or not
    text = labelled[1] if len(labelled) == 2 else text
    text = re.split(r"\n\s*(?:SQLResult|Answer|Question)\s*:", text, maxsplit=1, flags=re.I)[0]
    return text.strip().split(";")[0].strip()


def peer_database(db: str, models: str | None) -> tuple[Path, list[str] | None]:
    """A copy of the DuckDB file duckask reads (an EXPORT folder imported once) for the peer, with the models as
    plain views when there are models, and the names the peer may use (the models only; None: every table)."""
    from duckask.utils.config import load_settings
    from duckask.utils.db.models import load_models
    from duckask.utils.db.quoting import quote_ident
    from duckask.utils.db.sources import resolve_db_file

    source = resolve_db_file(ROOT / db if not Path(db).is_absolute() else db, load_settings(None))
    built = load_models(ROOT / models) if models else []
    WORK.mkdir(parents=True, exist_ok=True)      # a copy: duckask's scorer has the original open its own way
    dest = WORK / f"{Path(source).stem}-{Path(models).name if models else 'tables'}.duckdb"
    if not dest.exists():
        tmp = dest.with_suffix(".part")
        shutil.copyfile(source, tmp)
        with duckdb.connect(str(tmp)) as con:
            for m in built:
                con.execute(f"CREATE VIEW {quote_ident(m.name)} AS {m.sql}")
        tmp.rename(dest)
    return dest, [m.name for m in built] or None


_TYPES = {"BIGINT": "BigInteger", "HUGEINT": "BigInteger", "INTEGER": "Integer", "SMALLINT": "SmallInteger",
          "TINYINT": "SmallInteger", "DOUBLE": "Float", "FLOAT": "Float", "REAL": "Float", "DECIMAL": "Numeric",
          "BOOLEAN": "Boolean", "DATE": "Date", "TIMESTAMP": "DateTime", "TIME": "Time", "VARCHAR": "String"}


_OPEN: dict[tuple, object] = {}     # one SQLDatabase a file for the whole run: DuckDB opens a file one way at a time


def peer_sqldatabase(sqldatabase, path: Path, tables: list[str] | None):
    """LangChain's ``SQLDatabase`` over the file, its tables described as its own reflection would describe them
    (name, columns, SQLAlchemy types; its default three sample rows). duckdb-engine's reflection goes through
    PostgreSQL's catalog (``pg_collation``, ``regclass``), which DuckDB 2.0 no longer emulates, so the metadata is
    read from DuckDB's ``information_schema`` and given to ``SQLDatabase`` (``lazy_table_reflection``): the prompt
    the chain builds is the same. A type SQLAlchemy has no generic name for (a list, a struct) is shown as text.
    The table info (with its sample rows) is built once a database: a view's first three rows come back in another
    order from one call to the next (DuckDB scans in parallel), and a prompt that changes in its middle costs the
    server its whole cached prefix (8,000 tokens, minutes a question on this host), which is no property of the
    chain's answers."""
    import sqlalchemy as sa

    key = (str(path), tuple(tables or ()))
    if key in _OPEN:
        return _OPEN[key]
    with duckdb.connect(str(path), read_only=True) as con:
        rows = con.execute("SELECT table_name, column_name, data_type FROM information_schema.columns "
                           "WHERE table_schema = 'main' ORDER BY table_name, ordinal_position").fetchall()
    wanted = set(tables) if tables else {t for t, _, _ in rows}
    metadata, columns = sa.MetaData(), {}
    for table, column, kind in rows:
        if table in wanted:
            columns.setdefault(table, []).append(sa.Column(column, getattr(sa, _TYPES.get(kind.split("(")[0],
                                                                                           "String"))()))
    for table, cols in columns.items():
        sa.Table(table, metadata, *cols)
    engine = sa.create_engine(f"duckdb:///{path}", connect_args={"read_only": True})
    db = sqldatabase(engine, metadata=metadata, include_tables=sorted(columns), view_support=True,
                     lazy_table_reflection=True)
    once = functools.lru_cache(maxsize=None)(lambda names: db.__class__.get_table_info(db, list(names) if names
                                                                                       else None))
    db.get_table_info = lambda table_names=None: once(tuple(table_names) if table_names else None)
    _OPEN[key] = db
    return db


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(model: Path, n_ctx: int) -> tuple[subprocess.Popen, str]:
    """llama.cpp's OpenAI-compatible server on the GGUF, on 127.0.0.1; its base URL once it answers."""
    import httpx

    port = _free_port()
    WORK.mkdir(parents=True, exist_ok=True)
    log = WORK / "server.log"            # llama.cpp logs much at load: a pipe nobody reads would stop it
    with log.open("w") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host",
                                 "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", "2"],
                                stdout=sink, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    for _ in range(600):
        if proc.poll() is not None:
            raise RuntimeError(f"llama_cpp.server exited: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError("llama_cpp.server did not answer in 5 minutes")


def run_set(name: str, base_url: str, limit: int | None, say) -> tuple[dict, list[dict]]:
    from langchain_classic.chains import create_sql_query_chain
    from langchain_community.utilities import SQLDatabase
    from langchain_openai import ChatOpenAI

    from duckask.utils.config import load_settings
    from duckask.utils.db.database import open_database
    from duckask.utils.eval.questions import load_questions, read_ids, resolve_db, select
    from duckask.utils.eval.run import holds_of
    from duckask.utils.sql.compare import results_match
    from duckask.utils.sql.describe import has_top_level_order_by

    qfile, db, models = SETS[name]
    questions, db_dir = load_questions(ROOT / qfile)
    questions = select(questions, read_ids(ROOT / ids_of(name))) if ids_of(name) else questions
    questions = questions[:limit] if limit else questions
    llm = ChatOpenAI(base_url=base_url, api_key="not-needed", model="local", temperature=0, max_tokens=256,
                     timeout=600)
    chains: dict[str, tuple] = {}
    records = []
    for i, q in enumerate(questions, 1):
        where = resolve_db(q, db=str(ROOT / db) if db else None, db_dir=db_dir)
        if where not in chains:
            path, tables = peer_database(where, models)
            sqldb = peer_sqldatabase(SQLDatabase, path, tables)
            gold_db = open_database(where, load_settings(None, **({"semantic": str(ROOT / models)} if models else {})))
            chains[where] = (create_sql_query_chain(llm, sqldb), sqldb._engine, gold_db)
        chain, engine, gold_db = chains[where]
        gold = gold_db.run(q.gold_sql, timeout_s=60)
        start = time.perf_counter()
        reply, sql, df, error = "", "", None, None
        try:
            reply = chain.invoke({"question": q.question})
            sql = clean_sql(reply)
            with engine.connect() as c:            # the peer's own connection (one configuration a file)
                got = c.exec_driver_sql(sql)
                df = pd.DataFrame(got.fetchall(), columns=list(got.keys()))
        except Exception as e:                  # the peer's failure is a scored outcome
            error = f"{type(e).__name__}: {str(e)[:300]}"
        seconds = time.perf_counter() - start
        ordered = has_top_level_order_by(q.gold_sql)
        correct = bool(df is not None and gold.ok and results_match(df, gold.df, order_matters=ordered))
        holds = holds_of(q, df, gold.df if gold.ok else None, ordered, correct) if df is not None else False
        records.append({"id": q.id, "question": q.question, "reply": reply, "sql": sql, "correct": correct,
                        "holds": holds, "error": error, "seconds": round(seconds, 2)})
        say(f"peer {name} {i}/{len(questions)} {q.id}: {'right' if correct else 'holds' if holds else 'wrong'} "
            f"{seconds:.1f} s")
    n = len(records)
    summary = {"set": name, "questions": n, "ex_pct": round(100 * sum(r["correct"] for r in records) / n, 1),
               "holds_pct": round(100 * sum(bool(r["holds"]) for r in records) / n, 1),
               "median_s": round(statistics.median(r["seconds"] for r in records), 2),
               "errors": sum(r["error"] is not None for r in records)}
    return summary, records


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", action="append", choices=sorted(SETS), help="the sets to ask (default: all)")
    ap.add_argument("--limit", type=int, help="the first N questions of each set (a smoke run)")
    ap.add_argument("--n-ctx", type=int, default=16384)
    ap.add_argument("--out", default="docs/results/peer.json")
    a = ap.parse_args(argv)
    from duckask.utils.llm.model_store import model_path

    proc, base = start_server(model_path(), a.n_ctx)
    out = {"tool": "langchain create_sql_query_chain (default prompt)", "model": model_path().name, "sets": {}}
    records: list[dict] = []
    try:
        for name in a.set or list(SETS):
            summary, recs = run_set(name, base, a.limit, lambda s: print(s, file=sys.stderr, flush=True))
            out["sets"][name] = summary
            records += [{"set": name, **r} for r in recs]
            print(json.dumps(summary), flush=True)
            Path(a.out).write_text(json.dumps(out, indent=1) + "\n")         # each set kept as it ends
            Path(a.out).with_suffix(".jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
