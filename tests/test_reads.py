"""What a SELECT reads, CTEs resolved by scope (``utils/db/reads.py``), checked against the fixture table and
against DuckDB's own binder; and the read allowlist built on it (``access.ScopedDatabase``): a CTE named
after a forbidden table hides nothing outside its scope (issue 30, findings 1 and 4)."""
from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
import yaml
from conftest import build_small_db, sha256

from duckask.utils.access.roles import ScopedDatabase, User
from duckask.utils.db.database import open_database
from duckask.utils.db.reads import resolve
from duckask.utils.state import writes

CASES = yaml.safe_load((Path(__file__).parent / "fixtures" / "reads.yaml").read_text())


@pytest.fixture(scope="module")
def binder():
    con = duckdb.connect()
    con.execute("CREATE TABLE people (id INTEGER); CREATE TABLE teams (id INTEGER); CREATE SCHEMA s; "
                "CREATE TABLE s.x (id INTEGER)")
    yield con
    con.close()


@pytest.mark.parametrize("case", CASES, ids=[c["sql"][:60] for c in CASES])
def test_the_resolver_reads_what_the_fixture_says(case):
    reads = resolve(case["sql"])
    assert reads is not None
    assert sorted(str(t) for t in reads.tables) == sorted(case["tables"])


@pytest.mark.parametrize("case", CASES, ids=[c["sql"][:60] for c in CASES])
def test_the_binder_finds_no_table_the_resolver_missed(binder, case):
    """DuckDB's binder (``get_table_names``) resolves CTEs itself: every table it finds, the resolver found."""
    bound = {t.lower() for t in binder.get_table_names(case["sql"], qualified=False)}
    assert bound <= resolve(case["sql"]).names


def test_what_does_not_parse_is_none_and_functions_are_listed():
    assert resolve("SELEC 1") is None and resolve("") is None
    reads = resolve("SELECT current_setting('x'), count(*) FROM range(3), read_csv('f.csv')")
    assert {"current_setting", "count_star"} & set(reads.functions) and reads.table_functions == ["range", "read_csv"]


# -- the read allowlist: a reader of teams and players on teams/players/arenas ----------------------------
READER = User("rita", "reader", frozenset({"teams", "players", "team_view", "café", "ǆemal", "sales.orders"}))

#: (sql, refused because of) -- None: answered.
ALLOWLIST = [
    ("SELECT name FROM arenas", "arenas"),
    ("WITH arenas AS (SELECT 1) SELECT * FROM main.arenas", "arenas"),                    # the probe's form
    ("WITH arenas AS (SELECT 1) SELECT * FROM memory.main.arenas", "arenas"),
    ("WITH arenas AS (SELECT 1) SELECT * FROM teams, (SELECT capacity FROM main.arenas) a", "arenas"),
    ("SELECT * FROM (WITH arenas AS (SELECT 1 AS x) SELECT * FROM arenas) a, (SELECT name FROM arenas) b", "arenas"),
    ("SELECT * FROM teams WHERE id IN (WITH arenas AS (SELECT 1) SELECT 1) AND id IN (SELECT team_id FROM arenas)",
     "arenas"),
    ("WITH a AS (SELECT * FROM arenas), arenas AS (SELECT 1) SELECT * FROM a", "arenas"),
    ("WITH arenas AS (SELECT * FROM arenas) SELECT * FROM arenas", "arenas"),
    ("WITH RECURSIVE arenas AS (SELECT * FROM arenas UNION ALL SELECT * FROM arenas WHERE false) SELECT 1", "arenas"),
    ("SELECT (SELECT max(capacity) FROM arenas) AS c FROM teams", "arenas"),
    ("SELECT * FROM arena_view", "arena_view"),                                   # a view is named as itself
    ("SELECT * FROM team_view", None),                                            # an allowlisted view
    ("WITH arenas AS (SELECT 1 AS x) SELECT * FROM arenas", None),                # a CTE that reads nothing
    ("WITH arenas AS (SELECT * FROM teams) SELECT count(*) FROM arenas", None),
    ("SELECT t.name, count(*) FROM teams t JOIN players p ON p.team_id = t.id GROUP BY ALL", None),
    ("SELECT * FROM duckdb_tables()", "system function"),                         # the database's own refusal
    ("SELEC name FROM teams", "does not parse"),
    ("SHOW arenas", "arenas"),
    ("DESCRIBE arenas", "arenas"),
    ("SUMMARIZE arenas", "arenas"),
    ("SHOW TABLES", "tables"),
    ("DESCRIBE teams", None),
    # issue 43, finding 1: a name is its schema's; "teams" on the list is main.teams, never hr.teams
    ("SELECT * FROM hr.teams", "hr.teams"),
    ("SELECT * FROM nba.hr.teams", "hr.teams"),
    ("SELECT * FROM HR.Teams", "hr.teams"),
    ('SELECT * FROM "hr"."teams"', "hr.teams"),
    ("SELECT t.name FROM teams t JOIN hr.teams h USING (id)", "hr.teams"),
    ("SELECT * FROM teams WHERE id IN (SELECT id FROM hr.teams)", "hr.teams"),
    ("WITH x AS (SELECT * FROM hr.teams) SELECT * FROM x", "hr.teams"),
    ("WITH teams AS (SELECT 1) SELECT * FROM hr.teams", "hr.teams"),
    ("DESCRIBE hr.teams", "hr.teams"),
    ("SUMMARIZE hr.teams", "hr.teams"),
    ("SELECT * FROM hr.team_view", "hr.team_view"),                         # a view in another schema
    ("SELECT * FROM sales.orders", None),                                   # a schema the list names
    ("SELECT * FROM orders", "orders"),                                     # ... is not main's
    ("SELECT * FROM main.teams", None),
    ("SELECT * FROM nba.main.teams", None),
    ("SELECT * FROM TEAMS", None),                                          # ASCII letters fold, as DuckDB's
    # finding 10: DuckDB folds ASCII only; "CAFÉ" is another table than café
    ('SELECT * FROM "CAFÉ"', "needs cafÉ"),
    ("SELECT * FROM CAFÉ", "needs cafÉ"),
    ("SELECT * FROM café", None),
    ('SELECT * FROM "Ǆemal"', "needs Ǆemal"),
    ('SELECT * FROM "ǆemal"', None),
    # finding 11: an enum's labels are the catalog's, whatever the allowlist
    ("SELECT enum_range(NULL::mood)", "type mood"),
    ("SELECT 'happy'::mood", "type mood"),
    ("SELECT enum_range(NULL::hr.grade)", "type hr.grade"),
]


