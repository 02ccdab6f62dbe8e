"""One shared state for several servers (issue 35; ``utils/state``): taught pairs, the audit log and pending
writes in a live Postgres (``conftest.postgres``). Two servers on one state see the same cards, pairs and audit;
an approval through either decides once; a second approval is refused and never runs; the local files migrate
into it once. The load two real ``duckask serve`` processes put on it is ``bench/scale_out.py``."""
from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import live_server
import pytest
from conftest import build_small_db
from pg_support import PASSWORD

from duckask.utils.config import load_settings
from duckask.utils.knowledge.examples import Example
from duckask.utils.knowledge.shared import knowledge_store
from duckask.utils.knowledge.store import KnowledgeStore
from duckask.utils.llm import ScriptedLLM
from duckask.utils.state import audit_log, card_store
from duckask.utils.state.cards import Held, MemoryCards
from duckask.utils.state.migrate import migrate
from duckask.utils.writes.audit import AuditError, AuditLog
from duckask.utils.writes.card import WriteCard


@pytest.fixture
def state(postgres) -> str:
    """A fresh Postgres database for this test's state; its URL."""
    return postgres.create_database(f"state_{uuid.uuid4().hex[:12]}")


def _settings(tmp_path, url=None, **more):
    return load_settings(None, cache_dir=str(tmp_path / "cache"), state=url, **more)


def test_taught_pairs_are_shared_and_keyed_by_database(state, tmp_path):
    a, b = knowledge_store(_settings(tmp_path, state)), knowledge_store(_settings(tmp_path, state))
    first = a.add("/data/shop.duckdb", Example("How many teams?", "SELECT count(*) FROM teams", tables=["teams"]))
    again = b.add("/data/shop.duckdb", Example("how many TEAMS?", "SELECT count(id) FROM teams", tables=["teams"]))
    assert first == again                                              # the same question taught again: replaced
    (ex,) = a.list("/data/shop.duckdb")
    assert (ex.question, ex.sql, ex.tables) == ("how many TEAMS?", "SELECT count(id) FROM teams", ["teams"])
    assert a.list("/data/other.duckdb") == [] and not b.remove("/data/other.duckdb", first)
    assert b.remove("/data/shop.duckdb", first) and a.list("/data/shop.duckdb") == []


def test_a_decision_is_written_once_through_any_server(state, tmp_path):
    a, b = audit_log(_settings(tmp_path, state)), audit_log(_settings(tmp_path, state))
    entry = a.record(session="s", user="ann", db="/d.duckdb", tier=1, kind="DELETE", sql="DELETE FROM t",
                     decision="pending")
    b.update(entry, decision="approved", decided_by="bo")
    with pytest.raises(AuditError, match="already decided"):
        a.update(entry, decision="approved", decided_by="cy")
    with pytest.raises(AuditError, match="already decided"):
        a.update(entry, decision="rejected", decided_by="cy")
    a.update(entry, outcome="committed", actual_rows=2)                  # the outcome after the write: allowed
    (row,) = b.entries(db="/d.duckdb")
    assert (row["decision"], row["decided_by"], row["outcome"], row["actual_rows"]) == \
        ("approved", "bo", "committed", 2)
    assert b.entries(db="/other.duckdb") == []


def test_the_local_audit_file_also_decides_once(tmp_path):
    log = AuditLog(tmp_path / "audit.duckdb")
    entry = log.record(decision="pending", sql="DELETE FROM t")
    log.update(entry, decision="rejected")
    with pytest.raises(AuditError, match="already decided"):
        log.update(entry, decision="approved")
    assert log.entries()[0]["decision"] == "rejected"


def _at_once(calls: list) -> list:
    """Each call in its own thread, released together; their results."""
    start = threading.Barrier(len(calls))

    def run(call):
        start.wait()
        return call()

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(run, calls))


def _card(i: int, user: str = "ann", db: str = "/d.duckdb", db_id: str = "") -> Held:
    card = WriteCard(sql=f"DELETE FROM t WHERE id = {i}", tier=1, tier_name="T1", kind="DELETE", target="t",
                     reason="data change", db=db, session="s", user=user, checks_rows=True, id=i, estimated_rows=1,
                     db_id=db_id)
    return Held(card, "0" * 64, 1000.0 + i)


