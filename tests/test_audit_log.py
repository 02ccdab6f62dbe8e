"""The audit log against a damaged file, a remote database and a hostile entry (issue 30, findings 10 and 11).

- a damaged log is never replaced or set aside: every write is refused with an error naming the file, reading
  it is an error naming it too, questions and read-only SQL still work, and the file's bytes stay as they were;
- a connection string's entries are keyed by its redacted form, the same when written and when read
  (``duckask audit --db URL``), never a path under the working directory and never the password;
- ``duckask audit`` escapes control and bidi characters, so an entry cannot drive the terminal showing it.
"""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from conftest import build_small_db, sha256

from duckask.utils.api import ask
from duckask.utils.app.cli import EXIT_FAIL, EXIT_OK, main
from duckask.utils.config import load_settings
from duckask.utils.llm import ScriptedLLM
from duckask.utils.state import writes
from duckask.utils.writes.audit import AuditError, AuditLog, database_key

GARBAGE = b"not an audit log " * 300
DELETE = "DELETE FROM teams WHERE id = 1"


@pytest.fixture
def damaged(tmp_path, isolated_env, monkeypatch):
    """(database, audit log holding garbage bytes); DUCKASK_AUDIT_FILE points the CLI at it."""
    audit = tmp_path / "audit.duckdb"
    audit.write_bytes(GARBAGE)
    monkeypatch.setenv("DUCKASK_AUDIT_FILE", str(audit))
    return build_small_db(tmp_path / "nba.duckdb"), audit


def _untouched(db, audit, db_before) -> None:
    assert audit.read_bytes() == GARBAGE and sha256(db) == db_before
    assert sorted(p.name for p in audit.parent.iterdir()) == ["audit.duckdb", "nba.duckdb"]   # nothing set aside


def test_a_damaged_audit_log_refuses_every_write_and_is_left_as_it_is(damaged, capsys):
    db, audit = damaged
    before = sha256(db)
    with pytest.raises(AuditError, match=f"cannot write the audit log {audit}: it is damaged .*no write runs"):
        ask(sql=DELETE, db=str(db), allow_writes=True, llm=ScriptedLLM({}))
    assert main(["sql", DELETE, "--db", str(db), "--allow-writes"]) == EXIT_FAIL
    err = capsys.readouterr().err
    assert f"cannot write the audit log {audit}: it is damaged" in err and "never replaces it" in err
    assert "Traceback" not in err
    _untouched(db, audit, before)


def test_a_damaged_audit_log_leaves_reads_working_and_audit_says_why(damaged, capsys):
    db, audit = damaged
    before = sha256(db)
    r = ask("How many teams are there?", db=str(db), llm=ScriptedLLM({"SQLGenerator": ["SELECT count(*) FROM teams"]}))
    assert r.ok and r.df.values.tolist() == [[3]]
    assert main(["sql", "SELECT count(*) AS n FROM teams", "--db", str(db), "--json"]) == EXIT_OK
    capsys.readouterr()
    assert main(["audit"]) == EXIT_FAIL
    assert f"cannot read the audit log {audit}: it is damaged" in capsys.readouterr().err
    _untouched(db, audit, before)


def test_chat_refuses_the_write_and_goes_on(damaged, capsys, monkeypatch):
    import io

    import duckask.utils.api as api

    db, audit = damaged
    before = sha256(db)
    monkeypatch.setattr(api, "get_llm", lambda settings=None: ScriptedLLM({}))
    monkeypatch.setattr("sys.stdin", io.StringIO(f"/sql {DELETE}\n/sql SELECT count(*) AS n FROM teams\n"))
    main(["chat", "--db", str(db), "--json", "--allow-writes", "--analyzer", "rules"])
    refused, answered = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert refused["status"] == "error" and f"cannot write the audit log {audit}" in refused["answer"]
    assert answered["status"] == "answered" and answered["rows"] == [[3]]
    _untouched(db, audit, before)


