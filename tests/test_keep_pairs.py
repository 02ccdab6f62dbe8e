"""Keeping checked answers over HTTP (issue 45, ``POST /api/examples`` in ``utils/app/server_actions.py``,
``utils/knowledge/keep.py``) against real uvicorn servers on 127.0.0.1: a pair kept from the page answers the next
question like it from a template (no model call); a fix that does not run, a write or an empty result is refused
and nothing is kept; with users a reader may not keep, a proposer's pair waits for an approver, and every kept
pair is in the audit log with who kept it; on an open server only the server's own page keeps pairs; on one shared
Postgres state, a correction kept through one server is used by the next matching question on the other."""
from __future__ import annotations

import uuid

import live_server
import pytest
from conftest import build_small_db

from duckask.utils.config import load_settings
from duckask.utils.llm import ScriptedLLM
from duckask.utils.state import audit_log

pytest.importorskip("fastapi", reason="the server extra is not installed (pip install 'duckask[server]')")
httpx = pytest.importorskip("httpx", reason="httpx is in the test extra")

from duckask.utils.access.roles import add_user, load_users  # noqa: E402
from duckask.utils.app.server import create_app  # noqa: E402

pytestmark = pytest.mark.slow        # real uvicorn servers: not in the fast set (pytest -m "" runs it)

LAKERS_Q = "What are the points of Lakers players?"
WRONG_SQL = "SELECT name, points FROM players ORDER BY points DESC"          # every player: the Lakers dropped
FIX_SQL = ("SELECT p.name, p.points FROM players p JOIN teams t ON p.team_id = t.id WHERE t.name = 'Lakers' "
           "ORDER BY p.points DESC")
CELTICS_Q = "What are the points of Celtics players?"


def _settings(tmp_path, state=None):
    return load_settings(None, cache_dir=str(tmp_path / "cache"), state=state, analyzer="rules")


def _ask(url, question, headers=None):
    return httpx.post(f"{url}/api/ask", json={"question": question}, headers=headers or {}, timeout=60).json()


def _keep(url, question, sql, headers=None):
    return httpx.post(f"{url}/api/examples", json={"question": question, "sql": sql}, timeout=60,
                      headers={"Origin": url, **(headers or {})})


@pytest.fixture
def server(tmp_path):
    started = []

    def start(llm=None, state=None, **more):
        db = tmp_path / "nba.duckdb"
        if not db.exists():
            build_small_db(db)
        url, s = live_server.start(create_app(str(db), llm=llm or ScriptedLLM({}), settings=_settings(tmp_path, state),
                                              **more))
        started.append(s)
        return url

    yield start
    for s in started:
        s.should_exit = True


def test_wrong_then_fixed_on_the_page_and_the_next_team_comes_from_the_fix(server, tmp_path):
    url = server(ScriptedLLM({"SQLGenerator": [WRONG_SQL] * 6}))
    first = _ask(url, LAKERS_Q)
    assert first["path"] == "sql" and len(first["rows"]) == 6                 # the model's answer: every player
    kept = _keep(url, LAKERS_Q, FIX_SQL)
    assert kept.status_code == 200 and kept.json()["status"] == "kept" and kept.json()["example_id"]
    [entry] = audit_log(_settings(tmp_path)).entries()
    assert (entry["kind"], entry["decision"], entry["outcome"], entry["request"], entry["sql"]) == \
        ("example", "approved", "committed", LAKERS_Q, FIX_SQL)
    assert entry["user"] == entry["decided_by"] == "http 127.0.0.1"
    nxt = _ask(url, CELTICS_Q)                                                 # no model call: the fix's template
    assert nxt["path"] == "template" and nxt["rows"] == [["Jayson Tatum", 28], ["Jaylen Brown", 22]]
    assert nxt["template"]["pair"]["id"] == kept.json()["example_id"] and nxt["llm_calls"] == []
    assert nxt["confidence"]["level"] == "high"


