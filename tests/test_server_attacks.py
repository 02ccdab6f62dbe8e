"""The security probe of ``duckask serve`` (issue 30) as an attack table, against a real uvicorn on 127.0.0.1
(``live_server``): each row is one attack on a server with writes on and no API keys, where a person's page
("the victim") has a write pending. Every row asserts the refusal (status and reason) and that nothing
changed: the database file's bytes, the audit log's entries, and the pending card, which its own page can
still decide afterwards with its token.

Then the attacks that need more than one request: a chunked body far over the limit (the server reads no
more than about the limit, and answers before the body is all sent), a proposer filling the pending writes
(no one else's card is pushed out; an old card expires, decided by no one), what ``/api/health`` and
``/docs`` show, and a body that is not UTF-8 on every POST route."""
from __future__ import annotations

import json
import select
import socket
from dataclasses import dataclass, field

import live_server
import pytest
from conftest import build_small_db, sha256

pytest.importorskip("fastapi", reason="the server extra is not installed (pip install 'duckask[server]')")
httpx = pytest.importorskip("httpx", reason="httpx is in the test extra")

from duckask.utils.app.server import MAX_BODY, create_app  # noqa: E402
from duckask.utils.db.access import add_user, load_users  # noqa: E402
from duckask.utils.db.audit import AuditLog  # noqa: E402
from duckask.utils.llm import ScriptedLLM  # noqa: E402

pytestmark = pytest.mark.slow        # a real uvicorn server: not in the fast set (pytest -m "" runs it)

DELETE = "DELETE FROM players WHERE team_id = 1"
EVIL = "evil.example"
VICTIM = "victim-tab"


class Site:
    """A server on a database and audit log of its own; ``own`` is what its page's requests carry."""

    def __init__(self, app, url, db, audit):
        self.app, self.url, self.db, self.audit = app, url, db, audit
        self.port = int(url.rsplit(":", 1)[1])
        self.origin = url
        self.own = {"Origin": url, "Sec-Fetch-Site": "same-origin"}

    def request(self, method, path, body=None, headers=None, **kw):
        return httpx.request(method, f"{self.url}{path}", json=body, headers=headers or {}, timeout=30, **kw)

    def page(self, path, body, session=VICTIM):
        """A request of the server's own page (as Chromium sends it)."""
        return self.request("POST", path, body, headers={**self.own, "X-Duckask-Session": session})

    def state(self) -> tuple[str, list[dict]]:
        return sha256(self.db), AuditLog(self.audit).entries()

    @property
    def pending(self):
        return self.app.state.pending_writes


@pytest.fixture
def serve(tmp_path, settings):
    servers = []

    def start(**more) -> Site:
        db = build_small_db(tmp_path / f"nba{len(servers)}.duckdb")
        audit = tmp_path / f"audit{len(servers)}.duckdb"
        app = create_app(str(db), llm=ScriptedLLM({}), settings=settings, allow_writes=True, audit_file=str(audit),
                         router="rules", analyzer="template", **more)
        url, server = live_server.start(app)
        servers.append(server)
        return Site(app, url, db, audit)

    yield start
    for s in servers:
        s.should_exit = True


@dataclass
class Attack:
    """One probe: ``method path`` with ``body`` and ``headers`` (``{port}``, ``{id}``, ``{token}``, ``{origin}``
    and ``{session}`` filled in from the victim's pending card); the refusal expected."""
    name: str
    method: str
    path: str
    status: int
    says: str
    body: dict | None = None
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None                 # a body sent as is (with Content-Type: application/json)


