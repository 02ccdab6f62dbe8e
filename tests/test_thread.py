"""The page's thread (issue 36; ``utils/state/threads.py``, ``/api/thread``, ``/api/browse``): turns with
``"thread": true`` join this session's thread, a follow-up is resolved against it, a reload gets it back, a
new thread starts empty, another session never sees it, and it stays bounded."""
from __future__ import annotations

import pytest

pytest.importorskip("fastapi", reason="the server extra is not installed (pip install 'duckask[server]')")
from fastapi.testclient import TestClient

from duckask.data.lahman import demo_db_path
from duckask.utils.app.server import create_app
from duckask.utils.llm.scripted import ScriptedLLM
from duckask.utils.state.threads import MemoryThreads, ThreadsFull

A, B = {"X-Duckask-Session": "tab-a"}, {"X-Duckask-Session": "tab-b"}


def _sql(messages) -> str:
    text = messages[-1]["content"].split("Question:")[-1]
    if "teams" in text:
        return "SELECT count(*) AS teams FROM teams WHERE year_id = 2019"
    year = "2018" if "2018" in text else "2019"
    return ("SELECT p.name_first || ' ' || p.name_last AS player, b.hr FROM batting b JOIN people p USING (player_id) "
            f"WHERE b.year_id = {year} ORDER BY b.hr DESC LIMIT 1")


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    llm = ScriptedLLM({"SQLGenerator": _sql, "PlanQuery": [RuntimeError("no plan here")]})
    app = create_app(str(demo_db_path()), llm=llm, cache_dir=str(tmp_path_factory.mktemp("c")), router="rules",
                     follow_ups="rules", grader="off", analyzer="rules", plan_path="off")
    with TestClient(app, base_url="http://127.0.0.1") as c:
        yield c


def ask(client, question, headers=A, thread=True):
    r = client.post("/api/ask", json={"question": question, "thread": thread}, headers=headers)
    assert r.status_code == 200, r.text
    return r.json()


def test_a_three_turn_thread_with_a_follow_up_survives_a_reload(client):
    client.delete("/api/thread", headers=A)
    first = ask(client, "Who hit the most home runs in 2019?")
    second = ask(client, "and in 2018?")
    third = ask(client, "How many teams played in 2019?")
    assert first["rows"] == [["Pete Alonso", 53]]
    assert second["resolved_question"] == "Who hit the most home runs in 2018?" and second["rows"][0][1] == 48
    assert third["rows"] == [[30]]
    turns = client.get("/api/thread", headers=A).json()["turns"]        # what a reload draws
    assert [t["question"] for t in turns] == ["Who hit the most home runs in 2019?", "and in 2018?",
                                              "How many teams played in 2019?"]
    assert turns[1]["resolved_question"] == "Who hit the most home runs in 2018?" and turns[2]["rows"] == [[30]]
    assert client.get("/api/thread", headers=B).json()["turns"] == []    # another session: its own thread
    ask(client, "How many teams played in 2019?", thread=False)           # not a thread turn: not kept
    assert len(client.get("/api/thread", headers=A).json()["turns"]) == 3
    assert client.delete("/api/thread", headers=A).json() == {"turns": []}
    assert client.get("/api/thread", headers=A).json()["turns"] == []
    alone = ask(client, "and in 2018?")                                    # nothing to follow: asked as it is
    assert alone["resolved_question"] in (None, "and in 2018?")


def test_browse_offers_taught_questions_and_the_metrics(client):
    got = client.get("/api/browse", headers=A).json()
    assert got["suggestions"][0] == "Who hit the most home runs in a single season?"       # a taught pair first
    assert "What are the home runs by year?" in got["suggestions"] and len(got["suggestions"]) <= 6
    home_runs = next(m for m in got["metrics"] if m["name"] == "home_runs")
    assert home_runs["label"] == "home runs" and home_runs["formula"] == "sum of batting.hr"
    assert "batting" in got["tables"]


def test_threads_stay_bounded():
    now = [0.0]
    threads = MemoryThreads(max_threads=3, max_turns=3, max_age_s=10, clock=lambda: now[0], max_user_threads=2)
    for i in range(5):
        threads.add(("u", "s1"), {"text": str(i)}, {"question": str(i), "rows": [[j] for j in range(500)]})
    assert [t["question"] for t in threads.shown(("u", "s1"))] == ["2", "3", "4"]       # the newest turns
    assert len(threads.shown(("u", "s1"))[0]["rows"]) == 200                           # rows cut for drawing
    assert [t["text"] for t in threads.history(("u", "s1"), last=2)] == ["3", "4"]
    threads.add(("u", "s2"), {}, {"question": "x"})
    threads.add(("u", "s3"), {}, {"question": "y"})
    assert threads.shown(("u", "s1")) == []                            # the asker's own least recently used went
    now[0] = 11
    assert threads.history(("u", "s3")) == []                                           # quiet too long


