"""Security, round three (issue 52): each probe of the third review as a row, against real uvicorn servers on
127.0.0.1 with users (reader, proposer, approver) where the probe was made that way, each asserting the refusal and
that nothing changed (the table's rows, the database file's bytes, the audit's entries, the kept pairs).

1. a write card that hides a second write (a data-modifying WITH): T3, blocked, the rows as they were after an
   approver tries; an honest INSERT's card and audit name the one write it runs; a read holding a write is refused
   at the statement check, and the engine's binder catches a nested write on its own;
2. a template (and the browse list, and a suggestion) never tells a reader of a table she may not read, in both
   orders of asking; a refusal is never cached for everyone;
3. caps: a pair's SQL and question (413), suggestions per proposer and in all, pairs per database (429), on HTTP,
   MCP, the CLI and a notebook's ``r.fix``; the matcher's cost is a benchmark (``bench/matcher.py``), not a test;
4. suggestions and pairs bound to the key's and the database file's identity, not a name or a path;
5. a suggestion that replaces a kept pair says so, in the list and in the audit;
6. an examples file over a table a reader may not read: her question is answered, not a 500;
7. number slots take ASCII digits only (the MCP lone-surrogate rows are in tests/test_mcp.py's MALFORMED);
9. one public message for a damaged audit log or an unreachable state, its path and driver text only in the log;
10. ``duckask examples`` prints kept questions escaped.
"""
from __future__ import annotations

import json
import os

import live_server
import pytest
from conftest import build_small_db, sha256

from duckask.utils.config import load_settings
from duckask.utils.knowledge.shared import knowledge_store
from duckask.utils.llm import ScriptedLLM
from duckask.utils.state import audit_log

pytest.importorskip("fastapi", reason="the server extra is not installed (pip install 'duckask[server]')")
httpx = pytest.importorskip("httpx", reason="httpx is in the test extra")

from duckask.utils.access.roles import add_user, load_users  # noqa: E402
from duckask.utils.app.server import create_app  # noqa: E402
from duckask.utils.knowledge import keep as keep_module  # noqa: E402

LAKERS_Q = "What are the points of Lakers players?"
CELTICS_Q = "What are the points of Celtics players?"
NOBODY_Q = "What are the points of Martians players?"
PAIR_SQL = ("SELECT p.name, p.points FROM players p JOIN teams t ON p.team_id = t.id WHERE t.name = 'Lakers' "
            "ORDER BY p.points DESC")


def _settings(tmp_path, **more):
    return load_settings(None, cache_dir=str(tmp_path / "cache"), analyzer="rules", **more)


class Site:
    def __init__(self, url, db, tmp_path, keys):
        self.url, self.db, self.tmp_path, self.keys = url, db, tmp_path, keys

    def auth(self, name):
        return {"Authorization": f"Bearer {self.keys[name]}"} if name else {"Origin": self.url}

    def post(self, path, body, who=None):
        return httpx.post(f"{self.url}{path}", json=body, headers=self.auth(who), timeout=60)

    def get(self, path, who=None):
        return httpx.get(f"{self.url}{path}", headers=self.auth(who), timeout=60)

    def count(self, table):
        return self.post("/api/sql", {"sql": f"SELECT count(*) FROM {table}"}, "ann").json()["rows"][0][0]

    def entries(self):
        return audit_log(_settings(self.tmp_path)).entries()


@pytest.fixture
def site(tmp_path, isolated_env):
    started = []

    def start(llm=None, users=(("rita", "reader"), ("pat", "proposer"), ("ann", "approver")), roles=None,
              allow_writes=True, **more):
        db = tmp_path / "nba.duckdb"
        if not db.exists():
            build_small_db(db)
        keys = {}
        users_file = tmp_path / f"users{len(started)}.yaml"
        for name, role in users:
            keys[name] = add_user(users_file, name, role)
        if roles:                                 # allowlists by role, as an admin writes them
            import yaml
            data = yaml.safe_load(users_file.read_text())
            data["roles"] = roles
            users_file.write_text(yaml.safe_dump(data))
        app = create_app(str(db), llm=llm or ScriptedLLM({}), settings=_settings(tmp_path, **more),
                         users=load_users(users_file), allow_writes=allow_writes, router="rules")
        url, server = live_server.start(app)
        started.append(server)
        return Site(url, db, tmp_path, keys)

    yield start
    for s in started:
        s.should_exit = True