# -- a remote database's entries --------------------------------------------------------------------------
URL = "postgres://ann:s3cret@db.example.com:5432/shop"


def test_a_connection_strings_entries_are_keyed_by_its_redacted_form(tmp_path, isolated_env, empty_cwd, capsys):
    from duckask.utils.db.remote import redact

    settings = load_settings(None, audit_file=str(tmp_path / "audit.duckdb"))
    remote = SimpleNamespace(source=redact(URL), identity="copy#1:2")       # as open_database names a remote database
    card = writes.propose(DELETE, remote, settings)      # writes are off: blocked, and recorded
    [entry] = AuditLog(settings.resolved_audit_file).entries()
    assert entry["db"] == database_key(URL) == database_key(redact(URL)) == "postgres://ann:***@db.example.com:5432/shop"
    assert "s3cret" not in entry["db"] and str(empty_cwd) not in entry["db"]
    for given in (URL, redact(URL), f" {URL} "):           # `duckask audit --db` with or without the password
        assert main(["audit", "--db", given, "--json", "--config", _config(tmp_path)]) == EXIT_OK
        assert [e["id"] for e in json.loads(capsys.readouterr().out)] == [card.id]
    assert database_key("nba.duckdb") == str(empty_cwd / "nba.duckdb")      # a file: its resolved path, as before


def _config(tmp_path) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(f"audit_file: {tmp_path / 'audit.duckdb'}\n")
    return str(path)


# -- escaping -------------------------------------------------------------------------------------------------
HOSTILE = {"sql": "DELETE FROM t\x1b[2J\x1b]0;owned\x07 WHERE a = '\u202eevil\u2066'",
           "request": "delete \x9b31m the rows\r\nfake line", "detail": "blocked \x1b[1A\u202d", "user": "mal\x1bory",
           "session": "s\u2069"}


def test_audit_escapes_control_and_bidi_characters(tmp_path, isolated_env, capsys):
    config = _config(tmp_path)
    AuditLog(tmp_path / "audit.duckdb").record(decision="blocked", tier=1, db="x", **HOSTILE)
    assert main(["audit", "--config", config]) == EXIT_OK
    out = capsys.readouterr().out
    unsafe = [c for c in out if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f
              or 0x202a <= ord(c) <= 0x202e or 0x2066 <= ord(c) <= 0x2069]
    assert unsafe == []
    assert r"\x1b[2J" in out and r"\u202eevil\u2066" in out and r"\x9b31m" in out and r"\x0d\x0afake line" in out
    assert r"mal\x1bory" in out and r"blocked \x1b[1A\u202d" in out
    assert len(out.strip().splitlines()) == 4                 # a stored newline cannot add a line of its own
    assert main(["audit", "--config", config, "--json"]) == EXIT_OK
    [entry] = json.loads(capsys.readouterr().out)             # JSON escapes them itself, and keeps them exact
    assert entry["sql"] == HOSTILE["sql"] and entry["request"] == HOSTILE["request"]


def test_the_write_card_escapes_what_an_agent_wrote():
    """The card ``duckask decide`` and the chat print: a request, statement or explanation carrying terminal
    escapes or bidi controls is shown escaped, on one line each."""
    from duckask.utils.writes.card import WriteCard
    from duckask.utils.writes.tiers import classify

    sql = "DELETE FROM t WHERE s = '\x1b[2J\u202eevil'"
    card = WriteCard.of(classify(sql), sql, db="x", session="s", user="u", request="drop\x1b[1A\u202d it",
                        proposed_by="model")
    card.model_says, card.explanation = "fine\x9b31m", "Deletes\r\nfake line"
    text = card.text()
    assert not [c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f
                or 0x202a <= ord(c) <= 0x202e or 0x2066 <= ord(c) <= 0x2069]
    assert r"\x1b[2J\u202eevil" in text and r"drop\x1b[1A\u202d it" in text and r"\x0d\x0afake line" in text
    assert len(text.splitlines()) == 8      # the header, asked, model says, SQL, runs, what it does, rows, entry
