"""Security, round four (issue 62): each probe of the fourth review as a row, on a live PostgreSQL source with a reader
allowed one table, on a DuckDB file with a real ``duckask serve`` and an approval, and on the server's limits.

1. one reading: on a live source the checks read the text the engine is sent (nested comments: DuckDB's lexer, which
   is PostgreSQL's, decides), and the engine's tree is checked against the asker's own allowlist;
2. CTEs resolved by scope on the engine's tree: a bare name that is no CTE in scope never reaches the search path;
3. a write card on a DuckDB file shows, estimates and explains the statement that runs, and every scan of it (its
   binder's reading) is on the proposer's allowlist;
4. a byte budget per result and per value, on a real server;
5. live: what the catalog cannot bind is not sent; object-identifier casts, session words, system columns refused;
6. live types mapped or said, never a 500; 7. sessions bounded per source and per user, queued;
8. caps counted and recorded in one step under concurrent requests; 9. the audit's and the store's 503s;
10. a password in the arguments warned of, the connection string from the environment; 11. the cache private.
The differential lexer test is tests/test_lexing.py.
"""
from __future__ import annotations

import concurrent.futures
import os
import stat
import subprocess
import sys
from pathlib import Path

import live_server
import pytest
from conftest import build_small_db, sha256

from duckask.utils.access.roles import ScopedDatabase, User, add_user, load_users
from duckask.utils.config import load_settings
from duckask.utils.db import live_sql
from duckask.utils.db.database import open_database
from duckask.utils.llm import ScriptedLLM
from duckask.utils.settings import private_dir

httpx = pytest.importorskip("httpx", reason="httpx is in the test extra")
pytest.importorskip("fastapi", reason="the server extra is not installed (pip install 'duckask[server]')")

from duckask.utils.app.server import create_app  # noqa: E402

NESTED = ("SELECT name FROM teams WHERE false /*/* */ UNION ALL SELECT name || chr(58) || salary FROM salaries "
          "/* /* */* */ */")
HR = [
    "CREATE TABLE teams (id integer PRIMARY KEY, name text)", "INSERT INTO teams VALUES (1, 'Expos'), (2, 'Mets')",
    "CREATE TABLE salaries (name text, salary integer)", "INSERT INTO salaries VALUES ('Ann', 91234), ('Bob', 87654)",
    "CREATE TABLE ssns (name text, ssn text)", "INSERT INTO ssns VALUES ('Ann', '078-05-1120')",
    "CREATE SCHEMA hr", "CREATE TABLE hr.teams (id integer, budget integer)", "INSERT INTO hr.teams VALUES (1, 777)",
    "CREATE VIEW payroll AS SELECT name, salary FROM salaries",
    "CREATE TABLE oddities (id integer, b bytea, d date, ip inet, tv tsvector, x xid, n numeric)",
    "INSERT INTO oddities VALUES (1, '\\x00ff10'::bytea, 'infinity', '10.1.2.3/8', 'a fat cat'::tsvector, '42'::xid, "
    "'NaN'), (2, NULL, '2024-01-31', '::1', NULL, NULL, 1.5)",
]
SECRETS = ("91234", "87654", "078-05-1120", "777")


@pytest.fixture(scope="module")
def hr(postgres) -> str:
    return postgres.create_database("round4", *HR)


@pytest.fixture
def live(hr, isolated_env):
    return open_database(hr, load_settings(source_mode="live", source_sample_rows=20))


def _reader(live, *tables):
    return ScopedDatabase(live, User("rita", "reader", frozenset(tables), key_id="rita"))


def _leaks(out) -> list[str]:
    text = "" if out.df is None else out.df.to_csv()
    return [s for s in SECRETS if s in text]


# -- 1. one reading ------------------------------------------------------------------------------------------------
def test_the_nested_comment_probe_reads_as_duckdb_and_postgres_read_it(live):
    out = _reader(live, "teams").run(NESTED)
    assert out.ok and len(out.df) == 0 and not _leaks(out), out
    assert "salaries" not in out.engine_sql and "UNION" not in out.engine_sql