# -- 1. a card names every write it runs ---------------------------------------------------------------------------
HIDDEN_WRITES = [   # (the statement a proposer allowed `teams` sends, what it would also have changed)
    ("WITH d AS (DELETE FROM teams WHERE id > 1 RETURNING 1) INSERT INTO teams VALUES (9, 'Knicks', 'New York')",
     "DELETE on teams"),
    ("WITH d AS (DELETE FROM players RETURNING 1) INSERT INTO teams VALUES (9, 'Knicks', 'New York')",
     "DELETE on players"),
    ("WITH d AS (UPDATE players SET points = 0 RETURNING 1) INSERT INTO teams VALUES (9, 'Knicks', 'New York')",
     "UPDATE on players"),
    ("INSERT INTO teams BY NAME (WITH d AS (DELETE FROM players RETURNING 1) SELECT 9 AS id, 'Knicks' AS name)",
     "DELETE on players"),
    ("INSERT INTO teams BY NAME WITH d AS (DELETE FROM players RETURNING 1) SELECT 9 AS id, 'Knicks' AS name",
     "DELETE on players"),
    ("DELETE FROM teams WHERE id IN (WITH d AS (DELETE FROM players RETURNING team_id) SELECT team_id FROM d)",
     "DELETE on players"),
    ("UPDATE teams SET city = 'x' WHERE id = (WITH d AS (INSERT INTO arenas VALUES (9, 'x', 1, 1) RETURNING "
     "team_id) SELECT max(team_id) FROM d)", "INSERT on arenas"),
    ("WITH a AS (SELECT 1), d AS MATERIALIZED (DELETE FROM players RETURNING 1) INSERT INTO teams "
     "VALUES (9, 'Knicks', 'New York')", "DELETE on players"),
]


def _rows(site):
    return {t: site.count(t) for t in ("teams", "players", "arenas")}


@pytest.mark.slow
@pytest.mark.parametrize("sql, hidden", HIDDEN_WRITES, ids=[f"hidden-{i}" for i in range(len(HIDDEN_WRITES))])
def test_a_card_that_would_hide_a_second_write_is_blocked_and_nothing_changes(site, sql, hidden):
    s = site()
    before, digest = _rows(s), sha256(s.db)
    r = s.post("/api/sql", {"sql": sql}, "pat")
    assert r.status_code == 400, r.text
    card = r.json()["write"]
    assert card["tier"] == 3 and card["decision"] == "blocked" and card["runs"] == []
    assert hidden in r.json()["error"] and "a card would name one write and run more" in r.json()["error"]
    approve = s.post(f"/api/writes/{card['id']}", {"decision": "approve"}, "ann")
    assert approve.status_code == 404                           # never pending, so no approver can run it
    assert _rows(s) == before and sha256(s.db) == digest
    [entry] = s.entries()
    assert (entry["tier"], entry["decision"], entry["outcome"], entry["runs"]) == (3, "blocked", "not_run", None)


@pytest.mark.slow
def test_an_insert_card_names_the_one_write_it_runs_and_the_audit_records_it(site):
    s = site()
    sql = "INSERT INTO teams VALUES (9, 'Knicks', 'New York')"
    card = s.post("/api/sql", {"sql": sql}, "pat").json()["write"]
    assert (card["tier"], card["runs"], card["estimated_rows"]) == (1, ["INSERT on teams"], 1)
    done = s.post(f"/api/writes/{card['id']}", {"decision": "approve"}, "ann")
    assert done.status_code == 200 and done.json()["status"] == "written", done.text
    assert _rows(s) == {"teams": 4, "players": 6, "arenas": 3}
    [entry] = s.entries()
    assert (entry["runs"], entry["outcome"], entry["actual_rows"]) == ("INSERT on teams", "committed", 1)


@pytest.mark.slow
def test_a_model_proposing_a_hidden_write_from_plain_english_gets_the_same_blocked_card(site):
    hidden = HIDDEN_WRITES[1][0]
    s = site(llm=ScriptedLLM({"ProposeWrite": [f"```sql\n{hidden}\n```\nExplanation: Adds the Knicks."] * 3}))
    before = _rows(s)
    r = s.post("/api/ask", {"question": "add the Knicks of New York as team 9"}, "pat").json()
    card = r.get("write") or {}
    assert card.get("tier") == 3 and card.get("decision") == "blocked", r
    assert _rows(s) == before


