"""Writes, downloads and email over HTTP (``utils/app/server_actions.py``) against a real uvicorn server on
127.0.0.1: a write is only proposed until ``POST /api/writes/{id}`` says exactly "approve" (on this server
without keys: with the card's approval token, from the server's own origin, as the page sends it); blocked
and pending writes leave the database file's bytes as they were; every attempt is in the audit log; exports
round-trip through pandas; email goes through a real SMTP server (aiosmtpd) started here. The attacks on
all this are in ``test_server_attacks.py``."""
from __future__ import annotations

import argparse
import io
import json

import live_server
import pandas as pd
import pytest
from conftest import build_small_db, sha256
from smtp_server import smtp_server

pytest.importorskip("fastapi", reason="the server extra is not installed (pip install 'duckask[server]')")
httpx = pytest.importorskip("httpx", reason="httpx is in the test extra")

from duckask.utils.app.server import create_app, serve_command  # noqa: E402
from duckask.utils.llm import ScriptedLLM  # noqa: E402
from duckask.utils.writes.audit import AuditLog  # noqa: E402

pytestmark = pytest.mark.slow        # a real uvicorn server: not in the fast set (pytest -m "" runs it)

DELETE = "DELETE FROM players WHERE team_id = 1"
SESSION = {"X-Duckask-Session": "tab-42"}


class Server:
    """The server, and a client that keeps each proposed card's approval token (as the page does)."""

    def __init__(self, app, url, db, audit):
        self.app, self.url, self.db, self.audit = app, url, db, audit
        self.tokens: dict[int, str] = {}

    def post(self, path, body=None, **kw):
        r = httpx.post(f"{self.url}{path}", json=body, timeout=30, **kw)
        self.keep_token(r.json() if r.headers.get("content-type") == "application/json" else {})
        return r

    def keep_token(self, res: dict) -> None:
        card = res.get("write") if isinstance(res, dict) else None
        if card and card.get("approval_token"):
            self.tokens[card["id"]] = card["approval_token"]

    def sql(self, sql, **kw):
        return self.post("/api/sql", {"sql": sql}, **kw)

    def decide(self, card_id, decision, headers=None, **kw):
        """The page's click: the decision, the card's token, from the server's own origin."""
        body = {"decision": decision, "approval_token": self.tokens.get(int(card_id) if str(card_id).isdigit() else 0)}
        return self.post(f"/api/writes/{card_id}", body, headers={"Origin": self.url, **(headers or {})}, **kw)

    def count(self, table="players") -> int:
        return self.sql(f"SELECT count(*) FROM {table}").json()["rows"][0][0]

    def entries(self) -> list[dict]:
        return AuditLog(self.audit).entries()


@pytest.fixture
def serve(tmp_path, settings):
    servers = []

    def start(allow_writes: bool = True, **more) -> Server:
        db = build_small_db(tmp_path / f"nba{len(servers)}.duckdb")
        audit = tmp_path / "audit.duckdb"
        app = create_app(str(db), llm=ScriptedLLM({}), settings=settings, allow_writes=allow_writes,
                         audit_file=str(audit), **more)
        url, server = live_server.start(app)
        servers.append(server)
        return Server(app, url, db, audit)

    yield start
    for s in servers:
        s.should_exit = True


def test_writes_off_a_delete_is_blocked_and_nothing_changes(serve):
    s = serve(allow_writes=False)
    assert httpx.get(f"{s.url}/api/info").json()["writes"] is False
    before = sha256(s.db)
    r = s.sql(DELETE, headers=SESSION)
    assert r.status_code == 400 and "writes are off" in r.json()["error"]
    card = r.json()["write"]
    assert card["decision"] == "blocked" and card["tier"] == 1 and "tree" not in card
    assert sha256(s.db) == before and s.count() == 6
    [entry] = s.entries()
    assert entry["decision"] == "blocked" and entry["outcome"] == "not_run" and entry["sql"] == DELETE
    assert entry["session"] == "tab-42" and entry["user"] == "http 127.0.0.1"
    assert s.decide(card["id"], "approve").status_code == 404          # a blocked card can never be approved
    assert sha256(s.db) == before