# -- issue 43, finding 6: bounded in bytes and per asker; one asker never pushes out another's thread ---------
def test_a_huge_turn_is_kept_cut_to_the_byte_cap_with_its_rows_counted():
    from duckask.utils.state.threads import CELL_CHARS, MAX_TURN_BYTES, size

    threads = MemoryThreads()
    cell = "x" * 2_000_000                                    # SQL typed into the question box: 40 MB a turn before
    shown = {"question": "q" * 5000, "sql": "SELECT " + "y" * 100_000, "row_count": 200,
             "rows": [[cell, i] for i in range(200)], "columns": [f"c{i}" for i in range(20_000)]}
    threads.add(("u", "s"), {"text": "q", "rows": [[cell]] * 3}, shown)
    (kept,) = threads.shown(("u", "s"))
    assert size(kept) <= MAX_TURN_BYTES and size(threads.history(("u", "s"))[0]) <= MAX_TURN_BYTES
    assert kept["rows_kept"] == len(kept["rows"]) < 200 and kept["row_count"] == 200      # the rest counted
    assert len(kept["rows"][0][0]) == CELL_CHARS and kept["rows"][0][0].endswith("…")
    assert len(kept["question"]) == CELL_CHARS and kept["rows"][1] == [cell[:CELL_CHARS - 1] + "…", 1]


def test_a_thread_keeps_its_newest_turns_within_its_byte_cap():
    threads = MemoryThreads(max_thread_bytes=30_000)
    for i in range(10):
        threads.add(("u", "s"), {"text": str(i)}, {"question": str(i), "answer": "a" * 900,
                                                    "rows": [["b" * 900] for _ in range(10)]})
    kept = [t["question"] for t in threads.shown(("u", "s"))]
    assert kept == [str(i) for i in range(10 - len(kept), 10)] and 1 <= len(kept) < 10


def test_reading_makes_no_thread_and_one_asker_never_evicts_another():
    threads = MemoryThreads(max_threads=4, max_user_threads=2)
    threads.add(("rita", "tab"), {"text": "mine"}, {"question": "mine"})
    for i in range(505):                                    # the probe: 505 GETs with fresh session ids
        assert threads.shown(("mallory", f"s{i}")) == [] and threads.history(("mallory", f"s{i}")) == []
    for i in range(50):                                     # and 50 questions in fresh sessions
        threads.add(("mallory", f"q{i}"), {}, {"question": "hi"})
    assert [t["question"] for t in threads.shown(("rita", "tab"))] == ["mine"]        # untouched
    assert len([k for k in threads._threads if k[0] == "mallory"]) == 2                # only their own went
    threads.add(("bo", "a"), {}, {"question": "b1"})
    with pytest.raises(ThreadsFull):                        # full: a fifth thread is not kept, nobody's goes
        threads.add(("cy", "a"), {}, {"question": "c1"})
    assert threads.shown(("rita", "tab")) and threads.shown(("bo", "a"))


def test_gets_with_fresh_sessions_over_http_leave_another_sessions_thread(client):
    client.delete("/api/thread", headers=A)
    ask(client, "How many teams played in 2019?")
    for i in range(505):
        assert client.get("/api/thread", headers={"X-Duckask-Session": f"probe-{i}"}).json()["turns"] == []
    assert [t["question"] for t in client.get("/api/thread", headers=A).json()["turns"]] == [
        "How many teams played in 2019?"]


def test_a_turn_the_thread_store_cannot_keep_still_answers_and_says_so(client, monkeypatch):
    """The shared state going away after the answer was computed: the answer stands, ``thread_error`` says the
    turn was not kept (the page shows it beside the progress), nothing else fails."""
    from duckask.utils.state.postgres import StateError

    def lost(*_args):
        raise StateError("lost the shared state postgresql://duck:***@db/state: server closed the connection")

    client.delete("/api/thread", headers=B)
    monkeypatch.setattr(MemoryThreads, "add", lost)
    got = ask(client, "How many teams played in 2019?", headers=B)
    assert got["rows"] == [[30]] and got["thread_error"] == StateError.PUBLIC      # the setting, not its value
    assert "postgresql" not in got["thread_error"]
    monkeypatch.undo()
    assert client.get("/api/thread", headers=B).json()["turns"] == []
