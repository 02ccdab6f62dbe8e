"""What test_server_attacks.py and test_server_limits.py share: the question set, the scripted models, the fixtures."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import live_server
import pytest
from conftest import build_small_db, sha256

pytest.importorskip("fastapi", reason="the server extra is not installed (pip install 'duckask[server]')")
httpx = pytest.importorskip("httpx", reason="httpx is in the test extra")

from duckask.utils.app.server import MAX_BODY, create_app  # noqa: E402
from duckask.utils.llm import ScriptedLLM  # noqa: E402
from duckask.utils.writes.audit import AuditLog  # noqa: E402

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
                         router="rules", analyzer="rules", **more)
        url, server = live_server.start(app)
        servers.append(server)
        return Site(app, url, db, audit)

    yield start
    for s in servers:
        s.should_exit = True


DEEP = b"[" * 30_000 + b"]" * 30_000


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
    # issue 43, finding 8: 60 KB nested 30,000 deep was a plain-text 500 with a RecursionError in the log
    *(Attack(f"a body nested 30,000 deep to {path}", "POST", path, 400, "nested more than 64 levels",
             raw=DEEP, headers={"Origin": "{origin}", "X-Duckask-Session": "{session}"})
      for path in ("/api/sql", "/api/ask", "/api/export", "/api/writes/{id}", "/api/ask/stream", "/api/email")),
    Attack("a body nested 30,000 deep inside an object", "POST", "/api/sql", 400, "nested more than 64 levels",
           raw=b'{"sql": "SELECT 1", "options": ' + DEEP + b"}"),
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