def test_a_pending_delete_changes_nothing_and_a_rejection_keeps_it_so(serve):
    s = serve()
    assert httpx.get(f"{s.url}/api/info").json()["writes"] is True
    before = sha256(s.db)
    r = s.sql(DELETE, headers=SESSION)
    assert r.status_code == 200 and r.json()["status"] == "pending"
    card = r.json()["write"]
    assert card["estimated_rows"] == 3 and card["tier"] == 1 and card["kind"] == "DELETE"
    assert card["decision"] == "pending" and card["explanation"] and card["session"] == "tab-42"
    assert sha256(s.db) == before and s.count() == 6
    assert s.entries()[0]["decision"] == "pending"
    other = s.decide(card["id"], "approve", headers={"X-Duckask-Session": "another-tab"})
    assert other.status_code == 403 and "another session" in other.json()["error"]     # and it is still pending
    assert sha256(s.db) == before and s.count() == 6 and s.entries()[0]["decision"] == "pending"
    done = s.decide(card["id"], "reject", headers=SESSION)
    assert done.status_code == 200 and done.json()["status"] == "rejected"
    assert done.json()["answer"].startswith("Not written") and done.json()["write"]["decision"] == "rejected"
    assert sha256(s.db) == before and s.count() == 6
    [entry] = s.entries()
    assert entry["decision"] == "rejected" and entry["outcome"] == "not_run" and entry["decided_at"]
    again = s.decide(card["id"], "approve")
    assert again.status_code == 404
    assert again.json()["error"] == (f"no pending write #{card['id']} (it was decided or expired, or the server "
                                     "restarted): propose it again")
    assert sha256(s.db) == before and s.count() == 6


def test_an_approved_delete_removes_the_rows_and_is_audited(serve):
    s = serve()
    card = s.sql(DELETE).json()["write"]
    done = s.decide(card["id"], "approve")
    assert done.status_code == 200 and done.json()["status"] == "written"
    assert done.json()["write"]["actual_rows"] == 3 and done.json()["answer"].startswith("Done (DELETE on players)")
    assert s.count() == 3
    assert s.sql("SELECT count(*) FROM players WHERE team_id = 1").json()["rows"] == [[0]]
    [entry] = s.entries()
    assert (entry["decision"], entry["outcome"], entry["estimated_rows"], entry["actual_rows"]) == \
        ("approved", "committed", 3, 3)
    assert entry["session"] == "http" and entry["finished_at"]
    assert s.decide(card["id"], "approve").status_code == 404          # decided once


def test_drop_table_is_blocked_even_with_writes_on(serve):
    s = serve()
    before = sha256(s.db)
    r = s.sql("DROP TABLE teams")
    assert r.status_code == 400 and "T3" in r.json()["error"] and "DROP" in r.json()["error"]
    assert r.json()["write"]["tier"] == 3
    assert sha256(s.db) == before and s.count("teams") == 3
    assert s.entries()[0]["decision"] == "blocked"
    r = s.sql("SELECT 1; DELETE FROM teams")                           # a write hidden behind a read
    assert r.status_code == 400 and r.json()["write"]["decision"] == "blocked"
    assert sha256(s.db) == before


@pytest.mark.parametrize("body", [{"decision": "yes"}, {"decision": "APPROVE"}, {"decision": "approve "}, {},
                                  {"decision": True}, {"decision": ["approve"]}, [], "approve"])
def test_only_exactly_approve_or_reject_decides(serve, body):
    s = serve()
    before = sha256(s.db)
    card = s.sql(DELETE).json()["write"]
    r = s.post(f"/api/writes/{card['id']}", body)
    assert r.status_code == 400 and '"approve"' in r.json()["error"]
    plain = httpx.post(f"{s.url}/api/writes/{card['id']}", content=b'{"decision": "approve"}',
                       headers={"Content-Type": "text/plain"})          # what another site's page could send
    assert plain.status_code == 415
    assert sha256(s.db) == before and s.entries()[0]["decision"] == "pending"
    assert s.decide(card["id"], "reject").json()["status"] == "rejected"   # still pending: decidable once