@pytest.mark.slow
@pytest.mark.parametrize("sql", ["WITH d AS (DELETE FROM players RETURNING *) SELECT * FROM d",
                                 "WITH d AS (DELETE FROM players RETURNING 1) SELECT count(*) FROM teams",
                                 "SELECT * FROM (WITH d AS (UPDATE players SET points = 0 RETURNING *) SELECT * "
                                 "FROM d) AS x"])
def test_a_read_holding_a_write_is_refused_at_the_statement_check(site, sql):
    s = site()
    before = _rows(s)
    r = s.post("/api/sql", {"sql": sql}, "ann")
    assert r.status_code == 400 and "inside the query (a data-modifying WITH)" in r.json()["error"], r.text
    assert _rows(s) == before and s.entries() == []


def test_the_engines_binder_catches_a_nested_write_on_its_own(tmp_path, settings, monkeypatch):
    """With the tree check switched off, DuckDB's binder (the write bound on the database) still blocks it."""
    from duckask.utils.db.database import open_database
    from duckask.utils.state import writes
    from duckask.utils.writes import tiers

    db = build_small_db(tmp_path / "nba.duckdb")
    monkeypatch.setattr(tiers, "nested_writes", lambda tree: [])
    on = load_settings(None, cache_dir=settings.cache_dir, allow_writes=True)
    card = writes.propose(HIDDEN_WRITES[1][0], open_database(db, on), on)
    assert card.tier == 3 and card.decision == "blocked" and card.runs == []
    assert "binder reads 2 changes" in card.blocked and "DELETE on" in card.blocked and "INSERT on" in card.blocked


def test_classify_names_the_write_an_honest_statement_runs():
    from duckask.utils.writes.tiers import classify

    assert classify("DELETE FROM teams WHERE id = 1").runs == ["DELETE on teams"]
    assert classify("COMMENT ON TABLE teams IS 'x'").runs == ["COMMENT ON teams"]
    assert classify("ALTER TABLE teams DROP COLUMN city").tier == 3
    assert classify("ALTER TABLE teams ALTER COLUMN city SET DEFAULT 'x'").runs == ["ALTER TABLE on teams"]
    for sql, _ in HIDDEN_WRITES:
        assert classify(sql).tier == 3 and classify(sql).runs == []


# -- 2 and 6. what you may not read, a template may not tell ------------------------------------------------------
READER_ROLES = {"reader": {"tables": ["teams"]}}        # rita may read teams, not players


def _reply(s, question, who):
    r = s.post("/api/ask", {"question": question}, who)
    assert r.status_code == 200, r.text
    return r.json()


def _tells_nothing(reply: dict) -> None:
    text = json.dumps(reply)
    assert reply.get("path") != "template" and not reply.get("template"), reply.get("path")
    assert PAIR_SQL not in text and "kept pair" not in text and "'Celtics'" not in text


@pytest.mark.slow
@pytest.mark.parametrize("order", ["approver-first", "reader-first"])
def test_a_template_never_tells_a_reader_of_a_table_she_may_not_read(site, order):
    s = site(roles=READER_ROLES)
    kept = s.post("/api/examples", {"question": LAKERS_Q, "sql": PAIR_SQL}, "ann")
    assert kept.status_code == 200 and kept.json()["status"] == "kept", kept.text
    if order == "approver-first":
        assert _reply(s, CELTICS_Q, "ann")["path"] == "template"       # the value index holds players' teams now
    for q in (CELTICS_Q, NOBODY_Q):                                     # a real name and one not in the table alike
        _tells_nothing(_reply(s, q, "rita"))
    assert LAKERS_Q not in s.get("/api/browse", "rita").json()["suggestions"]
    assert LAKERS_Q in s.get("/api/browse", "ann").json()["suggestions"]
    after = _reply(s, CELTICS_Q, "ann")                               # her refusal was not cached for anyone
    assert after["path"] == "template" and after["rows"] == [["Jayson Tatum", 28], ["Jaylen Brown", 22]]