@pytest.mark.parametrize("sql", [
    NESTED.replace("WHERE false", "WHERE true"),
    "SELECT name FROM teams /* a */* 0 UNION ALL SELECT ssn FROM ssns -- */",
    "SELECT name FROM teams WHERE name = $$x$$ /*/* */ UNION ALL SELECT ssn FROM ssns /* /* */* */ */",
    "SELECT name FROM teams WHERE name = E'\\'' UNION ALL SELECT ssn FROM ssns --'",
    "SELECT name FROM teams\u00a0UNION ALL SELECT ssn FROM ssns",
])
def test_no_comment_or_quoting_trick_reads_a_table_the_reader_may_not(live, sql):
    out = _reader(live, "teams").run(sql)
    assert not _leaks(out), (sql, out)
    assert not out.ok or "ssns" not in (out.engine_sql or "")


def test_the_engines_tree_is_checked_against_the_askers_own_allowlist():
    names = {"teams": ("public", "teams"), "salaries": ("public", "salaries"), "hr_teams": ("hr", "teams")}
    ok = live_sql.to_engine("SELECT name FROM teams", "postgresql", names, {}, allowed={("public", "teams")})
    assert '"public"."teams"' in ok
    for sql in ("SELECT name FROM salaries", "SELECT budget FROM hr_teams", "SELECT t.name FROM teams t, salaries s"):
        with pytest.raises(live_sql.EngineRefusal, match="this user may read"):
            live_sql.to_engine(sql, "postgresql", names, {}, allowed={("public", "teams")})


# -- 2. CTEs by scope ------------------------------------------------------------------------------------------------
def test_a_cte_name_does_not_hide_a_table_outside_its_scope(hr, isolated_env, postgres):
    only = open_database(hr, load_settings(source_mode="live", source_sample_rows=5, source_tables=["teams"]))
    for sql in ("SELECT s.* FROM (WITH salaries AS (SELECT 1 AS x) SELECT * FROM salaries) a, salaries s",
                "WITH a AS (SELECT 1 AS x) SELECT * FROM a, (WITH ssns AS (SELECT 2 AS y) SELECT * FROM ssns) b, ssns"):
        out = only.run(sql)
        assert not out.ok and not _leaks(out), (sql, out)
    out = only.run('WITH "Ssns" AS (SELECT 1 AS x) SELECT * FROM ssns')        # the CTE to DuckDB: the CTE sent
    assert out.ok and out.df.to_dict("records") == [{"x": 1}] and out.engine_sql.count('"ssns"') == 2
    names = {"teams": ("public", "teams")}
    sent = live_sql.to_engine("WITH Teams AS (SELECT 1 AS x) SELECT * FROM teams", "postgresql", names)
    assert sent == 'WITH "teams" AS (SELECT 1 AS x) SELECT * FROM "teams"'      # one spelling, a CTE to both
    for engine_sql in ("SELECT * FROM salaries", "WITH s AS (SELECT 1) SELECT * FROM (SELECT * FROM s) a, salaries",
                       'WITH "S" AS (SELECT 1) SELECT * FROM s'):
        with pytest.raises(live_sql.EngineRefusal, match="no CTE in scope"):
            live_sql.check_engine(engine_sql, "postgresql", {("public", "teams")})


# -- 5. live: not bound, not sent ------------------------------------------------------------------------------------
@pytest.mark.parametrize("sql", [
    "SELECT 'teams'::regclass::oid AS o", "SELECT 1::oid AS o", "SELECT 1::regrole AS r", "SELECT user AS u",
    "SELECT current_role AS r", "SELECT system_user AS s", "SELECT session_user AS s", "SELECT ctid FROM teams",
    "SELECT t.xmin FROM teams t", "SELECT tableoid FROM teams", "SELECT name FROM teams WHERE nope = 1",
])
def test_what_the_catalog_cannot_bind_or_names_the_server_is_not_answered(live, sql):
    out = live.run(sql)
    assert not out.ok, (sql, out)
    assert "duck" not in (out.error or "").lower().replace("duckdb", "").replace("duckask", ""), out.error


