"""``duckask mcp`` driven as an MCP client would: the SDK's client over stdio starts the server,
initializes, lists the tools, calls each, reads the schema resource; a refused SQL comes back as a
tool error with the reason. The LLM is the OpenAI-compatible stub on 127.0.0.1."""
from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from conftest import clean_env, sha256
from openai_stub import CHANGE_SQL, ROWS, SQL, StubOpenAI, make_cities_db, smart_responder

pytest.importorskip("mcp", reason="the server extra is not installed (pip install 'duckask[server]')")
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

pytestmark = pytest.mark.slow        # an MCP server over stdio: not in the fast set (pytest -m "" runs it)

DUCKASK = Path(sys.executable).parent / "duckask"


def _text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def _session_run(db: str, env: dict) -> dict:
    params = StdioServerParameters(command=str(DUCKASK), args=["mcp", "--db", db], env=env)
    out: dict = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        out["server"] = init.server_info.name
        out["tools"] = sorted(t.name for t in (await session.list_tools()).tools)
        out["ask"] = await session.call_tool("ask", {"question": "What is the population of each city in France?"})
        out["sql"] = await session.call_tool("run_sql", {"sql": "SELECT count(*) AS n FROM cities"})
        out["refused"] = await session.call_tool("run_sql", {"sql": "DROP TABLE cities"})
        out["write"] = await session.call_tool("ask", {"question": "DELETE FROM cities WHERE country = 'France'"})
        out["schema"] = await session.call_tool("describe_schema", {})
        out["no_table"] = await session.call_tool("describe_schema", {"table": "nope"})
        out["resource"] = await session.read_resource("duckask://schema")
        out["metrics"] = await session.call_tool("list_metrics", {})
    return out


SEMANTIC = """semantic_model:
  name: cities
  node_relation: {schema_name: main, alias: cities}
  primary_entity: city
  defaults: {agg_time_dimension: undated}
  dimensions:
    - {name: country, type: categorical}
    - {name: undated, type: time, expr: "DATE '2000-01-01'", type_params: {time_granularity: day},
       config: {meta: {constant_time: true}}}
  measures:
    - {name: population_sum, agg: sum, expr: population}
---
metric: {name: total_population, description: people living there, type: simple, type_params: {measure: population_sum}}
"""


def test_an_mcp_client_round_trip(tmp_path, isolated_env):
    db = make_cities_db(tmp_path / "cities.duckdb")
    (tmp_path / "semantic.yaml").write_text(SEMANTIC)
    before = sha256(db)
    with StubOpenAI(smart_responder) as stub:
        # Writes on in the environment: the MCP server stays read-only all the same.
        env = clean_env(isolated_env, DUCKASK_BASE_URL=stub.base_url, DUCKASK_MODEL="stub", DUCKASK_ALLOW_WRITES="1",
                        DUCKASK_AUDIT_FILE=str(tmp_path / "audit.duckdb"),
                        DUCKASK_SEMANTIC=str(tmp_path / "semantic.yaml"))
        out = asyncio.run(asyncio.wait_for(_session_run(str(db), env), 90))
    assert out["server"] == "duckask" and out["tools"] == ["ask", "describe_schema", "list_metrics", "propose_write",
                                                           "run_sql", "teach"]
    ask = json.loads(_text(out["ask"]))
    assert not out["ask"].is_error and ask["sql"] == SQL and ask["rows"] == ROWS and ask["status"] == "answered"
    assert json.loads(_text(out["sql"]))["rows"] == [[3]]
    assert out["refused"].is_error and "DROP" in _text(out["refused"])
    write = json.loads(_text(out["write"]))
    assert write["status"] == "blocked" and "writes are off" in write["answer"] and sha256(db) == before
    assert "CREATE TABLE cities" in _text(out["schema"])
    assert out["no_table"].is_error and "cities" in _text(out["no_table"])
    assert "CREATE TABLE cities" in out["resource"].contents[0].text
    metrics = json.loads(_text(out["metrics"]))
    assert [m["name"] for m in metrics["metrics"]] == ["total_population"]
    assert [d["name"] for d in metrics["dimensions"]] == ["city__country"]   # a constant date offers no year
    # "population" names the metric, so the plan path ran first; the stub's reply is no plan: the SQL path answered.
    assert ask["path"] == "sql"


