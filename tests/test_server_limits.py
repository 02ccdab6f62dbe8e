"""The security probe of ``duckask serve`` (issue 30), the attacks that need more than one request, against a real
uvicorn on 127.0.0.1 (the server and its site: server_attack_support.py): a chunked body far over the limit,
a proposer filling the pending writes, what /api/health and /docs show, a body that is not UTF-8, host names
and origins."""
# ruff: noqa: F811  (pytest fixtures are imported from server_attack_support and used as parameters by name)
from __future__ import annotations

import json
import select
import socket

import live_server
import pytest
from conftest import sha256

pytest.importorskip("fastapi", reason="the server extra is not installed (pip install 'duckask[server]')")
httpx = pytest.importorskip("httpx", reason="httpx is in the test extra")

from server_attack_support import DELETE, serve  # noqa: E402, F401 (after importorskip; fixtures used by name)

from duckask.utils.access.roles import add_user, load_users  # noqa: E402
from duckask.utils.app.server import MAX_BODY, create_app  # noqa: E402
from duckask.utils.llm import ScriptedLLM  # noqa: E402
from duckask.utils.writes.audit import AuditLog  # noqa: E402

pytestmark = pytest.mark.slow        # a real uvicorn server: not in the fast set (pytest -m "" runs it)


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