@pytest.mark.parametrize("where", ["memory", "postgres"])
def test_a_card_is_taken_by_exactly_one_of_many_racers(where, state, tmp_path):
    log = audit_log(_settings(tmp_path, state))
    ids = [log.record(decision="pending", sql=f"DELETE FROM t WHERE id = {i}") for i in range(3)]
    store = MemoryCards() if where == "memory" else card_store(_settings(tmp_path, state))
    no_room = lambda mine, total: "full" if mine >= 2 else None   # noqa: E731
    assert store.add_if_room(_card(ids[0]), no_room) is None and store.add_if_room(_card(ids[1]), no_room) is None
    assert store.add_if_room(_card(ids[2]), no_room) == "full" and store.counts("ann") == (2, 2)
    got = _at_once([lambda: store.take(ids[0])] * 8)
    assert [h.card.id for h in got if h] == [ids[0]] and got.count(None) == 7
    held = store.peek(ids[1])
    assert held.card.sql == f"DELETE FROM t WHERE id = {ids[1]}" and held.card.estimated_rows == 1
    assert store.take_older(0.0) == [] and [h.card.id for h in store.take_older(1e12)] == [ids[1]]
    assert store.all() == []


def test_a_server_sees_and_decides_only_its_own_databases_cards(state, tmp_path):
    from duckask.utils.app.pending import PendingWrites

    settings = _settings(tmp_path, state)
    log = audit_log(settings)
    mine, theirs = (log.record(decision="pending", sql="DELETE FROM t", db=d) for d in ("/a.duckdb", "/b.duckdb"))
    a, b = SimpleNamespace(identity="/a.duckdb#1:11"), SimpleNamespace(identity="/b.duckdb#1:12")
    here = PendingWrites(store=card_store(settings), database=a)
    other = PendingWrites(store=card_store(settings), database=b)
    here.add(_card(mine, db="/a.duckdb", db_id=a.identity).card)
    other.add(_card(theirs, db="/b.duckdb", db_id=b.identity).card)
    assert list(here.cards) == [mine] and list(other.cards) == [theirs]
    assert here.peek(theirs) is None and here.take(theirs) is None       # not this server's database: not taken
    assert other.take(theirs).card.id == theirs and here.take(mine).card.id == mine


def test_migrating_local_files_into_the_shared_state_copies_once(state, tmp_path):
    local = _settings(tmp_path)
    KnowledgeStore(local.resolved_knowledge_file).add("/d.duckdb", Example("Who won?", "SELECT 1", tables=["t"]))
    log = AuditLog(local.resolved_audit_file)
    first = log.record(session="s", user="ann", db="/d.duckdb", tier=1, kind="DELETE", sql="DELETE FROM t",
                       decision="pending")
    log.update(first, decision="approved", decided_by="bo")
    log.update(first, outcome="committed", actual_rows=1)
    log.record(session="s", user="ann", db="/d.duckdb", tier=3, kind="DROP", sql="DROP TABLE t", decision="blocked",
               outcome="not_run", detail="T3")
    assert migrate(local, state) == {"pairs": 1, "audit_added": 2, "audit_already_there": 0}
    assert migrate(local, state) == {"pairs": 1, "audit_added": 0, "audit_already_there": 2}   # again: nothing twice
    shared = _settings(tmp_path, state)
    (ex,) = knowledge_store(shared).list("/d.duckdb")
    assert (ex.question, ex.sql, ex.tables) == ("Who won?", "SELECT 1", ["t"])
    entries = audit_log(shared).entries()
    assert [(e["sql"], e["decision"], e["outcome"], e["decided_by"]) for e in entries] == [
        ("DROP TABLE t", "blocked", "not_run", None), ("DELETE FROM t", "approved", "committed", "bo")]
    assert entries[1]["proposed_at"] == log.entries()[1]["proposed_at"]          # times kept as they were


def test_a_bad_state_url_says_what_it_takes(tmp_path):
    from duckask.utils.config import SettingError

    with pytest.raises(SettingError, match="postgresql://user:password@host"):
        _settings(tmp_path, "mysql://root:s3cret@db/x")
    with pytest.raises(SettingError) as e:
        _settings(tmp_path, "mysql://root:s3cret@db/x")
    assert "s3cret" not in str(e.value)