ATTACKS = [
    # finding 5: DNS rebinding: the attacker's page, its name now resolving to 127.0.0.1, sends its own Host
    Attack("rebinding: propose a write", "POST", "/api/sql", 421, "DNS rebinding", {"sql": DELETE},
           {"Host": f"{EVIL}:{{port}}", "Origin": f"http://{EVIL}:{{port}}", "Sec-Fetch-Site": "same-origin"}),
    Attack("rebinding: approve the pending write", "POST", "/api/writes/{id}", 421, "DNS rebinding",
           {"decision": "approve", "approval_token": "{token}"},
           {"Host": f"{EVIL}:{{port}}", "Origin": f"http://{EVIL}:{{port}}", "Sec-Fetch-Site": "same-origin",
            "X-Duckask-Session": "{session}"}),
    Attack("rebinding: read the schema", "GET", "/api/schema", 421, "DNS rebinding",
           headers={"Host": f"{EVIL}:{{port}}"}),
    Attack("rebinding: list the pending writes", "GET", "/api/writes", 421, "answers only to",
           headers={"Host": f"{EVIL}:{{port}}"}),
    Attack("rebinding: the page itself", "GET", "/", 421, "--allowed-host", headers={"Host": EVIL}),
    Attack("a loopback name on another port", "POST", "/api/sql", 421, "127.0.0.1:{port}", {"sql": DELETE},
           {"Host": "127.0.0.1:1"}),
    Attack("a name that ends like a loopback one", "POST", "/api/sql", 421, "DNS rebinding", {"sql": DELETE},
           {"Host": "127.0.0.1.evil.example:{port}"}),
    # finding 5: CSRF: a page of another site posts to the server's own name
    Attack("CSRF: another site proposes", "POST", "/api/sql", 403, "requests from http://evil.example may not change",
           {"sql": DELETE}, {"Origin": f"http://{EVIL}", "Sec-Fetch-Site": "cross-site"}),
    Attack("CSRF: another site approves", "POST", "/api/writes/{id}", 403, "may not change anything",
           {"decision": "approve", "approval_token": "{token}"},
           {"Origin": f"http://{EVIL}", "Sec-Fetch-Site": "cross-site", "X-Duckask-Session": "{session}"}),
    Attack("CSRF: another local app (localhost:3000)", "POST", "/api/writes/{id}", 403, "http://localhost:3000",
           {"decision": "approve", "approval_token": "{token}"},
           {"Origin": "http://localhost:3000", "Sec-Fetch-Site": "same-site", "X-Duckask-Session": "{session}"}),
    Attack("CSRF: the server under its other name", "POST", "/api/sql", 403, "may not change", {"sql": DELETE},
           {"Origin": "http://localhost:{port}", "Sec-Fetch-Site": "same-site"}),
    Attack("CSRF: an opaque origin (a sandboxed frame, a file)", "POST", "/api/sql", 403, "requests from null",
           {"sql": DELETE}, {"Origin": "null"}),
    Attack("CSRF: cross-site without an Origin", "POST", "/api/writes/{id}", 403, "cross-site request",
           {"decision": "approve", "approval_token": "{token}"},
           {"Sec-Fetch-Site": "cross-site", "X-Duckask-Session": "{session}"}),
    Attack("CSRF: a form post (text/plain, no preflight)", "POST", "/api/writes/{id}", 415, "application/json",
           headers={"Content-Type": "text/plain", "X-Duckask-Session": "{session}", "Origin": "{origin}"},
           raw=b'{"decision": "approve", "approval_token": "{token}"}'),
    # finding 5: approving needs the person's action on the card: its token, from its page
    Attack("the proposing session, without the token", "POST", "/api/writes/{id}", 403, "needs the approval_token",
           {"decision": "approve"}, {"Origin": "{origin}", "Sec-Fetch-Site": "same-origin",
                                     "X-Duckask-Session": "{session}"}),
    Attack("the proposing session, a wrong token", "POST", "/api/writes/{id}", 403, "missing or wrong",
           {"decision": "approve", "approval_token": "x" * 43},
           {"Origin": "{origin}", "Sec-Fetch-Site": "same-origin", "X-Duckask-Session": "{session}"}),
    Attack("the token, not a string", "POST", "/api/writes/{id}", 403, "missing or wrong",
           {"decision": "approve", "approval_token": ["{token}"]},
           {"Origin": "{origin}", "Sec-Fetch-Site": "same-origin", "X-Duckask-Session": "{session}"}),
    Attack("the token, from another session", "POST", "/api/writes/{id}", 403, "another session",
           {"decision": "approve", "approval_token": "{token}"},
           {"Origin": "{origin}", "Sec-Fetch-Site": "same-origin", "X-Duckask-Session": "another-tab"}),
    Attack("the token, not from the page (no Origin, no Sec-Fetch-Site)", "POST", "/api/writes/{id}", 403,
           "own page", {"decision": "approve", "approval_token": "{token}"}, {"X-Duckask-Session": "{session}"}),
    Attack("the token, Sec-Fetch-Site: none (typed in the address bar)", "POST", "/api/writes/{id}", 403,
           "own page", {"decision": "approve", "approval_token": "{token}"},
           {"Sec-Fetch-Site": "none", "X-Duckask-Session": "{session}"}),
    # findings 6 and 10: bodies
    Attack("a body that is not UTF-8", "POST", "/api/writes/{id}", 400, "not UTF-8 JSON", raw=b'{"decision": "\xff"}',
           headers={"Origin": "{origin}", "X-Duckask-Session": "{session}"}),
    Attack("a body over the limit, sent with its length", "POST", "/api/sql", 413, "limit",
           raw=json.dumps({"sql": "SELECT 1 -- " + "x" * MAX_BODY}).encode()),
]