@pytest.mark.slow
def test_a_suggestion_over_a_table_the_approver_may_not_read_is_not_listed_to_her(site):
    s = site(users=(("pat", "proposer"), ("ann", "approver"), ("vera", "approver")),
             roles={"approver": {"tables": ["teams"]}})
    # pat (no allowlist) suggests a pair over players; the approvers' role reads teams only
    r = s.post("/api/examples", {"question": LAKERS_Q, "sql": PAIR_SQL}, "pat")
    assert r.json()["status"] == "suggested", r.text
    assert s.get("/api/examples/suggested", "vera").json()["suggested"] == []
    no = s.post(f"/api/examples/suggested/{r.json()['audit_id']}", {"decision": "keep"}, "vera")
    assert no.status_code == 400 and "players" in no.json()["error"]
    assert knowledge_store(_settings(s.tmp_path)).list(str(s.db.resolve())) == []


@pytest.mark.slow
def test_an_examples_file_over_a_table_a_reader_may_not_read_is_no_500_for_her(site, tmp_path):
    examples = tmp_path / "examples.yaml"
    examples.write_text(f"- question: {LAKERS_Q}\n  sql: \"{PAIR_SQL}\"\n")
    s = site(roles=READER_ROLES, examples=str(examples))
    first = s.post("/api/ask", {"question": "How many teams are there?"}, "rita")   # she asks before anyone
    assert first.status_code == 200, first.text
    _tells_nothing(_reply(s, CELTICS_Q, "rita"))
    assert LAKERS_Q not in s.get("/api/browse", "rita").json()["suggestions"]
    assert _reply(s, CELTICS_Q, "ann")["path"] == "template"


# -- 3. caps -------------------------------------------------------------------------------------------------------
BIG_SQL = "SELECT name FROM teams WHERE id IN (" + ", ".join(["1"] * 3000) + ")"      # ~9 KB, runs, returns rows


@pytest.mark.slow
def test_caps_on_http_a_large_pair_is_413_and_a_flood_of_suggestions_is_429(site, monkeypatch):
    s = site()
    big = s.post("/api/examples", {"question": "Which team is number one?", "sql": BIG_SQL}, "ann")
    assert big.status_code == 413 and "limited to 8,000 characters" in big.json()["error"]
    long_q = s.post("/api/examples", {"question": "Which team " + "really " * 80 + "?", "sql": "SELECT 1"}, "ann")
    assert long_q.status_code == 413 and "limited to 400 characters" in long_q.json()["error"]
    monkeypatch.setattr(keep_module, "MAX_WAITING_PER_PROPOSER", 3)
    for i in range(3):
        ok = s.post("/api/examples", {"question": f"Which team has id {i}?", "sql": "SELECT name FROM teams"}, "pat")
        assert ok.json()["status"] == "suggested", ok.text
    flood = s.post("/api/examples", {"question": "Which team has id 9?", "sql": "SELECT name FROM teams"}, "pat")
    assert flood.status_code == 429 and "pat has 3 suggestions waiting" in flood.json()["error"]
    assert len(s.entries()) == 3                                        # nothing recorded for the refused ones


@pytest.mark.slow
def test_caps_on_http_waiting_in_all_and_pairs_per_database(site, monkeypatch):
    s = site(users=(("pat", "proposer"), ("paula", "proposer"), ("ann", "approver")))
    monkeypatch.setattr(keep_module, "MAX_WAITING", 2)
    assert s.post("/api/examples", {"question": "Which team is first?", "sql": "SELECT name FROM teams"},
                  "pat").json()["status"] == "suggested"
    assert s.post("/api/examples", {"question": "Which team is second?", "sql": "SELECT name FROM teams"},
                  "paula").json()["status"] == "suggested"
    full = s.post("/api/examples", {"question": "Which team is third?", "sql": "SELECT name FROM teams"}, "paula")
    assert full.status_code == 429 and "2 suggestions wait" in full.json()["error"]
    monkeypatch.setattr(keep_module, "MAX_PAIRS", 1)
    assert s.post("/api/examples", {"question": LAKERS_Q, "sql": PAIR_SQL}, "ann").json()["status"] == "kept"
    more = s.post("/api/examples", {"question": "How many teams?", "sql": "SELECT count(*) FROM teams"}, "ann")
    assert more.status_code == 429 and "1 kept pairs" in more.json()["error"]
    same = s.post("/api/examples", {"question": LAKERS_Q.upper(), "sql": PAIR_SQL + " LIMIT 5"}, "ann")
    assert same.status_code == 200 and same.json()["replaces"] == same.json()["example_id"]   # a replacement fits