def test_a_column_named_like_a_session_word_is_read_as_the_column():
    names = {"people": ("public", "people")}
    assert live_sql.to_engine("SELECT user FROM people", "postgresql", names) == \
        'SELECT "user" FROM "public"."people" AS "people"'


# -- 6. types ----------------------------------------------------------------------------------------------------
def test_every_postgres_type_is_mapped_or_said_never_a_500(live):
    from duckask.utils.api.present_sql import outcome_json

    out = live.run("SELECT id, b, d, ip, tv, x, n FROM oddities ORDER BY id")
    assert out.ok, out.error
    first = out.df.iloc[0].tolist()
    assert first[1] == b"\x00\xff\x10" and first[2] == "infinity" and first[3] == "10.1.2.3/8"
    assert first[4].startswith("<tsvector value") and first[5] == 42
    rows = outcome_json(out)["rows"]
    assert rows[0][1] == "\\x00ff10" and rows[1][3] == "::1"


# -- 7. sessions ----------------------------------------------------------------------------------------------------
SLOW = "SELECT count(*) AS n FROM teams a, generate_series(1, 3000000) g"


@pytest.mark.slow
def test_sessions_are_bounded_per_user_and_queue_per_source(hr, isolated_env, postgres):
    db = open_database(hr, load_settings(source_mode="live", source_sample_rows=5, live_sessions=2,
                                         live_sessions_per_user=1, cache_dir=str(isolated_env / "sessions")))
    rita, sam = _reader(db, "teams"), ScopedDatabase(db, User("sam", "reader", frozenset({"teams"}), key_id="sam"))
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        outs = list(pool.map(lambda who: who.run(SLOW, timeout_s=0.3), [rita, rita, rita, sam]))
    busy = [o for o in outs if o.status == "refused"]
    assert busy and all("live_sessions_per_user" in o.error for o in busy), [o.error for o in outs]
    assert any(o.ok or o.status == "timeout" for o in outs)
    opened = postgres.sql("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'duckask'")[0][0]
    assert opened <= 2 + 4          # at most the bound running at once, plus the idle pool


# -- 3. a card shows the statement that runs -----------------------------------------------------------------------
@pytest.fixture
def site(tmp_path, isolated_env):
    started = []

    def start(roles=None, **more):
        db = tmp_path / "nba.duckdb"
        if not db.exists():
            build_small_db(db)
        users_file, keys = tmp_path / f"users{len(started)}.yaml", {}
        for name, role in (("rita", "reader"), ("pat", "proposer"), ("ann", "approver")):
            keys[name] = add_user(users_file, name, role)
        if roles:
            import yaml
            data = yaml.safe_load(users_file.read_text())
            data["roles"] = roles
            users_file.write_text(yaml.safe_dump(data))
        settings = load_settings(None, cache_dir=str(tmp_path / "cache"), analyzer="rules", **more)
        app = create_app(str(db), llm=ScriptedLLM({}), settings=settings, users=load_users(users_file),
                         allow_writes=True, router="rules")
        url, server = live_server.start(app)
        started.append(server)

        def post(path, body, who):
            return httpx.post(f"{url}{path}", json=body, headers={"Authorization": f"Bearer {keys[who]}"}, timeout=120)

        def get(path, who):
            return httpx.get(f"{url}{path}", headers={"Authorization": f"Bearer {keys[who]}"}, timeout=120)

        return post, get, db, settings

    yield start
    for s in started:
        s.should_exit = True


@pytest.mark.slow
def test_a_card_shows_estimates_and_runs_one_reading_of_the_statement(site):
    post, _get, db, _settings = site()
    sql = "UPDATE teams SET city = 'X' WHERE id = 3 /*/* */ OR true /* /* */* */ */"   # sqlglot read "OR true"
    card = post("/api/sql", {"sql": sql}, "pat").json()["write"]
    assert card["sql"].strip() == "UPDATE teams SET city = 'X' WHERE id = 3" and card["estimated_rows"] == 1, card
    assert "where id = 3: 1 row" in card["explanation"] and "TRUE" not in card["explanation"].upper()
    done = post(f"/api/writes/{card['id']}", {"decision": "approve"}, "ann")
    assert done.status_code == 200 and done.json()["status"] == "written", done.text
    rows = post("/api/sql", {"sql": "SELECT id, city FROM teams ORDER BY id"}, "ann").json()["rows"]
    assert rows == [[1, "Los Angeles"], [2, "Boston"], [3, "X"]]


