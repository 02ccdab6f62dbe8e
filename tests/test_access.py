"""Users and roles on a shared server (``utils/access/roles.py``, issue 23): hashed keys, reader < proposer <
approver < admin, four eyes on schema changes, per-role read allowlists, who proposed and who approved in
the audit. The HTTP half runs against a real uvicorn server on 127.0.0.1 (``live_server``); the file's
bytes show that nothing a role may not do ever ran."""
from __future__ import annotations

import logging

import live_server
import pytest
import yaml
from conftest import build_small_db, sha256

from duckask.utils.access.roles import (
    AccessError,
    User,
    add_user,
    hash_key,
    key_id,
    load_users,
    may_decide,
    may_see,
    outside,
    owns,
    shown,
)
from duckask.utils.db.reads import TableRef

pytest.importorskip("fastapi", reason="the server extra is not installed (pip install 'duckask[server]')")
httpx = pytest.importorskip("httpx", reason="httpx is in the test extra")

from duckask.utils.app.server import create_app  # noqa: E402
from duckask.utils.llm import ScriptedLLM  # noqa: E402
from duckask.utils.writes.audit import AuditLog  # noqa: E402

pytestmark = pytest.mark.slow        # a server and the users command: not in the fast set (pytest -m "" runs it)

DELETE = "DELETE FROM players WHERE team_id = 1"
ADD_COLUMN = "ALTER TABLE players ADD COLUMN nickname VARCHAR"
CHANGE_REPLY = f"```sql\n{DELETE}\n```\nExplanation: Removes team 1's players."


# -- the users file -----------------------------------------------------------------------------------------
def test_add_user_stores_only_the_hash_and_prints_the_key_once(tmp_path):
    f = tmp_path / "users.yaml"
    key = add_user(f, "ann", "approver")
    text = f.read_text()
    assert key.startswith("dk_") and key not in text and hash_key(key) in text
    assert oct(f.stat().st_mode & 0o777) == "0o600"
    found = load_users(f).find(key)
    assert (found.name, found.role, found.tables) == ("ann", "approver", None)
    assert found.id == f"key:{key_id(hash_key(key))}" and hash_key(key) not in found.id     # the key, not the name
    assert load_users(f).find("dk_wrong") is None and load_users(f).find("") is None
    with pytest.raises(AccessError, match="already has a user ann"):
        add_user(f, "ann", "reader")


@pytest.mark.parametrize("users, message", [
    ([{"name": "ann", "role": "boss", "key_sha256": "0" * 64}], "role must be one of reader, proposer"),
    ([{"name": "ann", "role": "reader", "key_sha256": "my-secret-key"}], "a plain key is never stored"),
    ([{"name": "a b", "role": "reader", "key_sha256": "0" * 64}], "a name of letters"),
])
def test_a_bad_users_file_says_what_is_wrong(tmp_path, users, message):
    f = tmp_path / "users.yaml"
    f.write_text(yaml.safe_dump({"users": users}))
    with pytest.raises(AccessError, match=message):
        load_users(f)


@pytest.mark.parametrize("role, readable", [
    ({"tables": ["Teams", "players"]}, frozenset({"main.teams", "main.players"})),
    ({"tables": ["hr.Teams", "main.players"]}, frozenset({"hr.teams", "main.players"})),     # a schema, or main
    ({"tables": []}, frozenset()),                     # an empty list is no table (it used to mean every one)
    ({}, None),                                        # only a role without the key reads every table
    (None, None),
])
def test_a_roles_tables_is_exactly_its_list_and_empty_means_none(tmp_path, role, readable):
    f = tmp_path / "users.yaml"
    f.write_text(yaml.safe_dump({"users": [{"name": "rita", "role": "reader", "key_sha256": "0" * 64}],
                                 "roles": {"reader": role}}))
    [(_, rita)] = load_users(f).users
    assert rita.tables == readable
    if readable is not None:
        refs = [TableRef("teams"), TableRef("players"), TableRef("arenas"), TableRef("teams", "hr")]
        assert outside(rita, refs, "nba") == sorted(shown(t) for t in {"main.teams", "main.players", "main.arenas",
                                                                       "hr.teams"} - readable)


@pytest.mark.parametrize("role", [{"tables": None}, {"tables": "teams"}, {"tables": [1]}, ["teams"]])
def test_a_roles_tables_that_is_not_a_list_of_names_is_refused(tmp_path, role):
    f = tmp_path / "users.yaml"
    f.write_text(yaml.safe_dump({"users": [{"name": "rita", "role": "reader", "key_sha256": "0" * 64}],
                                 "roles": {"reader": role}}))
    with pytest.raises(AccessError, match=r"roles: reader: write \{tables: \[table, ...\]\} .*\[\] for none"):
        load_users(f)