def test_caps_on_the_cli_mcp_and_a_notebook(tmp_path, isolated_env, capsys):
    from duckask.utils.app.cli import main
    from duckask.utils.knowledge import teach
    from duckask.utils.knowledge.examples import ExampleError

    db = build_small_db(tmp_path / "nba.duckdb")
    assert main(["teach", "--db", str(db), "Which team is number one?", BIG_SQL]) != 0
    assert "limited to 8,000 characters" in capsys.readouterr().err
    with pytest.raises(ExampleError, match="limited to 8,000 characters"):        # r.fix and /fix call teach
        teach("Which team is number one?", BIG_SQL, str(db), load_settings(None))
    mcp = pytest.importorskip("mcp")
    from duckask.utils.app.mcp_server import build_server

    server = build_server(str(db), llm=ScriptedLLM({}))
    import anyio

    async def call():
        return await server.call_tool("teach", {"question": "Which team is number one?", "sql": BIG_SQL})

    with pytest.raises(mcp.server.mcpserver.exceptions.ToolError, match="limited to 8,000 characters"):
        anyio.run(call)
    assert knowledge_store(load_settings(None)).list(str(db.resolve())) == []


def test_an_examples_file_pair_over_the_cap_is_refused_naming_it(tmp_path, isolated_env):
    from duckask.utils.db.database import open_database
    from duckask.utils.knowledge import examples_for
    from duckask.utils.knowledge.examples import ExampleError

    db = build_small_db(tmp_path / "nba.duckdb")
    f = tmp_path / "ex.yaml"
    f.write_text(json.dumps([{"question": "Which team is number one?", "sql": BIG_SQL}]))
    with pytest.raises(ExampleError, match=r"ex.yaml:1: the SQL of a kept pair is limited"):
        examples_for(open_database(db), load_settings(None, examples=str(f)))


# -- 4. identities, not names or paths ----------------------------------------------------------------------------
@pytest.mark.slow
def test_another_servers_paul_with_another_key_does_not_see_this_pauls_suggestions(site):
    one = site(users=(("paul", "proposer"), ("ann", "approver")))
    two = site(users=(("paul", "proposer"), ("ann", "approver")))           # the same names, other keys
    assert one.keys["paul"] != two.keys["paul"]
    r = one.post("/api/examples", {"question": "How many teams?", "sql": "SELECT count(*) FROM teams"}, "paul")
    assert r.json()["status"] == "suggested"
    assert [x["question"] for x in one.get("/api/examples/suggested", "paul").json()["suggested"]] == \
        ["How many teams?"]
    assert two.get("/api/examples/suggested", "paul").json()["suggested"] == []
    [entry] = one.entries()
    assert entry["user"] == "paul" and entry["user_id"].startswith("key:") and entry["db_id"].endswith(
        f"#{os.stat(one.db).st_dev}:{os.stat(one.db).st_ino}")


def test_pairs_are_bound_to_the_database_file_not_its_path(tmp_path, isolated_env):
    from duckask.utils.db.database import open_database
    from duckask.utils.knowledge import examples_for
    from duckask.utils.knowledge.keep import keep

    db = build_small_db(tmp_path / "nba.duckdb")
    s = load_settings(None)
    keep(open_database(db, s), s, "How many teams?", "SELECT count(*) FROM teams")
    assert [e.question for e in examples_for(open_database(db, s), s)] == ["How many teams?"]
    other = build_small_db(tmp_path / "other.duckdb")
    os.replace(other, db)                            # another database at the same path
    assert examples_for(open_database(db, s), s) == []


# -- 5. a replacing suggestion says what it replaces -------------------------------------------------------------
@pytest.mark.slow
def test_a_suggestion_that_replaces_a_kept_pair_says_so_in_the_list_and_the_audit(site):
    s = site()
    kept = s.post("/api/examples", {"question": LAKERS_Q, "sql": PAIR_SQL}, "ann").json()
    pair = kept["example_id"]
    r = s.post("/api/examples", {"question": LAKERS_Q.lower(), "sql": PAIR_SQL + " LIMIT 1"}, "pat").json()
    assert r["status"] == "suggested" and r["replaces"] == pair
    [listed] = s.get("/api/examples/suggested", "ann").json()["suggested"]
    assert listed["replaces"] == pair
    assert s.entries()[0]["detail"] == f"replaces pair #{pair}"
    done = s.post(f"/api/examples/suggested/{r['audit_id']}", {"decision": "keep"}, "ann").json()
    assert done["status"] == "kept" and done["replaces"] == pair and done["example_id"] == pair
    assert s.entries()[0]["detail"] == f"kept as pair #{pair}, replacing pair #{pair}'s SQL"