@pytest.fixture(scope="module")
def scoped(tmp_path_factory, test_cache_dir):
    from duckask.utils.config import Settings

    path = build_small_db(tmp_path_factory.mktemp("scoped") / "nba.duckdb")
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE VIEW team_view AS SELECT id, name FROM teams")
        con.execute("CREATE VIEW arena_view AS SELECT * FROM arenas")
        con.execute("CREATE SCHEMA hr; CREATE TABLE hr.teams AS SELECT id, 'secret ' || name AS salary FROM teams; "
                    "CREATE VIEW hr.team_view AS SELECT * FROM hr.teams; CREATE SCHEMA sales; "
                    "CREATE TABLE sales.orders (id INTEGER); CREATE TABLE orders (id INTEGER); "
                    "CREATE TYPE mood AS ENUM ('happy', 'secret label'); CREATE TYPE hr.grade AS ENUM ('a'); "
                    'CREATE TABLE "café" (a INTEGER); CREATE TABLE "CAFÉ" (secret INTEGER); '
                    'CREATE TABLE "ǆemal" (a INTEGER); CREATE TABLE "Ǆemal" (secret INTEGER)')
    return path, ScopedDatabase(open_database(path, Settings(cache_dir=str(test_cache_dir))), READER)


@pytest.mark.parametrize("sql, why", ALLOWLIST, ids=[s[:60] for s, _ in ALLOWLIST])
def test_the_allowlist_reads_the_statements_structure(scoped, sql, why):
    path, db = scoped
    before = sha256(path)
    out = db.run(sql)
    if why is None:
        assert out.ok, out.error
    else:
        assert out.status == "refused" and why in out.error, out.error
        assert out.df is None
    assert sha256(path) == before


#: A proposer allowed teams and players: what their write reads is checked as their reads are (finding 4:
#: the row estimate of an UPDATE whose WHERE reads a forbidden table told one bit per proposal).
WRITE_READS = [
    "UPDATE teams SET city = 'x' WHERE id IN (SELECT team_id FROM arenas WHERE capacity > 19000)",
    "UPDATE teams SET city = (SELECT max(name) FROM arenas)",
    "UPDATE teams SET city = 'x' FROM arenas WHERE arenas.team_id = teams.id",
    "DELETE FROM players WHERE team_id IN (SELECT team_id FROM arenas)",
    "DELETE FROM players USING arenas WHERE arenas.team_id = players.team_id",
    "INSERT INTO teams SELECT id + 100, name, 'x' FROM arenas",
    "UPDATE teams SET city = 'x' RETURNING (SELECT count(*) FROM arenas)",
    "WITH arenas AS (SELECT 1) UPDATE teams SET city = 'x' WHERE id IN (SELECT team_id FROM main.arenas)",
    "DELETE FROM arenas WHERE capacity > 19000",
    "CREATE VIEW big AS SELECT * FROM arenas",
]