def test_an_empty_allowlist_on_a_server_reads_no_table(tmp_path, settings):
    key = add_user(tmp_path / "users.yaml", "rita", "reader")
    data = yaml.safe_load((tmp_path / "users.yaml").read_text())
    (tmp_path / "users.yaml").write_text(yaml.safe_dump({**data, "roles": {"reader": {"tables": []}}}))
    db = build_small_db(tmp_path / "nba.duckdb")
    app = create_app(str(db), llm=ScriptedLLM({}), settings=settings, users=load_users(tmp_path / "users.yaml"))
    url, server = live_server.start(app)
    try:
        r = httpx.post(f"{url}/api/sql", json={"sql": "SELECT name FROM teams"},
                       headers={"Authorization": f"Bearer {key}"}, timeout=30)
    finally:
        server.should_exit = True
    assert r.status_code == 400 and "this needs teams, which rita (reader) may not read" in r.json()["error"]


def test_rules_of_the_roles():
    class Card:
        tier, user, proposer_id = 2, "ann", "key:1"
    ann, bob, cy = User("ann", "approver", key_id="1"), User("bob", "approver", key_id="2"), User("cy", "proposer")
    assert may_decide(ann, Card, four_eyes=False) is None
    assert "four_eyes" in may_decide(ann, Card, four_eyes=True) and may_decide(bob, Card, four_eyes=True) is None
    assert "four_eyes" in may_decide(User("bob", "approver", key_id="1"), Card, four_eyes=True)   # the same key
    assert "four_eyes" in may_decide(User("ann", "approver", key_id="9"), Card, four_eyes=True)   # the same name
    assert "needs approver" in may_decide(cy, Card, four_eyes=False)
    assert owns(ann, Card) and not owns(User("ann", "proposer", key_id="9"), Card)     # a namesake is not her
    assert may_see(User("ann", "proposer", key_id="1"), Card) and not may_see(User("ann", "proposer"), Card)
    assert outside(User("r", "reader", frozenset({"teams"})), [TableRef("teams"), TableRef("players")], "x") == \
        ["players"]
    assert outside(User("r", "reader"), [TableRef("players")], "x") == []


# -- on a server ----------------------------------------------------------------------------------------
@pytest.fixture
def team(tmp_path, settings, caplog):
    """A server with four users (readers limited to teams and players), four-eyes on, writes on."""
    caplog.set_level(logging.DEBUG)
    f = tmp_path / "users.yaml"
    keys = {name: add_user(f, name, role) for name, role in
            [("rita", "reader"), ("paul", "proposer"), ("ann", "approver"), ("bob", "approver"), ("ada", "admin")]}
    data = yaml.safe_load(f.read_text())
    data.update(roles={"reader": {"tables": ["teams", "players"]}}, four_eyes=True)
    f.write_text(yaml.safe_dump(data))
    db = build_small_db(tmp_path / "nba.duckdb")
    audit = tmp_path / "audit.duckdb"
    llm = ScriptedLLM({"ProposeWrite": [CHANGE_REPLY],
                       "SQLGenerator": ["```sql\nSELECT name, capacity FROM arenas\n```"]})
    app = create_app(str(db), llm=llm, settings=settings, allow_writes=True, audit_file=str(audit),
                     users=load_users(f, "shared-key"), router="rules", analyzer="rules")
    url, server = live_server.start(app)

    def call(who, path, body=None, method="post"):
        headers = {"Authorization": f"Bearer {keys[who]}"} if who in keys else \
            ({"X-API-Key": who} if who else {})
        if method == "get":
            return httpx.get(f"{url}{path}", headers=headers, timeout=30)
        return httpx.post(f"{url}{path}", json=body, headers=headers, timeout=30)

    yield call, db, audit, keys
    server.should_exit = True


def test_an_unknown_key_is_401_and_health_stays_open(team):
    call, *_ = team
    assert call("nobody-key", "/api/sql", {"sql": "SELECT 1"}).status_code == 401
    assert call(None, "/api/sql", {"sql": "SELECT 1"}).status_code == 401
    assert call(None, "/api/health", method="get").status_code == 200


def test_a_reader_reads_but_cannot_propose(team):
    call, db, audit, _ = team
    before = sha256(db)
    assert call("rita", "/api/sql", {"sql": "SELECT count(*) FROM players"}).json()["rows"] == [[6]]
    r = call("rita", "/api/sql", {"sql": DELETE})
    assert r.status_code == 403 and "rita is a reader: proposing a write needs proposer" in r.json()["error"]
    r = call("rita", "/api/ask", {"question": "delete the players of team 1"})    # the same, asked in words
    assert r.status_code == 403 and "needs proposer" in r.json()["error"]
    assert sha256(db) == before and AuditLog(audit).entries() == []


def test_a_readers_table_allowlist_refuses_other_tables_with_the_reason(team):
    call, *_ = team
    r = call("rita", "/api/sql", {"sql": "SELECT name FROM arenas"})
    assert r.status_code == 400 and "this needs arenas, which rita (reader) may not read" in r.json()["error"]
    r = call("rita", "/api/ask", {"question": "What is the capacity of each arena?"})
    assert r.json()["status"] == "error" and "arenas" in r.json()["answer"]
    assert call("ann", "/api/sql", {"sql": "SELECT name FROM arenas"}).status_code == 200      # no allowlist