async def _propose_run(db: str, env: dict, allow_writes: bool) -> dict:
    args = ["mcp", "--db", db] + (["--allow-writes"] if allow_writes else [])
    params = StdioServerParameters(command=str(DUCKASK), args=args, env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return {"sql": await session.call_tool("propose_write", {"change": CHANGE_SQL}),
                "words": await session.call_tool("propose_write", {"change": "delete the French cities"}),
                "drop": await session.call_tool("propose_write", {"change": "DROP TABLE cities"}),
                "question": await session.call_tool("propose_write", {"change": "What is the population of Paris?"}),
                "empty": await session.call_tool("propose_write", {"change": " "})}


@pytest.mark.parametrize("allow_writes", [True, False])
def test_propose_write_leaves_a_card_for_a_person_and_never_writes(tmp_path, isolated_env, allow_writes):
    from duckask.utils.writes.audit import AuditLog

    db = make_cities_db(tmp_path / "cities.duckdb")
    before = sha256(db)
    with StubOpenAI(smart_responder) as stub:
        env = clean_env(isolated_env, DUCKASK_BASE_URL=stub.base_url, DUCKASK_MODEL="stub",
                        DUCKASK_AUDIT_FILE=str(tmp_path / "audit.duckdb"))
        out = asyncio.run(asyncio.wait_for(_propose_run(str(db), env, allow_writes), 90))
    assert sha256(db) == before                                  # nothing ran, whatever was proposed
    sql, words, drop = (json.loads(_text(out[k])) for k in ("sql", "words", "drop"))
    if allow_writes:
        assert sql["decision"] == "pending" and sql["estimated_rows"] == 2 and sql["user"] == "mcp agent"
        assert sql["to_approve"] == f"duckask decide {sql['id']} --db {db}"
        assert words["decision"] == "pending" and words["request"] == "delete the French cities"
        assert words["proposed_by"] == "model" and words["sql"] == CHANGE_SQL
    else:
        assert sql["decision"] == words["decision"] == "blocked" and "writes are off" in sql["blocked"]
        assert sql["to_approve"] is None
    assert drop["decision"] == "blocked" and drop["tier"] == 3
    assert out["question"].is_error and "use ask" in _text(out["question"])
    assert out["empty"].is_error and "empty" in _text(out["empty"])
    entries = AuditLog(tmp_path / "audit.duckdb").entries()
    assert len(entries) == 3 and not any(e["decision"] == "approved" for e in entries)


def _requests(*calls: tuple[str, dict | None]) -> bytes:
    """initialize, initialized, then ``calls`` as requests 2, 3, ...: the JSON-RPC lines a client writes."""
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
             {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    lines += [{"jsonrpc": "2.0", "id": i, "method": method, **({"params": params} if params else {})}
              for i, (method, params) in enumerate(calls, 2)]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def test_every_request_read_before_stdin_closes_is_answered(tmp_path, isolated_env):
    """Requests written and stdin closed at once (a pipe): the server answers each before it exits; it used to
    stop at the end of stdin and drop the replies still in flight (the tools/list reply, 3 runs of 3)."""
    import subprocess

    db = make_cities_db(tmp_path / "cities.duckdb")
    env = clean_env(isolated_env, DUCKASK_BASE_URL="http://127.0.0.1:9/v1", DUCKASK_MODEL="stub")
    sent = _requests(("tools/list", None), ("tools/call", {"name": "run_sql", "arguments": {"sql": "SELECT 1 AS n"}}))
    for _ in range(3):
        run = subprocess.run([str(DUCKASK), "mcp", "--db", str(db)], input=sent, capture_output=True, env=env,
                             timeout=60)
        replies = {m["id"]: m for m in map(json.loads, run.stdout.decode().splitlines())}
        assert sorted(replies) == [1, 2, 3], run.stderr.decode()[-2000:]
        assert "run_sql" in {t["name"] for t in replies[2]["result"]["tools"]}
        assert json.loads(replies[3]["result"]["content"][0]["text"])["rows"] == [[1]]
        assert run.returncode == 0


# -- issue 43, finding 7: every malformed line gets JSON-RPC's error, and the server exits at the end of stdin ---
MALFORMED = [  # (the line, the error code answered; None: a notification, answered with nothing)
    ('{"id": 7, "method": "tools/list"}', -32600),                                     # no "jsonrpc"
    ('{"jsonrpc": "2.0", "id": 9.0, "method": "tools/list"}', -32600),                 # a float id
    ('{"jsonrpc": "2.0", "id": null, "method": "tools/list"}', -32600),
    ('{"jsonrpc": "2.0", "id": true, "method": "tools/list"}', -32600),
    ('{"jsonrpc": "2.0", "id": {}, "method": "tools/list"}', -32600),
    ('{"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": "zzz"}', -32602),
    ('{"jsonrpc": "2.0", "id": 10, "method": 5}', -32600),
    ('{"jsonrpc": "2.0", "id": 11}', -32600),                                           # neither method nor result
    ("this is not json", -32700),
    ('{"jsonrpc": "2.0", "id": 12, "method": "tools/list"', -32700),                  # cut short
    ('[{"jsonrpc": "2.0", "id": 13, "method": "tools/list"}]', -32600),               # a batch
    ("[" * 100_000 + "]" * 100_000, -32600),                                            # 100,000 deep
    ('{"jsonrpc": "2.0", "id": 14, "method": "x", "params": ' + "[" * 5000 + "]" * 5000 + "}", -32600),
    ('"just a string"', -32600),
    ('{"jsonrpc": "1.0", "method": "notifications/initialized"}', None),
    ('{"jsonrpc": "2.0", "method": "notifications/x", "params": 3}', None),
    # issue 52, finding 8: a lone surrogate escape parses but is no text: it got no reply, and the server then
    # waited ten minutes after stdin closed
    ('{"jsonrpc": "2.0", "id": "\\ud800", "method": "tools/list"}', -32600),
    ('{"jsonrpc": "2.0", "id": 15, "method": "tools/\\ud800"}', -32600),
    ('{"jsonrpc": "2.0", "id": 16, "method": "tools/call", "params": {"name": "ask", "arguments": '
     '{"question": "a \\udfff b"}}}', -32600),
    ('{"jsonrpc": "2.0", "id": 17, "method": "tools/list", "params": {"\\ud83d": 1}}', -32600),
    ('{"jsonrpc": "2.0", "method": "notifications/\\udc00"}', None),
]


def test_a_malformed_line_gets_an_error_and_the_server_still_answers_and_exits(tmp_path, isolated_env):
    import subprocess

    db = make_cities_db(tmp_path / "cities.duckdb")
    env = clean_env(isolated_env, DUCKASK_BASE_URL="http://127.0.0.1:9/v1", DUCKASK_MODEL="stub")
    good = _requests(("tools/list", None)).decode().splitlines()
    lines = [good[0], *(line for line, _ in MALFORMED), good[1], good[2]]       # initialize ... tools/list last
    run = subprocess.run([str(DUCKASK), "mcp", "--db", str(db)], input=("\n".join(lines) + "\n").encode(),
                         capture_output=True, env=env, timeout=90)
    replies = [json.loads(x) for x in run.stdout.decode().splitlines()]
    assert run.returncode == 0, run.stderr.decode()[-2000:]
    errors = [r for r in replies if "error" in r]
    assert [r["error"]["code"] for r in errors] == [code for _, code in MALFORMED if code is not None]
    assert all(r["id"] is None for r in errors if r["error"]["code"] in (-32700,))
    assert {r["id"] for r in replies if "result" in r} == {1, 2}                  # initialize and the last request
    assert "Traceback" not in run.stderr.decode() and "RecursionError" not in run.stderr.decode()


@pytest.mark.parametrize("line, code", MALFORMED, ids=[f"{i:02d}" for i in range(len(MALFORMED))])
def test_the_line_check_answers_as_json_rpc_says(line, code):
    from duckask.utils.app.mcp_server import refusal

    message, error = refusal(line)
    assert message is None and (error == {} if code is None else error["error"]["code"] == code)
    assert refusal('{"jsonrpc": "2.0", "id": "a", "method": "tools/list", "params": {}}') == (
        {"jsonrpc": "2.0", "id": "a", "method": "tools/list", "params": {}}, None)


async def _teach_run(db: str, env: dict) -> dict:
    params = StdioServerParameters(command=str(DUCKASK), args=["mcp", "--db", db], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        bad = {"question": "Cities of France?", "sql": "SELECT nme FROM cities"}
        return {"bad": await session.call_tool("teach", bad),
                "none": await session.call_tool("teach", {"question": "Cities of France?",
                                                          "sql": "SELECT name FROM cities WHERE country = 'Spain'"}),
                "kept": await session.call_tool("teach", {"question": "What is the population of each city in France?",
                                                          "sql": SQL}),
                "ask": await session.call_tool("ask", {"question": "What is the population of each city in Germany?"})}


def test_teach_keeps_a_pair_that_runs_and_ask_then_answers_from_it(tmp_path, isolated_env):
    db = make_cities_db(tmp_path / "cities.duckdb")
    with StubOpenAI(smart_responder) as stub:
        env = clean_env(isolated_env, DUCKASK_BASE_URL=stub.base_url, DUCKASK_MODEL="stub",
                        DUCKASK_AUDIT_FILE=str(tmp_path / "audit.duckdb"))
        out = asyncio.run(asyncio.wait_for(_teach_run(str(db), env), 90))
        asked = len(stub.requests)
    assert out["bad"].is_error and "does not run" in _text(out["bad"])
    assert out["none"].is_error and "returns no rows" in _text(out["none"])
    kept = json.loads(_text(out["kept"]))
    assert kept["status"] == "kept" and kept["example_id"] and kept["rows"] == 2
    ask = json.loads(_text(out["ask"]))         # Germany for France in the kept SQL: no model call wrote it
    assert ask["path"] == "template" and ask["rows"] == [["Berlin", 3600000]] and asked == 0
    assert ask["template"]["slots"] == [{"kept": "France", "asked": "Germany"}]
    from duckask.utils.writes.audit import AuditLog

    [entry] = AuditLog(tmp_path / "audit.duckdb").entries()
    assert (entry["kind"], entry["user"], entry["session"]) == ("example", "mcp agent", "mcp")
