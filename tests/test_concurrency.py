"""Concurrency: ``ask`` from 8 threads at once on one database gives each thread its own right
answer; the shared connection hands every query a cursor of its own; a memory limit chosen by a later
caller is the one in force (DuckDB fixes it per open database, so the connection is reopened once
running queries end). ``eval --workers`` against a faulty endpoint is in tests/test_faults.py.
"""
from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from duckask import ask
from duckask.utils.config import load_settings
from duckask.utils.db.database import open_database
from duckask.utils.llm import ScriptedLLM


def _memory_limit(db) -> str:
    with db.cursor() as cur:
        return cur.execute("SELECT current_setting('memory_limit')").fetchone()[0]


def test_ask_from_8_threads_gives_each_its_own_answer(small_db, isolated_env):
    def one(i: int):
        sql = f"SELECT name, points + {i} AS p FROM players ORDER BY points DESC LIMIT {1 + i % 3}"
        llm = ScriptedLLM({"SQLGenerator": [sql]})
        r = ask(f"Which players score the most (variant {i})?", db=str(small_db), llm=llm)
        return i, r

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(one, range(16)))
    expected = open_database(small_db).run("SELECT name, points FROM players ORDER BY points DESC").df
    for i, r in results:
        assert r.status == "answered", (i, r.answer)
        assert r.sql.endswith(f"LIMIT {1 + i % 3}")
        assert r.df["name"].tolist() == expected["name"].tolist()[: 1 + i % 3]
        assert (r.df["p"] - i).tolist() == expected["points"].tolist()[: 1 + i % 3]


def test_queries_on_one_connection_run_side_by_side(small_db, isolated_env):
    db = open_database(small_db)
    start = threading.Barrier(8)

    def one(i: int):
        start.wait()
        return db.run(f"SELECT {i} AS i, count(*) AS n FROM range(2000000) r, players p")

    with ThreadPoolExecutor(max_workers=8) as pool:
        outs = list(pool.map(one, range(8)))
    assert [o.df.values.tolist()[0][0] for o in outs] == list(range(8))
    assert len({o.df.values.tolist()[0][1] for o in outs}) == 1


def test_a_memory_limit_chosen_later_is_honoured(small_db, isolated_env):
    first = open_database(small_db, load_settings(None, memory_limit="1GB"))
    assert _memory_limit(first).startswith("953")            # 1 GB = 953.6 MiB
    later = open_database(small_db, load_settings(None, memory_limit="256MB"))
    assert later is first                                    # still one shared connection ...
    assert _memory_limit(later).startswith("244")           # ... now with the later caller's limit
    out = later.run("SELECT count(*) AS n FROM players")
    assert out.ok


def test_reopening_waits_for_a_running_query(small_db, isolated_env):
    db = open_database(small_db, load_settings(None, memory_limit="1GB"))
    result = {}

    def slow():
        result["out"] = db.run("SELECT count(*) AS n FROM range(300000000) r", timeout_s=20)

    t = threading.Thread(target=slow)
    t.start()
    time.sleep(0.2)
    open_database(small_db, load_settings(None, memory_limit="512MB"))   # waits for ``slow`` to end
    t.join()
    assert result["out"].ok and result["out"].df.values.tolist() == [[300000000]]
    assert _memory_limit(db).startswith("488")