def test_a_proposer_proposes_an_approver_approves_and_the_audit_names_both(team):
    call, db, audit, _ = team
    before = sha256(db)
    card = call("paul", "/api/sql", {"sql": DELETE}).json()["write"]
    assert card["decision"] == "pending" and card["user"] == "paul" and sha256(db) == before
    r = call("paul", f"/api/writes/{card['id']}", {"decision": "approve"})
    assert r.status_code == 403 and "paul is a proposer: deciding a write needs approver" in r.json()["error"]
    assert [c["id"] for c in call("rita", "/api/writes", method="get").json()["pending"]] == []     # not hers
    assert [c["id"] for c in call("paul", "/api/writes", method="get").json()["pending"]] == [card["id"]]
    assert [c["id"] for c in call("ann", "/api/writes", method="get").json()["pending"]] == [card["id"]]
    done = call("ann", f"/api/writes/{card['id']}", {"decision": "approve"}).json()
    assert done["status"] == "written" and sha256(db) != before
    (entry,) = AuditLog(audit).entries()
    assert (entry["user"], entry["decided_by"], entry["outcome"]) == ("paul", "ann", "committed")


def test_a_change_asked_in_words_by_a_proposer_waits_for_an_approver(team):
    call, db, audit, _ = team
    before = sha256(db)
    r = call("paul", "/api/ask", {"question": "delete the players of team 1"}).json()
    assert r["status"] == "pending" and r["write"]["request"] == "delete the players of team 1"
    assert sha256(db) == before
    assert call("bob", f"/api/writes/{r['write']['id']}", {"decision": "reject"}).json()["status"] == "rejected"
    (entry,) = AuditLog(audit).entries()
    assert (entry["proposed_by"], entry["decided_by"], entry["decision"]) == ("model", "bob", "rejected")


def test_four_eyes_stops_an_approver_approving_their_own_schema_change(team):
    call, db, audit, _ = team
    card = call("ann", "/api/sql", {"sql": ADD_COLUMN}).json()["write"]
    r = call("ann", f"/api/writes/{card['id']}", {"decision": "approve"})
    assert r.status_code == 403 and "four_eyes" in r.json()["error"]
    assert call("bob", f"/api/writes/{card['id']}", {"decision": "approve"}).json()["status"] == "written"
    own = call("ann", "/api/sql", {"sql": DELETE}).json()["write"]          # T1: four eyes asks nothing
    assert call("ann", f"/api/writes/{own['id']}", {"decision": "approve"}).json()["status"] == "written"


def test_a_proposer_may_withdraw_their_own_and_the_shared_key_is_an_admin(team):
    call, db, audit, _ = team
    card = call("paul", "/api/sql", {"sql": DELETE}).json()["write"]
    assert call("paul", f"/api/writes/{card['id']}", {"decision": "reject"}).json()["status"] == "rejected"
    card = call("shared-key", "/api/sql", {"sql": DELETE}).json()["write"]
    assert card["user"] == "api key"
    assert call("shared-key", f"/api/writes/{card['id']}", {"decision": "approve"}).json()["status"] == "written"


def test_keys_never_reach_the_logs_or_the_audit(team, caplog):
    call, db, audit, keys = team
    card = call("paul", "/api/sql", {"sql": DELETE}).json()["write"]
    call("ann", f"/api/writes/{card['id']}", {"decision": "approve"})
    call("nobody-key", "/api/sql", {"sql": "SELECT 1"})
    stored = str(AuditLog(audit).entries()) + audit.read_bytes().decode("latin-1")
    for key in keys.values():
        assert key not in stored and key not in caplog.text


def test_the_users_command_prints_the_key_once_and_serve_refuses_a_bad_file(tmp_path, isolated_env):
    import subprocess
    import sys
    from pathlib import Path

    from conftest import clean_env

    duckask = Path(sys.executable).parent / "duckask"
    env = clean_env(isolated_env)
    f = tmp_path / "users.yaml"
    p = subprocess.run([str(duckask), "users", "add", str(f), "ann", "--role", "approver"], capture_output=True,
                       text=True, env=env, timeout=60)
    key = p.stdout.strip()
    assert p.returncode == 0 and key.startswith("dk_") and "not shown again" in p.stderr
    assert key not in f.read_text() and load_users(f).find(key).role == "approver"
    again = subprocess.run([str(duckask), "users", "add", str(f), "ann", "--role", "reader"], capture_output=True,
                           text=True, env=env, timeout=60)
    assert again.returncode == 1 and "already has a user ann" in again.stderr
    f.write_text("users: [{name: bob, role: reader, key_sha256: plain-key}]")
    bad = subprocess.run([str(duckask), "serve", "--users", str(f), "--port", "1"], capture_output=True, text=True,
                         env=env, timeout=60)
    assert bad.returncode == 2 and "a plain key is never stored" in bad.stderr