def test_unknown_ids_are_404(serve):
    s = serve()
    for ident in ("999", "abc", "-1"):
        r = s.decide(ident, "approve")
        assert r.status_code == 404 and "no pending write" in r.json()["error"]


def test_create_table_as_then_approve_shows_the_table_in_the_schema(serve):
    s = serve()
    r = s.sql('CREATE TABLE "top scorers" AS SELECT name, points FROM players WHERE points >= 25')
    card = r.json()["write"]
    assert r.json()["status"] == "pending" and card["tier"] == 2 and card["kind"] == "CREATE TABLE"
    assert "top scorers" not in httpx.get(f"{s.url}/api/schema").json()["tables"]
    done = s.decide(card["id"], "approve").json()
    assert done["status"] == "written"
    assert "top scorers" in httpx.get(f"{s.url}/api/schema").json()["tables"]
    assert s.sql('SELECT name FROM "top scorers" ORDER BY points DESC').json()["rows"] == \
        [["LeBron James"], ["Jayson Tatum"], ["Anthony Davis"]]
    again = s.sql('CREATE TABLE "top scorers" AS SELECT 1 AS x')
    assert again.status_code == 400 and "already exists" in again.json()["error"]


def test_at_the_cap_a_new_write_is_refused_and_the_oldest_still_waits(serve):
    """No pending write is ever pushed out (it used to be rejected "by" its approver): the new one is a 429."""
    s = serve()
    s.app.state.pending_writes.per_proposer = 2
    ids = [s.sql(f"DELETE FROM players WHERE id = {i}").json()["write"]["id"] for i in (1, 2)]
    r = s.sql("DELETE FROM players WHERE id = 3")
    assert r.status_code == 429 and "already has 2 writes waiting" in r.json()["error"]
    assert [e["decision"] for e in s.entries()] == ["pending", "pending"]
    assert s.decide(ids[0], "approve").json()["status"] == "written" and s.count() == 5
    assert s.sql("DELETE FROM players WHERE id = 3").status_code == 200            # room again


READERS = {"csv": pd.read_csv, "parquet": pd.read_parquet, "json": pd.read_json, "xlsx": pd.read_excel}
MEDIA = {"csv": "text/csv", "parquet": "application/vnd.apache.parquet", "json": "application/json",
         "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"}


@pytest.mark.parametrize("fmt", list(READERS))
def test_export_downloads_each_format(serve, fmt):
    s = serve(allow_writes=False)
    r = s.post("/api/export", {"sql": "SELECT id, name, points FROM players ORDER BY id", "format": fmt})
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith(MEDIA[fmt])
    assert r.headers["content-disposition"] == f'attachment; filename="duckask-result.{fmt}"'
    back = READERS[fmt](io.BytesIO(r.content))
    assert list(back.columns) == ["id", "name", "points"] and len(back) == 6
    assert back["name"].tolist()[:2] == ["LeBron James", "Anthony Davis"] and int(back["points"].sum()) == 144


def test_export_refuses_bad_formats_and_writes(serve):
    s = serve()
    r = s.post("/api/export", {"sql": "SELECT 1", "format": "pdf"})
    assert r.status_code == 400 and "csv, parquet, json, xlsx" in r.json()["error"]
    before = sha256(s.db)
    r = s.post("/api/export", {"sql": DELETE, "format": "csv"})
    assert r.status_code == 400 and "refused" in r.json()["error"]
    assert sha256(s.db) == before and s.entries() == []               # not a proposal: nothing to approve


@pytest.fixture
def smtp():
    with smtp_server() as served:
        yield served