@pytest.mark.slow
def test_a_card_whose_statement_reads_another_table_is_refused_by_the_binder_alone(site, monkeypatch):
    from duckask.utils.state import writes

    monkeypatch.setattr(writes, "reads_sql", lambda c: [])          # the card's own list of reads says nothing
    monkeypatch.setattr(writes, "estimate_sql", lambda c: None)
    post, _get, db, _settings = site(roles={"proposer": {"tables": ["teams"]}, "approver": {"tables": ["teams"]}})
    digest = sha256(db)
    r = post("/api/sql", {"sql": "UPDATE teams SET city = 'x' WHERE id IN (SELECT team_id FROM players "
                                 "WHERE points > 20)"}, "pat")
    card = r.json()["write"]
    assert card["decision"] == "blocked" and "players" in card["blocked"] and "pat (proposer) may not read" in \
        card["blocked"], card
    assert sha256(db) == digest


# -- 4. bytes --------------------------------------------------------------------------------------------------------
#: 40 values of 5 MB from data, not from a maker (one string made once by an aggregate, then one per row).
WIDE = "SELECT (SELECT string_agg('x', '') FROM range(5000000)) AS s FROM generate_series(1, 40)"

@pytest.mark.slow
def test_a_result_is_bounded_in_bytes_on_a_real_server(site):
    post, _get, _db, _settings = site(result_bytes=2_000_000, cell_bytes=100_000)
    made = post("/api/sql", {"sql": "SELECT repeat(chr(120), 5000000) AS s FROM generate_series(1, 40)"}, "rita")
    assert made.status_code == 400 and "repeat() with a count of 5,000,000" in made.json()["error"]
    r = post("/api/sql", {"sql": WIDE}, "rita")
    assert r.status_code == 200 and len(r.content) < 3_000_000, len(r.content)
    body = r.json()
    assert body["truncated"] and "result_bytes" in body["cut"] and "cell_bytes" in body["cut"]
    assert body["rows"][0][0].endswith("… [cut: 5,000,000 bytes]") and len(body["rows"]) < 40


def test_the_byte_budget_cuts_cells_and_stops_the_fetch(tmp_path, isolated_env):
    from conftest import duckdb_file

    path = duckdb_file(tmp_path / "b.duckdb", "CREATE TABLE t AS SELECT i, repeat('é', 1000) AS s FROM range(500) r(i)")
    db = open_database(path, load_settings(result_bytes=20_000, cell_bytes=600))
    out = db.run("SELECT i, s FROM t ORDER BY i")
    assert out.ok and out.truncated and 0 < len(out.df) < 500
    assert out.df["s"][0].startswith("é" * 300) and out.df["s"][0].endswith("… [cut: 2,000 bytes]")
    assert "result_bytes=20,000" in out.cut and "cell_bytes=600" in out.cut
    small = db.run("SELECT i FROM t WHERE i < 3 ORDER BY i")
    assert small.ok and not small.truncated and small.cut is None and small.df["i"].tolist() == [0, 1, 2]


# -- 8. caps under concurrency; 9. the public 503s -------------------------------------------------------------------
@pytest.mark.slow
def test_concurrent_keeps_stay_within_the_cap_and_none_is_a_500(site, monkeypatch):
    from duckask.utils.knowledge import keep as keep_module

    monkeypatch.setattr(keep_module, "MAX_PAIRS", 5)
    monkeypatch.setattr(keep_module, "MAX_WAITING_PER_PROPOSER", 4)
    post, get, _db, settings = site()

    def keep(i, who):
        return post("/api/examples", {"question": f"How many teams have an id above {i}?",
                                      "sql": f"SELECT count(*) FROM teams WHERE id > {i % 3}"}, who).status_code

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        kept = list(pool.map(lambda i: keep(i, "ann"), range(16)))
        suggested = list(pool.map(lambda i: keep(100 + i, "pat"), range(12)))
    assert sorted(set(kept)) == [200, 429] and kept.count(200) == 5, kept
    assert sorted(set(suggested)) == [200, 429] and suggested.count(200) == 4, suggested
    from duckask.utils.state import audit_log

    entries = [e for e in audit_log(settings).entries() if e["kind"] == "example"]
    assert sum(e["outcome"] == "committed" for e in entries) == 5
    assert sum(e["decision"] == "pending" for e in entries) == 4


