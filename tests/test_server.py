"""The HTTP API (``duckask serve``) against a real uvicorn server on 127.0.0.1 and a scripted LLM:
every route, the stream's event order, the API key, bad JSON, oversized requests and two concurrent
questions on the one-at-a-time (embedded-like) backend."""
from __future__ import annotations

import json
import threading
import time

import live_server
import pytest
from conftest import clean_env
from openai_stub import free_port

fastapi = pytest.importorskip("fastapi", reason="the server extra is not installed (pip install 'duckask[server]')")
uvicorn = pytest.importorskip("uvicorn", reason="the server extra is not installed (pip install 'duckask[server]')")
httpx = pytest.importorskip("httpx", reason="httpx is in the test extra")

from duckask.utils.app.server import MAX_BODY, check_bind, create_app  # noqa: E402
from duckask.utils.llm import ScriptedLLM  # noqa: E402

pytestmark = pytest.mark.slow        # a real uvicorn server: not in the fast set (pytest -m "" runs it)

LAKERS_Q = "What are the points of Lakers players?"
LAKERS_SQL = ("SELECT p.name, p.points FROM players p JOIN teams t ON p.team_id = t.id "
              "WHERE t.name = 'Lakers' ORDER BY p.points DESC")


def slow_sql(messages):
    time.sleep(0.5)          # long enough for a second request to queue behind this one
    return LAKERS_SQL


@pytest.fixture
def serve(small_db, isolated_env):
    servers = []

    def start(**kw):
        app = create_app(str(small_db), llm=ScriptedLLM({"SQLGenerator": slow_sql}), resample_drafts=0,
                         analyzer="rules", **kw)
        url, server = live_server.start(app)
        servers.append(server)
        return url

    yield start
    for s in servers:
        s.should_exit = True


def events(text: str) -> list[tuple[str, dict]]:
    out = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        out.append((lines["event"], json.loads(lines["data"])))
    return out


def test_every_route(serve):
    url = serve()
    assert httpx.get(f"{url}/api/health").json() == {"status": "ok"}      # no key: only that it is up
    h = httpx.get(f"{url}/api/info").json()
    assert h["status"] == "ok" and h["queued"] == 0 and h["writes"] is False
    s = httpx.get(f"{url}/api/schema").json()
    assert s["tables"] == ["arenas", "players", "teams"] and "CREATE TABLE players" in s["ddl"]
    r = httpx.post(f"{url}/api/ask", json={"question": LAKERS_Q}, timeout=30).json()
    assert r["status"] == "answered" and r["sql"] == LAKERS_SQL and r["rows"][0] == ["LeBron James", 30]
    assert r["intent"] == "data" and r["trace"]
    q = httpx.post(f"{url}/api/sql", json={"sql": "SELECT count(*) AS n FROM teams"}).json()
    assert q["rows"] == [[3]] and q["columns"] == ["n"]
    refused = httpx.post(f"{url}/api/sql", json={"sql": "DROP TABLE teams"})
    assert refused.status_code == 400 and "DROP" in refused.json()["error"]
    assert httpx.get(f"{url}/docs").status_code == 404 and "/api/ask" in httpx.get(f"{url}/openapi.json").text


def test_the_stream_sends_nodes_in_order_then_the_result(serve):
    url = serve()
    with httpx.stream("POST", f"{url}/api/ask/stream", json={"question": LAKERS_Q}, timeout=30) as resp:
        assert resp.headers["content-type"].startswith("text/event-stream")
        got = events(resp.read().decode())
    kinds = [k for k, _ in got]
    assert kinds[-1] == "result" and got[-1][1]["rows"][0] == ["LeBron James", 30]
    nodes = [d["node"] for k, d in got if k == "node"]
    assert nodes[:7] == ["IntentRouter", "ResolveFollowUp", "ClarifyQuery", "CheckAnswerable", "MatchTemplate",
                         "PlanQuery", "TableSelector"]
    assert nodes == [t["node"] for t in got[-1][1]["trace"]]          # one event per node, as it ran