# -- two servers on one state, over HTTP ----------------------------------------------------------------------
@pytest.mark.slow
def test_propose_on_one_server_approve_on_the_other_once(state, tmp_path):
    pytest.importorskip("fastapi", reason="the server extra is not installed (pip install 'duckask[server]')")
    import httpx

    from duckask.utils.app.server import create_app

    db = build_small_db(tmp_path / "nba.duckdb")
    settings = _settings(tmp_path, state)
    (a, sa), (b, sb) = [live_server.start(create_app(str(db), llm=ScriptedLLM({}), settings=settings,
                                                     allow_writes=True)) for _ in range(2)]
    session = {"X-Duckask-Session": "tab-1"}
    try:
        cards = [httpx.post(f"{a}/api/sql", json={"sql": f"DELETE FROM players WHERE id = {i}"}, headers=session,
                            timeout=30).json()["write"] for i in (1, 2)]
        listed = httpx.get(f"{b}/api/writes", timeout=30).json()["pending"]
        assert sorted(c["id"] for c in listed) == sorted(c["id"] for c in cards)   # B sees A's cards

        def decide(url, card):
            return httpx.post(f"{url}/api/writes/{card['id']}", timeout=30, headers={"Origin": url, **session},
                              json={"decision": "approve", "approval_token": card["approval_token"]})

        first = decide(b, cards[0])
        assert first.status_code == 200 and first.json()["status"] == "written"
        again = [decide(a, cards[0]), decide(b, cards[0])]
        assert [r.status_code for r in again] == [404, 404]              # decided: neither server runs it again
        out = _at_once([lambda u=u: decide(u, cards[1]) for u in (a, b, a, b)])
        assert sorted(r.status_code for r in out) == [200, 404, 404, 404]
        entries = audit_log(settings).entries()
        assert [(e["decision"], e["outcome"], e["actual_rows"]) for e in entries] == [("approved", "committed", 1)] * 2
        assert httpx.get(f"{a}/api/writes", timeout=30).json()["pending"] == []
        count = httpx.post(f"{b}/api/sql", json={"sql": "SELECT count(*) FROM players"}, timeout=30).json()
        assert count["rows"] == [[4]]                                    # 6 players, each delete ran once
    finally:
        sa.should_exit = sb.should_exit = True