def test_email_sends_the_rows_as_a_csv_attachment(serve, smtp):
    inbox, port = smtp
    s = serve(allow_writes=False, smtp_host="127.0.0.1", smtp_port=port, smtp_starttls=False, smtp_timeout_s=5,
              smtp_from="duckask@example.com")
    r = s.post("/api/email", {"to": "ann@example.com, Bo <bo@example.com>", "question": "Who scored most?",
                              "answer": "LeBron James, 30 points.", "sql": "SELECT name, points FROM players "
                                                                         "ORDER BY points DESC"})
    assert r.status_code == 200, r.text
    assert r.json() == {"status": "sent", "to": ["ann@example.com", "Bo <bo@example.com>"], "rows": 6,
                        "truncated": False}
    msg = inbox.only()
    assert msg["Subject"] == "duckask: Who scored most?" and "bo@example.com" in msg["To"]
    assert "LeBron James, 30 points." in msg.get_body(("plain",)).get_content()
    [part] = list(msg.iter_attachments())
    assert part.get_filename() == "result.csv"
    back = pd.read_csv(io.BytesIO(part.get_payload(decode=True)))
    assert back.columns.tolist() == ["name", "points"] and back.iloc[0].tolist() == ["LeBron James", 30]


def test_email_needs_an_smtp_host_and_good_addresses(serve, smtp):
    s = serve(allow_writes=False)
    r = s.post("/api/email", {"to": "ann@example.com", "sql": "SELECT 1"})
    assert r.status_code == 400 and "smtp_host" in r.json()["error"]
    inbox, port = smtp
    s = serve(allow_writes=False, smtp_host="127.0.0.1", smtp_port=port, smtp_starttls=False, smtp_timeout_s=5)
    for to in ("not an address", "", None, "a@example.com\r\nBcc: x@example.com"):
        r = s.post("/api/email", {"to": to, "sql": "SELECT 1"})
        assert r.status_code == 400, to
    r = s.post("/api/email", {"to": "ann@example.com", "sql": "DROP TABLE teams"})
    assert r.status_code == 400 and "DROP" in r.json()["error"]
    assert inbox.messages == []


def test_serve_allow_writes_reaches_the_settings(monkeypatch, tmp_path, isolated_env):
    import uvicorn

    apps = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: apps.append(app))
    db = build_small_db(tmp_path / "nba.duckdb")
    args = argparse.Namespace(api_key=None, host="127.0.0.1", port=0, config=None, max_concurrent=1,
                              cors_origin=[], allow_writes=True)
    assert serve_command(args, str(db)) == 0
    args.allow_writes = None                                          # the flag not given: the config's (off)
    assert serve_command(args, str(db)) == 0
    assert [a.state.prepared.settings.allow_writes for a in apps] == [True, False]


@pytest.mark.parametrize("decision, rows_after, status", [("approve", 3, "written"), ("reject", 6, "rejected")])
def test_a_write_typed_into_the_question_box_is_decided_on_its_card(serve, decision, rows_after, status):
    """The page's question box (POST /api/ask and its stream) proposes a pasted write like /api/sql does: the
    card it shows can be approved or rejected, and the audit entry ends decided (it stayed pending before)."""
    s = serve()
    before = sha256(s.db)
    r = s.post("/api/ask", {"question": DELETE}, headers=SESSION)
    assert r.status_code == 200 and r.json()["status"] == "pending", r.text
    card = r.json()["write"]
    assert card["decision"] == "pending" and sha256(s.db) == before and s.count() == 6
    assert s.decide(card["id"], decision, headers={"X-Duckask-Session": "another-tab"}).status_code == 403
    done = s.decide(card["id"], decision, headers=SESSION)
    assert done.status_code == 200 and done.json()["status"] == status, done.text
    assert s.count() == rows_after
    [entry] = s.entries()
    assert entry["decision"] == ("approved" if decision == "approve" else "rejected")
    assert entry["session"] == "tab-42" and entry["sql"] == DELETE
    assert s.decide(card["id"], decision, headers=SESSION).status_code == 404      # decided once


def test_a_write_from_the_question_stream_is_held_for_its_decision(serve):
    s = serve()
    with httpx.stream("POST", f"{s.url}/api/ask/stream", json={"question": DELETE}, headers=SESSION,
                      timeout=30) as resp:
        body = "".join(resp.iter_text())
    result = json.loads(body.split("event: result\ndata: ", 1)[1].split("\n", 1)[0])
    assert result["status"] == "pending" and result["write"]["approval_token"]
    s.keep_token(result)
    assert s.decide(result["write"]["id"], "approve", headers=SESSION).json()["status"] == "written"
    assert s.count() == 3