def fill(value, ctx: dict):
    """``value`` with the victim's card filled in (strings, and the strings in lists and dicts)."""
    if isinstance(value, str):
        for k, v in ctx.items():
            value = value.replace("{" + k + "}", str(v))
        return value
    if isinstance(value, list):
        return [fill(v, ctx) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, ctx) for k, v in value.items()}
    return value


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


# -- finding 6: a body is limited while it is read ---------------------------------------------------------
class Counting:
    """ASGI wrapper: the most body bytes uvicorn handed the app in one request."""

    def __init__(self, app):
        self.app, self.most = app, 0

    async def __call__(self, scope, receive, send):
        seen = 0

        async def counted():
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            self.most = max(self.most, seen)
            return message

        await self.app(scope, counted, send)


def post_raw(port: int, head: str, chunks, timeout: float = 5.0) -> tuple[int, dict, int]:
    """Send ``head`` then ``chunks`` on a raw socket, stopping as soon as a response arrives (or the server
    stops reading); returns (status, JSON body, body bytes sent)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    sent = 0
    try:
        sock.sendall(head.encode())
        for chunk in chunks:
            if select.select([sock], [], [], 0)[0]:
                break                                            # the answer came before the body was all sent
            try:
                sock.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError, TimeoutError):
                break
            sent += len(chunk)
        data = read_response(sock)
    finally:
        sock.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), json.loads(body), sent


def read_response(sock) -> bytes:
    """The first response on ``sock``: its head and the body its Content-Length gives."""
    data = b""
    try:
        while True:
            head, sep, body = data.partition(b"\r\n\r\n")
            if sep:
                length = next(int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length:"))
                if len(body) >= length:
                    return head + sep + body[:length]
            part = sock.recv(65536)
            if not part:
                return data
            data += part
    except (ConnectionResetError, TimeoutError):
        return data


def chunked(total: int, size: int = 64 * 1024):
    """A chunked body of ``total`` bytes of JSON-ish text, as chunk frames, then the last chunk."""
    piece = b"x" * size
    for _ in range(total // size):
        yield f"{size:x}\r\n".encode() + piece + b"\r\n"
    yield b"0\r\n\r\n"


@pytest.fixture
def counted(small_db, isolated_env):
    app = Counting(create_app(str(small_db), llm=ScriptedLLM({})))
    url, server = live_server.start(app)
    yield app, int(url.rsplit(":", 1)[1])
    server.should_exit = True


@pytest.mark.parametrize("path", ["/api/sql", "/api/ask", "/api/writes/1", "/api/export"])
def test_a_chunked_body_of_64_mb_is_refused_after_about_the_limit(counted, path):
    app, port = counted
    total = 64 * 1024 * 1024
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            "Transfer-Encoding: chunked\r\n\r\n")
    status, body, sent = post_raw(port, head, chunked(total))
    assert status == 413 and f"{MAX_BODY}-byte limit" in body["error"]
    assert app.most <= MAX_BODY + 128 * 1024            # what the server read: about the limit, not 64 MB
    assert sent < total                                  # it answered before the body was all sent


def test_a_lying_content_length_reads_no_more_than_it_says(counted):
    """A small Content-Length followed by megabytes: the server reads the declared bytes (not JSON: a 400)
    and treats the rest as a broken next request; it never holds more than the limit."""
    app, port = counted
    head = (f"POST /api/sql HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            "Content-Length: 10\r\n\r\n")
    status, body, _ = post_raw(port, head, (b"y" * 65536 for _ in range(256)))
    assert status == 400 and "not JSON" in body["error"]
    assert app.most <= MAX_BODY


def test_a_declared_length_over_the_limit_is_refused_before_the_body(counted):
    app, port = counted
    head = (f"POST /api/sql HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {300 * 1024 * 1024}\r\n\r\n")
    status, body, _ = post_raw(port, head, (b"z" * 65536 for _ in range(64)))
    assert status == 413 and "314572800 bytes" in body["error"] and app.most == 0


# -- finding 7: pending writes are capped per proposer, and expire as no one's decision ---------------------
@pytest.fixture
def team(serve, tmp_path):
    f = tmp_path / "users.yaml"
    keys = {n: add_user(f, n, r) for n, r in [("paul", "proposer"), ("pat", "proposer"), ("ann", "approver")]}
    s = serve(users=load_users(f))
    s.pending.per_proposer = 3
    return s, {n: {"Authorization": f"Bearer {k}"} for n, k in keys.items()}


def test_a_proposer_at_the_cap_is_refused_and_no_one_elses_write_is_pushed_out(team):
    s, who = team
    pats = s.request("POST", "/api/sql", {"sql": "DELETE FROM players WHERE id = 6"}, headers=who["pat"])
    pats = pats.json()["write"]
    pauls = [s.request("POST", "/api/sql", {"sql": f"DELETE FROM players WHERE id = {i}"}, headers=who["paul"])
             for i in (1, 2, 3)]
    assert all(r.status_code == 200 for r in pauls)
    before = s.state()
    r = s.request("POST", "/api/sql", {"sql": "DELETE FROM players WHERE id = 4"}, headers=who["paul"])
    assert r.status_code == 429 and "paul already has 3 writes waiting" in r.json()["error"]
    r = s.request("POST", "/api/ask", {"question": "DELETE FROM players WHERE id = 5"}, headers=who["paul"])
    assert r.status_code == 429 and "paul already has 3" in r.json()["error"]        # the question box too
    assert s.state() == before                                   # nothing recorded, nothing decided
    assert all(e["decision"] == "pending" and e["decided_by"] is None for e in before[1])
    assert sorted(s.pending.cards) == sorted([pats["id"], *(r.json()["write"]["id"] for r in pauls)])
    r = s.request("POST", f"/api/writes/{pats['id']}", {"decision": "approve"}, headers=who["ann"])
    assert r.json()["status"] == "written"                       # pat's write was never touched
    assert s.request("POST", "/api/sql", {"sql": "DELETE FROM players WHERE id = 5"},
                     headers=who["pat"]).status_code == 200       # pat still has room


def test_the_server_wide_cap_refuses_too(serve):
    s = serve()
    s.pending.total = 2
    for i in (1, 2):
        assert s.page("/api/sql", {"sql": f"DELETE FROM players WHERE id = {i}"}).status_code == 200
    before = s.state()
    r = s.page("/api/sql", {"sql": "DELETE FROM players WHERE id = 3"})
    assert r.status_code == 429 and "the most it holds" in r.json()["error"] and s.state() == before


def test_an_old_pending_write_expires_decided_by_no_one(serve):
    s = serve()
    now = [1000.0]
    s.pending.clock = lambda: now[0]
    card = s.page("/api/sql", {"sql": DELETE}).json()["write"]
    before = sha256(s.db)
    now[0] += s.pending.ttl_s + 1
    assert s.request("GET", "/api/writes").json()["pending"] == []
    (entry,) = AuditLog(s.audit).entries()
    assert (entry["decision"], entry["outcome"], entry["decided_by"]) == ("expired", "not_run", None)
    assert entry["detail"].startswith("expired: not decided within 60 minutes") and entry["finished_at"]
    r = s.page(f"/api/writes/{card['id']}", {"decision": "approve", "approval_token": card["approval_token"]})
    assert r.status_code == 404 and "expired" in r.json()["error"] and sha256(s.db) == before


# -- findings 3, 10, 11: what the server shows, and bodies that are not UTF-8 ------------------------------
def test_health_says_only_that_the_server_is_up_without_a_valid_key(serve, tmp_path):
    s = serve()
    assert s.request("GET", "/api/health").json() == {"status": "ok"}
    info = s.request("GET", "/api/info").json()                    # the page's header, under the Host check
    assert info["db"] == str(s.db) and info["writes"] is True
    keyed = serve(api_key="s3cret")
    assert keyed.request("GET", "/api/health").json() == {"status": "ok"}
    assert keyed.request("GET", "/api/health", headers={"X-API-Key": "wrong"}).json() == {"status": "ok"}
    full = keyed.request("GET", "/api/health", headers={"Authorization": "Bearer s3cret"}).json()
    assert set(full) == {"status", "db", "model", "queued", "writes"}
    assert keyed.request("GET", "/api/info").status_code == 401


def test_no_third_party_script_is_served_on_the_servers_origin(serve):
    s = serve()
    assert s.request("GET", "/docs").status_code == 404 and s.request("GET", "/redoc").status_code == 404
    assert "/api/sql" in s.request("GET", "/openapi.json").json()["paths"]
    page = s.request("GET", "/")
    assert "<script src=\"http" not in page.text and "cdn" not in page.text.lower()
    assert page.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert "script-src 'self'" in page.headers["content-security-policy"]


POST_ROUTES = ["/api/ask", "/api/ask/stream", "/api/sql", "/api/writes/1", "/api/export", "/api/email"]


@pytest.mark.parametrize("path", POST_ROUTES)
@pytest.mark.parametrize("raw", [b'{"sql": "SELECT \xff", "question": "\xfe"}', b"\xef\xbb\xbf\xc3\x28",
                                 b'{"decision": "approve\xc0\xaf"}'])
def test_a_body_that_is_not_utf8_is_a_400_json_error(serve, path, raw):
    s = serve()
    before = s.state()
    r = httpx.post(f"{s.url}{path}", content=raw, headers={"Content-Type": "application/json"}, timeout=30)
    assert r.status_code == 400 and r.headers["content-type"] == "application/json"
    assert "the body is not UTF-8 JSON" in r.json()["error"]
    assert s.state() == before


@pytest.mark.parametrize("host, ok", [
    ("127.0.0.1:8000", True), ("LOCALHOST:8000", True), ("[::1]:8000", True), ("localhost:8000.", False),
    ("127.0.0.1", False), ("127.0.0.1:80", False), ("localhost:08000", True), ("127.0.0.1:8000:1", False),
    ("[::1]", False), ("::1", False), ("127.0.0.1:abc", False), ("", False), ("evil.example:8000", False),
    ("localhost.:8000", False), ("x@127.0.0.1:8000", False),
])
def test_host_names_of_a_server_on_8000(host, ok):
    from duckask.utils.app.server_guards import HostNames, host_refusal

    assert (host_refusal(host, HostNames("127.0.0.1"), 8000) is None) is ok


@pytest.mark.parametrize("origin, host, ok", [
    ("http://127.0.0.1:8000", "127.0.0.1:8000", True), ("http://localhost", "localhost:80", True),
    ("https://duckask.example", "duckask.example", True), ("https://duckask.example", "duckask.example:80", False),
    ("http://127.0.0.1:8001", "127.0.0.1:8000", False), ("null", "127.0.0.1:8000", False),
    ("file://", "127.0.0.1:8000", False), ("http://127.0.0.1:8000/x", "127.0.0.1:8000", False),
    ("ftp://127.0.0.1:8000", "127.0.0.1:8000", False), ("http://[::1]:8000", "[::1]:8000", True),
])
def test_same_origin(origin, host, ok):
    from duckask.utils.app.server_guards import same_origin

    assert same_origin(origin, host) is ok