@pytest.mark.parametrize("sql", WRITE_READS, ids=[s[:60] for s in WRITE_READS])
def test_a_proposers_write_reads_only_their_tables(tmp_path, test_cache_dir, sql):
    from duckask.utils.config import Settings

    path = build_small_db(tmp_path / "nba.duckdb")
    settings = Settings(cache_dir=str(test_cache_dir), allow_writes=True, audit_file=str(tmp_path / "audit.duckdb"))
    db = ScopedDatabase(open_database(path, settings), User("paul", "proposer", frozenset({"teams", "players"})))
    before = sha256(path)
    card = writes.propose(sql, db, settings, user="paul")
    assert card.decision == "blocked" and "arenas" in card.blocked and "paul" in card.blocked, card.blocked
    assert card.estimated_rows is None and sha256(path) == before
    allowed = writes.propose("UPDATE teams SET city = 'x' WHERE id IN (SELECT team_id FROM players)", db, settings,
                             user="paul")
    assert allowed.decision == "pending" and allowed.estimated_rows is not None


# -- the probe's form on a real server: every route that reads ---------------------------------------------
CTE_LEAK = "WITH arenas AS (SELECT 1) SELECT name, capacity FROM main.arenas"


def test_a_cte_named_after_a_forbidden_table_leaks_through_no_route(tmp_path, settings):
    """As a reader allowed teams and players: the probe's CTE form through /api/sql, /api/export, /api/ask (the
    model writes it) and the stream is refused with the table named; the database file is unchanged."""
    pytest.importorskip("fastapi", reason="the server extra is not installed (pip install 'duckask[server]')")
    import httpx
    import live_server

    from duckask.utils.access.roles import add_user, load_users
    from duckask.utils.app.server import create_app
    from duckask.utils.llm import ScriptedLLM

    f = tmp_path / "users.yaml"
    key = add_user(f, "rita", "reader")
    data = yaml.safe_load(f.read_text())
    data["roles"] = {"reader": {"tables": ["teams", "players"]}}
    f.write_text(yaml.safe_dump(data))
    db = build_small_db(tmp_path / "nba.duckdb")
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE SCHEMA hr; CREATE TABLE hr.teams AS SELECT id, 'secret ' || name AS salary FROM teams")
    before = sha256(db)
    reply = f"```sql\n{CTE_LEAK}\n```"
    llm = ScriptedLLM({"SQLGenerator": [reply] * 4, "ErrorFixer": [reply] * 4})
    app = create_app(str(db), llm=llm, settings=settings, users=load_users(f), router="rules", analyzer="rules",
                     clarify="off")
    url, server = live_server.start(app)
    headers = {"Authorization": f"Bearer {key}"}
    try:
        for path, body in [("/api/sql", {"sql": CTE_LEAK}), ("/api/export", {"sql": CTE_LEAK, "format": "csv"})]:
            r = httpx.post(url + path, json=body, headers=headers, timeout=30)
            assert r.status_code == 400 and "this needs arenas, which rita (reader) may not read" in r.json()["error"]
        for path, body in [("/api/sql", {"sql": "SELECT * FROM hr.teams"}),          # issue 43, finding 1
                           ("/api/export", {"sql": "SELECT * FROM hr.teams", "format": "csv"})]:
            r = httpx.post(url + path, json=body, headers=headers, timeout=30)
            assert r.status_code == 400 and "this needs hr.teams, which rita" in r.json()["error"], r.text
            assert "secret" not in r.text
        assert httpx.get(url + "/api/schema", headers=headers, timeout=30).status_code == 200
        r = httpx.post(url + "/api/ask", json={"question": "What is the capacity of each arena?"}, headers=headers,
                       timeout=60).json()
        assert r["status"] != "answered" and "19068" not in str(r) and "TD Garden" not in str(r)
        stream = httpx.post(url + "/api/ask/stream", json={"question": "What is the capacity of each arena?"},
                            headers=headers, timeout=60).text
        assert '"status": "answered"' not in stream and "19068" not in stream and "TD Garden" not in stream
    finally:
        server.should_exit = True
    assert sha256(db) == before