@pytest.mark.slow
def test_a_typed_write_with_a_damaged_audit_and_the_suggestions_with_the_state_down_are_503s(site, tmp_path):
    post, get, db, settings = site()
    audit = settings.resolved_audit_file
    audit.write_bytes(b"this is not a DuckDB file" * 100)
    r = post("/api/ask", {"question": "DELETE FROM teams WHERE id = 3"}, "pat")
    assert r.status_code == 503 and str(audit) not in r.text, r.text
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    post, get, db, settings = site(state=f"postgresql://duckask:secret@127.0.0.1:{port}/state")
    r = get("/api/examples/suggested", "ann")
    assert r.status_code == 503 and "secret" not in r.text, r.text


# -- 10. passwords; 11. the cache --------------------------------------------------------------------------------
@pytest.mark.slow
def test_a_password_in_the_arguments_is_warned_of_and_the_environment_is_read(tmp_path, isolated_env):
    env = {**os.environ, "DUCKASK_DB": str(build_small_db(tmp_path / "env.duckdb"))}
    duckask = Path(sys.executable).parent / "duckask"
    warned = subprocess.run([str(duckask), "sql", "SELECT 1", "--db", "postgresql://u:hunter2@127.0.0.1:1/x"],
                            capture_output=True, text=True, env=env, timeout=120)
    assert "a password is in the command's arguments" in warned.stderr and "hunter2" not in warned.stderr
    quiet = subprocess.run([str(duckask), "sql", "SELECT count(*) AS n FROM teams"], capture_output=True, text=True,
                           env=env, timeout=120)
    assert quiet.returncode == 0 and "3" in quiet.stdout and "password" not in quiet.stderr, quiet.stderr


def test_the_cache_folder_is_0700_and_its_files_0600(tmp_path):
    cache = tmp_path / "cache"
    (cache / "remote").mkdir(parents=True, mode=0o755)
    cache.chmod(0o755)
    (cache / "remote" / "shop.duckdb").write_text("sample rows")
    (cache / "remote" / "shop.duckdb").chmod(0o644)
    assert load_settings(None, cache_dir=str(cache)).resolved_cache_dir == cache
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert stat.S_IMODE((cache / "remote").stat().st_mode) == 0o700
    assert stat.S_IMODE((cache / "remote" / "shop.duckdb").stat().st_mode) == 0o600
    fresh = private_dir(tmp_path / "new" / "cache")
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o700


def test_a_url_without_its_password_reads_it_from_pgpassword_or_pgpass(postgres, hr, tmp_path, isolated_env,
                                                                        monkeypatch):
    from pg_support import PASSWORD, USER

    bare = f"postgresql://{USER}@127.0.0.1:{postgres.port}/round4"
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    out = open_database(bare, load_settings(source_mode="live", source_sample_rows=5,
                                            cache_dir=str(tmp_path / "env"))).run("SELECT count(*) AS n FROM teams")
    assert out.ok and out.df["n"][0] == 2, out.error
    monkeypatch.delenv("PGPASSWORD")
    pgpass = tmp_path / "pgpass"
    pgpass.write_text(f"127.0.0.1:{postgres.port}:round4:{USER}:{PASSWORD.replace(':', chr(92) + ':')}\n")
    pgpass.chmod(0o600)
    monkeypatch.setenv("PGPASSFILE", str(pgpass))
    out = open_database(bare, load_settings(source_mode="live", source_sample_rows=5,
                                            cache_dir=str(tmp_path / "pgpass-cache"))).run("SELECT name FROM teams")
    assert out.ok and sorted(out.df["name"]) == ["Expos", "Mets"], out.error