@pytest.mark.parametrize("sql, why", [
    ("SELECT name FROM players WHERE points > 100", "returns no rows"),
    ("SELECT nme FROM players", "does not run"),
    ("DELETE FROM players", "does not run"),
])
def test_a_fix_that_does_not_answer_is_refused_and_nothing_is_kept(server, tmp_path, sql, why):
    url = server()
    r = _keep(url, LAKERS_Q, sql)
    assert r.status_code == 400 and why in r.json()["error"]
    assert audit_log(_settings(tmp_path)).entries() == []
    count = httpx.post(f"{url}/api/sql", json={"sql": "SELECT count(*) FROM players"}, timeout=30).json()
    assert count["rows"] == [[6]]


def test_bad_bodies_say_what_was_wrong(server):
    url = server()
    assert _keep(url, "", FIX_SQL).status_code == 422
    r = httpx.post(f"{url}/api/examples", content=b'{"question": "x"}', headers={"Origin": url}, timeout=30)
    assert r.status_code == 415 and "Content-Type: application/json" in r.json()["error"]


def test_an_open_server_keeps_pairs_only_from_its_own_page(server):
    url = server()
    r = httpx.post(f"{url}/api/examples", json={"question": LAKERS_Q, "sql": FIX_SQL}, timeout=30)  # no Origin
    assert r.status_code == 403 and "own page" in r.json()["error"]
    evil = httpx.post(f"{url}/api/examples", json={"question": LAKERS_Q, "sql": FIX_SQL}, timeout=30,
                      headers={"Origin": "http://evil.example"})
    assert evil.status_code == 403


def test_roles_a_reader_may_not_keep_a_proposer_suggests_an_approver_keeps(server, tmp_path):
    users = tmp_path / "users.yaml"
    keys = {name: add_user(users, name, role) for name, role in
            (("rita", "reader"), ("pat", "proposer"), ("ann", "approver"))}
    url = server(users=load_users(users))

    def auth(name):
        return {"Authorization": f"Bearer {keys[name]}"}

    r = _keep(url, LAKERS_Q, FIX_SQL, auth("rita"))
    assert r.status_code == 403 and "rita is a reader" in r.json()["error"]
    s = _keep(url, LAKERS_Q, FIX_SQL, auth("pat"))
    assert s.status_code == 200 and s.json()["status"] == "suggested" and s.json()["example_id"] is None
    assert _ask(url, CELTICS_Q, auth("ann"))["path"] != "template"              # a suggestion is not kept
    mine = httpx.get(f"{url}/api/examples/suggested", headers=auth("pat"), timeout=30).json()["suggested"]
    assert [x["question"] for x in mine] == [LAKERS_Q]
    assert httpx.get(f"{url}/api/examples/suggested", headers=auth("rita"), timeout=30).json()["suggested"] == []
    entry = s.json()["audit_id"]
    no = httpx.post(f"{url}/api/examples/suggested/{entry}", json={"decision": "keep"}, headers=auth("pat"), timeout=30)
    assert no.status_code == 403 and "needs approver" in no.json()["error"]
    ok = httpx.post(f"{url}/api/examples/suggested/{entry}", json={"decision": "keep"}, headers=auth("ann"), timeout=30)
    assert ok.status_code == 200 and ok.json()["status"] == "kept"
    again = httpx.post(f"{url}/api/examples/suggested/{entry}", json={"decision": "keep"}, headers=auth("ann"),
                       timeout=30)
    assert again.status_code == 404                                            # decided once
    [e] = audit_log(_settings(tmp_path)).entries()
    assert (e["user"], e["decided_by"], e["decision"], e["outcome"]) == ("pat", "ann", "approved", "committed")
    assert _ask(url, CELTICS_Q, auth("rita"))["path"] == "template"             # kept: it serves every user
    direct = _keep(url, "How many teams are there?", "SELECT count(*) FROM teams", auth("ann"))
    assert direct.json()["status"] == "kept"
    assert audit_log(_settings(tmp_path)).entries()[0]["user"] == "ann"


def test_a_correction_kept_on_one_server_is_used_by_the_other(server, postgres):
    state = postgres.create_database(f"state_{uuid.uuid4().hex[:12]}")
    a, b = server(state=state), server(ScriptedLLM({}), state=state)
    assert _keep(a, LAKERS_Q, FIX_SQL).json()["status"] == "kept"
    r = _ask(b, CELTICS_Q)
    assert r["path"] == "template" and r["rows"] == [["Jayson Tatum", 28], ["Jaylen Brown", 22]]