# -- 7. number slots: ASCII digits only -----------------------------------------------------------------------------
@pytest.mark.parametrize("asked", ["٢٠٠٨", "２００８", "२००८", "²⁰⁰⁸"])
def test_a_number_slot_takes_ascii_digits_only(asked):
    from duckask.utils.knowledge.examples import Example
    from duckask.utils.knowledge.templates import match

    pair = Example("How many home runs were hit in 2007?", "SELECT sum(hr) FROM batting WHERE year_id = 2007", "1")
    assert match(f"How many home runs were hit in {asked}?", pair, None) is None
    t = match("How many home runs were hit in 2008?", pair, None)
    assert t is not None and t.sql.endswith("year_id = 2008")


# -- 9. one public message for the audit log and the state -------------------------------------------------------
@pytest.mark.slow
def test_a_damaged_audit_log_is_one_public_message_without_its_path(site, tmp_path):
    s = site()
    audit = _settings(tmp_path).resolved_audit_file
    audit.parent.mkdir(parents=True, exist_ok=True)
    audit.write_bytes(b"this is not a DuckDB file" * 100)
    digest = sha256(audit)
    for path, body in (("/api/examples", {"question": "How many teams?", "sql": "SELECT count(*) FROM teams"}),
                       ("/api/sql", {"sql": "DELETE FROM teams WHERE id = 3"})):
        r = s.post(path, body, "pat")
        assert r.status_code == 503, r.text
        assert r.json()["error"] == "the audit log cannot be written or read, so nothing that needs a record runs; " \
                                    "the server's log says why"
        assert str(audit) not in r.text and str(tmp_path) not in r.text
    assert sha256(audit) == digest and s.count("teams") == 3


@pytest.mark.slow
def test_an_unreachable_state_is_one_public_message_without_its_address(site):
    import socket

    with socket.socket() as sock:             # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    s = site(state=f"postgresql://duckask:secret@127.0.0.1:{port}/state")
    r = s.post("/api/examples", {"question": "How many teams?", "sql": "SELECT count(*) FROM teams"}, "ann")
    assert r.status_code == 503, r.text
    assert "the shared state cannot be reached" in r.json()["error"]
    assert str(port) not in r.text and "secret" not in r.text and "libpq" not in r.text.lower()


# -- 10. duckask examples escapes what it prints ----------------------------------------------------------------------
def test_duckask_examples_prints_kept_questions_escaped(tmp_path, isolated_env, capsys):
    from duckask.utils.app.cli import main
    from duckask.utils.knowledge.examples import Example
    from duckask.utils.knowledge.store import database_identity

    db = build_small_db(tmp_path / "nba.duckdb")
    evil = "How many teams?\x1b[2J\x1b]0;pwned\x07\u202e?"
    knowledge_store(load_settings(None)).add(database_identity(db), Example(evil, "SELECT count(*) FROM teams"))
    assert main(["examples", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out and "\x07" not in out
    assert r"How many teams?\x1b[2J\x1b]0;pwned\x07\u202e?" in out


def test_the_word_index_ranks_as_the_full_scan_does():
    """``retrieve`` (the index) and ``ranked`` (every pair) agree; a template the full scan finds, the index finds."""
    from duckask.nodes.match_template import best
    from duckask.utils.knowledge.examples import Example
    from duckask.utils.knowledge.retrieve import ranked, retrieve
    from duckask.utils.knowledge.templates import match

    stats = ["home runs", "hits", "walks", "stolen bases", "runs batted in"]
    pairs = [Example(f"How many {s} were hit in {1990 + i}?", f"SELECT sum(x) FROM batting WHERE year_id = {1990 + i}",
                     str(n)) for n, (i, s) in enumerate((i, s) for i in range(30) for s in stats)]
    for q in ["How many walks were hit in 2005?", "How many home runs?", "Which team won in 1999?", "walks"]:
        assert retrieve(q, pairs, 3, 0.3) == ranked(q, pairs, 3, 0.3)
        full = [(t, ex, -i) for i, ex in enumerate(pairs) if (t := match(q, ex, None)) is not None]
        chosen = min(full, key=lambda f: (len(f[0].slots), f[2]))[:2] if full else None
        got = best(q, pairs, None)
        assert (got[1].id if got else None) == (chosen[1].id if chosen else None)
