"""The security probe of ``duckask serve`` (issue 30) as an attack table, against a real uvicorn on 127.0.0.1
(``live_server``): each row is one attack on a server with writes on and no API keys, where a person's page
("the victim") has a write pending. Every row asserts the refusal (status and reason) and that nothing
changed: the database file's bytes, the audit log's entries, and the pending card, which its own page can
still decide afterwards with its token.

Then the attacks that need more than one request: a chunked body far over the limit (the server reads no
more than about the limit, and answers before the body is all sent), a proposer filling the pending writes
(no one else's card is pushed out; an old card expires, decided by no one), what ``/api/health`` and
``/docs`` show, and a body that is not UTF-8 on every POST route."""
# ruff: noqa: F811  (pytest fixtures are imported from server_attack_support and used as parameters by name)
from __future__ import annotations

import json

import pytest
from conftest import sha256

pytest.importorskip("fastapi", reason="the server extra is not installed (pip install 'duckask[server]')")
httpx = pytest.importorskip("httpx", reason="httpx is in the test extra")

from server_attack_support import ATTACKS, DELETE, EVIL, VICTIM, fill, serve  # noqa: E402, F401 (after importorskip; fixtures used by name)

from duckask.utils.access.roles import add_user, load_users  # noqa: E402
from duckask.utils.writes.audit import AuditLog  # noqa: E402

pytestmark = pytest.mark.slow        # a real uvicorn server: not in the fast set (pytest -m "" runs it)


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_attack_is_refused_and_changes_nothing(serve, attack):
    s = serve()
    proposed = s.page("/api/sql", {"sql": DELETE})
    assert proposed.status_code == 200, proposed.text
    card = proposed.json()["write"]
    ctx = {"port": s.port, "id": card["id"], "token": card["approval_token"], "origin": s.origin,
           "session": VICTIM}
    before = s.state()
    headers = fill(attack.headers, ctx)
    if attack.raw is not None:
        headers.setdefault("Content-Type", "application/json")
        r = httpx.request(attack.method, f"{s.url}{fill(attack.path, ctx)}", headers=headers, timeout=30,
                          content=fill(attack.raw.decode("latin-1"), ctx).encode("latin-1"))
    else:
        r = s.request(attack.method, fill(attack.path, ctx), fill(attack.body, ctx), headers)
    assert r.status_code == attack.status, r.text
    assert r.headers["content-type"].startswith("application/json")
    assert fill(attack.says, ctx) in r.json()["error"]
    assert s.state() == before                                      # the file's bytes and the audit, as they were
    assert list(s.pending.cards) == [card["id"]]                    # the card still waits ...
    done = s.page(f"/api/writes/{card['id']}", {"decision": "reject", "approval_token": card["approval_token"]})
    assert done.json()["status"] == "rejected" and sha256(s.db) == before[0]   # ... and its own page decides it


def test_the_pages_own_click_approves_and_the_token_works_once(serve):
    s = serve()
    card = s.page("/api/sql", {"sql": DELETE}).json()["write"]
    assert "approval_token" not in json.dumps(s.request("GET", "/api/writes").json())   # never listed
    body = {"decision": "approve", "approval_token": card["approval_token"]}
    done = s.page(f"/api/writes/{card['id']}", body)
    assert done.status_code == 200 and done.json()["status"] == "written"
    assert s.page(f"/api/writes/{card['id']}", body).status_code == 404                   # once
    (entry,) = AuditLog(s.audit).entries()
    assert (entry["decision"], entry["outcome"], entry["session"]) == ("approved", "committed", VICTIM)


def test_a_client_without_fetch_metadata_approves_with_origin_and_token(serve):
    """A script (no Sec-Fetch-Site) proves the same with an Origin equal to the server's own and the token."""
    s = serve()
    card = s.request("POST", "/api/sql", {"sql": DELETE}).json()["write"]
    decision = {"decision": "approve", "approval_token": card["approval_token"]}
    r = s.request("POST", f"/api/writes/{card['id']}", decision, headers={"Origin": s.origin})
    assert r.json()["status"] == "written"


def test_allowed_host_and_cors_origin(serve):
    """--allowed-host adds a name; a --cors-origin page may propose but, without keys, never decide."""
    s = serve(allowed_hosts=("duckask.internal", "other.internal:9"), cors_origins=("http://app.example",))
    assert s.request("GET", "/api/schema", headers={"Host": "duckask.internal"}).status_code == 200
    assert s.request("GET", "/api/schema", headers={"Host": f"duckask.internal:{s.port}"}).status_code == 200
    assert s.request("GET", "/api/schema", headers={"Host": "other.internal:9"}).status_code == 200
    assert s.request("GET", "/api/schema", headers={"Host": f"other.internal:{s.port}"}).status_code == 421
    assert s.request("GET", "/api/schema", headers={"Host": f"[::1]:{s.port}"}).status_code == 200
    assert s.request("GET", "/api/schema", headers={"Host": f"LocalHost:{s.port}"}).status_code == 200
    cross = {"Origin": "http://app.example", "Sec-Fetch-Site": "cross-site", "X-Duckask-Session": "app"}
    card = s.request("POST", "/api/sql", {"sql": DELETE}, headers=cross).json()["write"]
    before = s.state()
    decision = {"decision": "approve", "approval_token": card["approval_token"]}
    r = s.request("POST", f"/api/writes/{card['id']}", decision, headers=cross)
    assert r.status_code == 403 and "own page" in r.json()["error"] and s.state() == before


def test_with_keys_the_key_and_role_decide_and_any_host_is_served(serve, tmp_path):
    """A server with keys (bound anywhere) serves any Host; the Origin check still holds, and an approver's
    key decides without a token (four-eyes and roles as before)."""
    f = tmp_path / "users.yaml"
    keys = {n: add_user(f, n, r) for n, r in [("paul", "proposer"), ("ann", "approver")]}
    s = serve(users=load_users(f))
    bearer = {n: {"Authorization": f"Bearer {k}"} for n, k in keys.items()}
    assert s.request("GET", "/api/schema", headers={"Host": "duckask.example.com", **bearer["paul"]}).status_code == 200
    card = s.request("POST", "/api/sql", {"sql": DELETE}, headers=bearer["paul"]).json()["write"]
    before = s.state()
    r = s.request("POST", f"/api/writes/{card['id']}", {"decision": "approve"},
                  headers={**bearer["ann"], "Origin": f"http://{EVIL}"})
    assert r.status_code == 403 and "may not change" in r.json()["error"] and s.state() == before
    assert s.request("POST", f"/api/writes/{card['id']}", {"decision": "approve"},
                     headers=bearer["paul"]).status_code == 403                     # a proposer's token is no key
    r = s.request("POST", f"/api/writes/{card['id']}", {"decision": "approve"}, headers=bearer["ann"])
    assert r.json()["status"] == "written" and AuditLog(s.audit).entries()[0]["decided_by"] == "ann"