@pytest.mark.slow
def test_two_serve_processes_under_load_decide_every_write_once(tmp_path):
    """The scale-out benchmark, short: two real ``duckask serve`` processes on one Postgres state (its own
    throwaway server), a stub model, 4 clients for 8 s; every proposed write in the audit, decided once, every
    question in its client's thread whichever server answered it, no request failed (bench/scale_out.py exits 1
    otherwise)."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    from pg_support import WHY_NOT, pg_binaries

    if pg_binaries() is None:
        pytest.skip(WHY_NOT)
    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "scale.json"
    p = subprocess.run([sys.executable, str(root / "bench" / "scale_out.py"), "--clients", "4", "--seconds", "8",
                        "--out", str(out)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0 and out.exists(), p.stdout + p.stderr[-4000:]
    summary = json.loads(out.read_text())
    assert summary["audit"]["ok"] and summary["audit"]["proposed"] > 0 and summary["errors"] == 0
    assert summary["threads"]["ok"] and summary["threads"]["turns_asked"] > 0     # every turn in its thread
    assert summary["latency_ms"]["ask"]["n"] > 0 and summary["servers"] == 2


def test_the_state_command_shows_and_migrates(state, isolated_env, tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    from conftest import clean_env

    env = clean_env(tmp_path)                        # a cache of this test's own (the session's is shared)
    duckask, local = str(Path(sys.executable).parent / "duckask"), load_settings(None, cache_dir=str(tmp_path))
    KnowledgeStore(local.resolved_knowledge_file).add("/d.duckdb", Example("Who won?", "SELECT 1", tables=["t"]))
    AuditLog(local.resolved_audit_file).record(sql="DELETE FROM t", decision="pending", db="/d.duckdb")

    def run(*args):
        return subprocess.run([duckask, "state", *args], capture_output=True, text=True, env=env, timeout=120)

    shown = run()
    assert shown.returncode == 0 and "local files" in shown.stdout and "(1 entries, 1 pending)" in shown.stdout
    assert run("migrate").returncode == 2
    moved = run("migrate", "--to", state)
    assert moved.returncode == 0 and "1 taught pairs, 1 audit entries" in moved.stdout
    assert "duck:***@" in moved.stdout and PASSWORD not in moved.stdout
    there = run("--state", state)
    assert there.returncode == 0 and "shared state" in there.stdout and "(1 entries, 1 pending)" in there.stdout
    bad = run("--state", "mysql://root:s3cret@db/x")
    assert bad.returncode == 1 and "postgresql://" in bad.stderr and "s3cret" not in bad.stderr


# -- the page's threads in the shared state ---------------------------------------------------------------------
def test_threads_in_the_shared_state_are_bounded_keyed_and_keep_no_token(state, tmp_path):
    from duckask.utils.state import shared_state, thread_store
    from duckask.utils.state.threads import PgThreads

    settings = _settings(tmp_path, state)
    now = [1000.0]
    a = PgThreads(shared_state(settings), "/d.duckdb", max_threads=5, max_turns=3, max_age_s=10, clock=lambda: now[0],
                  max_user_threads=2)
    other = thread_store(settings, "/other.duckdb")
    for i in range(5):
        a.add(("ann", "tab"), {"text": str(i)}, {"question": str(i), "rows": [[j] for j in range(500)],
                                                 "write": {"id": i, "approval_token": "secret-token"}})
    shown = a.shown(("ann", "tab"))
    assert [t["question"] for t in shown] == ["2", "3", "4"]                      # the newest turns
    assert len(shown[0]["rows"]) == 200 and shown[0]["write"] == {"id": 2}      # rows cut; the token never kept
    assert "secret-token" not in str(shown) and [t["text"] for t in a.history(("ann", "tab"))] == ["2", "3", "4"]
    assert [t["text"] for t in a.history(("ann", "tab"), last=2)] == ["3", "4"]      # what a follow-up reads
    assert other.shown(("ann", "tab")) == [] and a.shown(("bo", "tab")) == []   # keyed by database and asker
    now[0] = 1001
    a.add(("ann", "tab2"), {}, {"question": "x"})
    now[0] = 1002
    a.add(("ann", "tab3"), {}, {"question": "y"})
    assert a.shown(("ann", "tab")) == [] and [t["question"] for t in a.shown(("ann", "tab2"))] == ["x"]  # LRU went
    now[0] = 1013
    assert a.history(("ann", "tab3")) == []                                      # quiet too long: starts again
    a.add(("ann", "tab3"), {"text": "z"}, {"question": "z"})
    assert [t["question"] for t in a.shown(("ann", "tab3"))] == ["z"]
    a.clear(("ann", "tab3"))
    assert a.shown(("ann", "tab3")) == []


def test_shared_threads_are_bounded_in_bytes_and_per_asker_and_reads_make_none(state, tmp_path):
    """Issue 43, finding 6 on the shared state: 500 "hi" questions in fresh sessions erased every other user's
    threads, and SQL typed into the question box stored about 40 MB a turn."""
    from duckask.utils.state import shared_state
    from duckask.utils.state.threads import MAX_TURN_BYTES, PgThreads, ThreadsFull

    store = PgThreads(shared_state(_settings(tmp_path, state)), "/d.duckdb", max_threads=4, max_user_threads=2,
                      max_thread_bytes=60_000)
    store.add(("key:rita", "tab"), {"text": "mine"}, {"question": "mine"})
    for i in range(40):
        assert store.shown(("key:mallory", f"s{i}")) == []                     # a read makes no thread
        store.add(("key:mallory", f"q{i}"), {}, {"question": "hi"})
    assert [t["question"] for t in store.shown(("key:rita", "tab"))] == ["mine"]
    with store.state.transaction() as cur:
        cur.execute("SELECT asker, count(*) FROM duckask.threads GROUP BY asker ORDER BY asker")
        assert cur.fetchall() == [("key:mallory", 2), ("key:rita", 1)]
    store.add(("key:bo", "a"), {}, {"question": "b"})
    with pytest.raises(ThreadsFull):
        store.add(("key:cy", "a"), {}, {"question": "c"})
    cell = "x" * 2_000_000
    for i in range(4):
        store.add(("key:rita", "tab"), {"text": str(i), "rows": [[cell]] * 3},
                  {"question": str(i), "row_count": 200, "rows": [[cell, j] for j in range(200)]})
    turns = store.shown(("key:rita", "tab"))
    with store.state.transaction() as cur:
        cur.execute("SELECT max(bytes), sum(bytes) FROM duckask.thread_turns")
        biggest, total = cur.fetchone()
    assert biggest <= 2 * MAX_TURN_BYTES and total <= 60_000 + 2 * MAX_TURN_BYTES          # was about 40 MB a turn
    assert turns[-1]["question"] == "3" and turns[-1]["rows_kept"] < 200


def test_turns_of_one_thread_on_two_servers_at_once_all_land(state, tmp_path):
    from duckask.utils.state import thread_store

    stores = [thread_store(_settings(tmp_path, state), "/d.duckdb") for _ in range(2)]
    _at_once([lambda i=i: stores[i % 2].add(("ann", "tab"), {"text": str(i)}, {"question": str(i)})
              for i in range(8)])
    assert sorted(t["question"] for t in stores[0].shown(("ann", "tab"))) == [str(i) for i in range(8)]


@pytest.mark.slow
def test_a_follow_up_sent_to_the_other_server_continues_the_thread(state, tmp_path):
    pytest.importorskip("fastapi", reason="the server extra is not installed (pip install 'duckask[server]')")
    import httpx
    from test_thread import _sql

    from duckask.data.lahman import demo_db_path
    from duckask.utils.app.server import create_app

    settings = _settings(tmp_path, state, router="rules", follow_ups="rules", grader="off", analyzer="rules",
                         plan_path="off")
    llm = ScriptedLLM({"SQLGenerator": _sql, "PlanQuery": [RuntimeError("no plan here")]})
    (a, sa), (b, sb) = [live_server.start(create_app(str(demo_db_path()), llm=llm, settings=settings))
                        for _ in range(2)]
    tab = {"X-Duckask-Session": "tab-1"}
    try:
        def ask(url, question):
            r = httpx.post(f"{url}/api/ask", json={"question": question, "thread": True}, headers=tab, timeout=60)
            assert r.status_code == 200, r.text
            return r.json()

        assert ask(a, "Who hit the most home runs in 2019?")["rows"] == [["Pete Alonso", 53]]
        second = ask(b, "and in 2018?")                                 # the balancer sent it to the other server
        assert second["resolved_question"] == "Who hit the most home runs in 2018?" and second["rows"][0][1] == 48
        turns = httpx.get(f"{a}/api/thread", headers=tab, timeout=30).json()["turns"]   # a reload, on server A
        assert [t["question"] for t in turns] == ["Who hit the most home runs in 2019?", "and in 2018?"]
        assert httpx.delete(f"{b}/api/thread", headers=tab, timeout=30).json() == {"turns": []}
        assert httpx.get(f"{a}/api/thread", headers=tab, timeout=30).json()["turns"] == []
    finally:
        sa.should_exit = sb.should_exit = True


def test_a_state_that_cannot_be_reached_is_a_503_that_names_the_setting_not_its_value(tmp_path):
    pytest.importorskip("fastapi", reason="the server extra is not installed (pip install 'duckask[server]')")
    pytest.importorskip("adbc_driver_postgresql", reason="the postgres extra is not installed")
    from urllib.parse import quote

    from fastapi.testclient import TestClient
    from openai_stub import free_port

    from duckask.utils.app.server import create_app

    url = f"postgresql://duck:{quote(PASSWORD, safe='')}@127.0.0.1:{free_port()}/state"     # nothing listens
    db = build_small_db(tmp_path / "nba.duckdb")
    app = create_app(str(db), llm=ScriptedLLM({}), settings=_settings(tmp_path, url))
    with TestClient(app, base_url="http://127.0.0.1") as c:
        for r in (c.get("/api/thread"), c.post("/api/ask", json={"question": "How many players?", "thread": True})):
            assert r.status_code == 503 and "shared state cannot be reached" in r.json()["error"]
            assert "--state" in r.json()["error"] and "127.0.0.1" not in r.text and "duck" not in r.text
            assert PASSWORD not in r.text and "s3cr3t" not in r.text
