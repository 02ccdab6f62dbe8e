"""Issue 43, findings 4 and 5, against two real ``duckask serve`` processes on one PostgreSQL state: who a user
is and which database a card is for are identities two servers cannot share by accident.

- Each server has its own users file with its own "rita" (another key): the second server's rita neither reads,
  continues nor deletes the first's thread (threads are keyed by the key, ``access.User.id``), and does not see,
  withdraw or approve her pending write.
- Each server is started in its own directory with the same relative ``--db shop.duckdb``: two files. A card
  proposed on the first is neither listed nor approved on the second (cards carry the file's identity,
  ``database.file_identity``); the second file's bytes, the first file's bytes and the audit stay as they were.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import duckdb
import pytest
import yaml
from conftest import build_small_db, sha256

pytest.importorskip("fastapi", reason="the server extra is not installed (pip install 'duckask[server]')")
httpx = pytest.importorskip("httpx", reason="httpx is in the test extra")

from openai_stub import StubOpenAI, free_port  # noqa: E402

from duckask.utils.access.roles import add_user  # noqa: E402
from duckask.utils.config import load_settings  # noqa: E402
from duckask.utils.state import audit_log  # noqa: E402

pytestmark = pytest.mark.slow          # real server processes and a PostgreSQL server

DUCKASK = Path(sys.executable).parent / "duckask"
CONFIG = "router: rules\nfollow_ups: rules\nclarify: 'off'\ngrader: 'off'\nanalyzer: rules\ncandidates: 0\n" \
         "confidence_drafts: 0\nplan_path: 'off'\n"


def _reply(body: dict) -> str:
    return "```sql\nSELECT count(*) AS players FROM players\n```"


class Server:
    """``duckask serve --db shop.duckdb`` started in ``home`` with its own users file (rita: proposer, ann:
    approver), on the shared ``state``."""

    def __init__(self, home: Path, state: str, stub: StubOpenAI):
        home.mkdir(parents=True, exist_ok=True)
        build_small_db(home / "shop.duckdb")
        (home / "config.yaml").write_text(CONFIG)
        users = home / "users.yaml"
        self.keys = {name: add_user(users, name, role) for name, role in (("rita", "proposer"), ("ann", "approver"))}
        self.home, self.port = home, free_port()
        env = {**os.environ, "DUCKASK_BASE_URL": stub.base_url, "DUCKASK_API_KEY": "stub",
               "DUCKASK_CONFIG": str(home / "config.yaml"), "DUCKASK_CACHE_DIR": str(home / "cache")}
        self.log = open(home / "serve.log", "w")
        self.proc = subprocess.Popen([str(DUCKASK), "serve", "--db", "shop.duckdb", "--port", str(self.port),
                                      "--users", str(users), "--allow-writes", "--state", state],
                                     cwd=home, env=env, stdout=subprocess.DEVNULL, stderr=self.log)
        self.url = f"http://127.0.0.1:{self.port}"
        until = time.monotonic() + 180
        while time.monotonic() < until and self.proc.poll() is None:
            try:
                if httpx.get(f"{self.url}/api/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.2)
        raise RuntimeError(f"duckask serve in {home} did not start: {(home / 'serve.log').read_text()[-3000:]}")

    def call(self, method: str, path: str, user: str, **kw) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.keys[user]}", "X-Duckask-Session": "tab-1", **kw.pop("headers", {})}
        return httpx.request(method, self.url + path, headers=headers, timeout=120, **kw)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


@pytest.fixture
def servers(postgres, tmp_path):
    state = postgres.create_database(f"state_{uuid.uuid4().hex[:12]}")
    stub = StubOpenAI(responder=_reply).start()
    started: list[Server] = []
    try:
        for name in ("a", "b"):
            started.append(Server(tmp_path / name, state, stub))
        yield started[0], started[1], state
    finally:
        for s in started:
            s.stop()
        stub.stop()


def test_another_servers_user_of_the_same_name_is_another_person(servers):
    a, b, _ = servers
    asked = a.call("POST", "/api/ask", "rita", json={"question": "How many players are there?", "thread": True})
    assert asked.status_code == 200 and asked.json()["rows"] == [[6]], asked.text
    mine = a.call("GET", "/api/thread", "rita").json()["turns"]
    assert [t["question"] for t in mine] == ["How many players are there?"]
    assert b.call("GET", "/api/thread", "rita").json()["turns"] == []                 # not read ...
    assert b.call("DELETE", "/api/thread", "rita").json() == {"turns": []}              # ... not deleted ...
    b.call("POST", "/api/ask", "rita", json={"question": "How many players are there? (b)", "thread": True})
    assert [t["question"] for t in a.call("GET", "/api/thread", "rita").json()["turns"]] == [
        "How many players are there?"]                                                  # ... not continued

    card = a.call("POST", "/api/sql", "rita", json={"sql": "DELETE FROM players WHERE id = 1"}).json()["write"]
    assert b.call("GET", "/api/writes", "rita").json()["pending"] == []                  # not another rita's card
    r = b.call("POST", f"/api/writes/{card['id']}", "rita", json={"decision": "reject"})
    assert r.status_code == 404                                      # the other file's card: not this server's
    assert [c["id"] for c in a.call("GET", "/api/writes", "rita").json()["pending"]] == [card["id"]]
    r = a.call("POST", f"/api/writes/{card['id']}", "rita", json={"decision": "reject"})
    assert r.status_code == 200 and r.json()["status"] == "rejected"                  # her own, withdrawn by her


def test_a_card_is_decided_only_where_its_file_is(servers):
    a, b, state = servers
    before = {s.home.name: sha256(s.home / "shop.duckdb") for s in (a, b)}
    card = a.call("POST", "/api/sql", "rita", json={"sql": "DELETE FROM players WHERE id = 1"}).json()["write"]
    entries = audit_log(load_settings(None, state=state, cache_dir=str(a.home / "cache"))).entries()
    assert [(e["id"], e["db"], e["decision"]) for e in entries] == [
        (card["id"], str((a.home / "shop.duckdb").resolve()), "pending")]
    assert b.call("GET", "/api/writes", "ann").json()["pending"] == []               # an approver of the other file
    r = b.call("POST", f"/api/writes/{card['id']}", "ann", json={"decision": "approve"})
    assert r.status_code == 404, r.text
    assert {s.home.name: sha256(s.home / "shop.duckdb") for s in (a, b)} == before   # neither file changed
    assert audit_log(load_settings(None, state=state, cache_dir=str(a.home / "cache"))).entries() == entries
    done = a.call("POST", f"/api/writes/{card['id']}", "ann", json={"decision": "approve"})
    assert done.status_code == 200 and done.json()["status"] == "written", done.text
    with duckdb.connect(str(a.home / "shop.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM players").fetchone() == (5,)
    assert sha256(b.home / "shop.duckdb") == before["b"]


def test_a_server_knows_users_only_by_their_own_file(tmp_path):
    """The users files hold other keys for the same names: a key of one file is unknown to the other server."""
    from duckask.utils.access.roles import load_users

    one, two = tmp_path / "one.yaml", tmp_path / "two.yaml"
    k1, k2 = add_user(one, "rita", "reader"), add_user(two, "rita", "reader")
    u1, u2 = load_users(one), load_users(two)
    assert u1.find(k1).id != u2.find(k2).id and u1.find(k2) is None and u2.find(k1) is None
    assert u1.find(k1).id.startswith("key:") and yaml.safe_load(one.read_text())["users"][0]["key_sha256"] not in \
        u1.find(k1).id                                      # derived from the hash, not the hash itself