def test_concurrent_questions_queue_on_a_one_at_a_time_backend(serve):
    url = serve()
    results: dict[int, list] = {}

    def ask(i):
        with httpx.stream("POST", f"{url}/api/ask/stream", json={"question": LAKERS_Q}, timeout=60) as resp:
            results[i] = events(resp.read().decode())

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(8)]   # more than a small thread pool
    for t in threads:
        t.start()
        time.sleep(0.05)
    for t in threads:
        t.join()
    assert all(r[-1][0] == "result" and r[-1][1]["status"] == "answered" for r in results.values())
    # Every request but the first was told at once that it waits, and where; the deepest was 7th.
    assert sum(1 for r in results.values() if r[0][0] == "queued") == 7
    assert max(d["position"] for r in results.values() for k, d in r if k == "queued") == 7


def test_the_api_key_is_checked_on_every_route_but_health(serve):
    url = serve(api_key="s3cret")
    assert httpx.get(f"{url}/api/health").json() == {"status": "ok"}
    assert httpx.get(f"{url}/api/health", headers={"X-API-Key": "s3cret"}).json()["queued"] == 0
    assert httpx.get(f"{url}/api/info").status_code == 401
    denied = httpx.get(f"{url}/api/schema")
    assert denied.status_code == 401 and "API key" in denied.json()["error"]
    assert httpx.get(f"{url}/api/schema", headers={"Authorization": "Bearer s3cret"}).status_code == 200
    assert httpx.post(f"{url}/api/sql", json={"sql": "SELECT 1"}, headers={"X-API-Key": "s3cret"}).status_code == 200
    assert httpx.post(f"{url}/api/sql", json={"sql": "SELECT 1"}, headers={"X-API-Key": "nope"}).status_code == 401
    with pytest.raises(ValueError, match="api-key"):
        check_bind("0.0.0.0", None)
    check_bind("0.0.0.0", "s3cret")
    check_bind("127.0.0.1", None)


@pytest.mark.parametrize("body, status, says", [
    (b"{not json", 400, "not JSON"),
    (b'{"question": 3}', 422, "non-empty string"),
    (b'{"question": "   "}', 422, "non-empty string"),
    (json.dumps({"question": "x" * 2001}).encode(), 422, "limit is 2000"),
    (json.dumps({"question": "hi", "options": {"base_url": "http://evil"}}).encode(), 422, "options may set only"),
    (b"x" * (MAX_BODY + 1), 413, "limit"),
    # a bad value of an allowed option: 400 naming it and what it takes (a 500, or accepted, before)
    (json.dumps({"question": "hi", "options": {"resample_drafts": "lots"}}).encode(), 400,
     "bad option: resample_drafts takes a whole number from 0 to 8, not 'lots'"),
    (json.dumps({"question": "hi", "options": {"resample_drafts": 10000}}).encode(), 400, "from 0 to 8, not 10000"),
    (json.dumps({"question": "hi", "options": {"max_fix_retries": True}}).encode(), 400, "max_fix_retries takes"),
    (json.dumps({"question": "hi", "options": {"grader": "strict"}}).encode(), 400, "grader takes one of"),
])
def test_bad_requests_get_a_clear_json_error(serve, body, status, says):
    url = serve()
    r = httpx.post(f"{url}/api/ask", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == status and says in r.json()["error"]


def test_duckask_serve_refuses_an_open_bind_without_a_key_and_serves_on_loopback(small_db, isolated_env, tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    exe = Path(sys.executable).parent / "duckask"
    env = clean_env(isolated_env, DUCKASK_BASE_URL="http://127.0.0.1:9/v1")
    p = subprocess.run([str(exe), "serve", "--db", str(small_db), "--host", "0.0.0.0"], env=env,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "--api-key" in p.stderr
    port = free_port()
    proc = subprocess.Popen([str(exe), "serve", "--db", str(small_db), "--port", str(port),
                             "--allowed-host", "duckask.test"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        for _ in range(100):
            try:
                h = httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.2)
        assert h.json()["status"] == "ok"
        assert httpx.post(f"http://127.0.0.1:{port}/api/sql", json={"sql": "SELECT 2 AS two"}).json()["rows"] == [[2]]
        # no keys: only its own names (DNS rebinding), plus the one given with --allowed-host
        rebound = httpx.get(f"http://127.0.0.1:{port}/api/schema", headers={"Host": f"evil.example:{port}"})
        assert rebound.status_code == 421 and "DNS rebinding" in rebound.json()["error"]
        assert httpx.get(f"http://127.0.0.1:{port}/api/schema", headers={"Host": "duckask.test"}).status_code == 200
        assert httpx.get(f"http://localhost:{port}/api/schema").status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=30)
