"""Other databases through DuckDB's extensions (``utils/db/remote.py``, issue 24 part 2): postgres://,
mysql:// and md: connection strings are recognised, their password is never shown, and where the extension
is not installed (this machine cannot install any: no internet, and PyPI's duckdb-extension wheels are for
DuckDB 1.x) the error names the extension and how to install it. Postgres without the extension goes through
ADBC instead (tests/test_postgres_source.py runs it against a live server)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import clean_env

from duckask.utils.db.database import DatabaseError, open_database
from duckask.utils.db.remote import kind_of, redact

DUCKASK = Path(sys.executable).parent / "duckask"


@pytest.mark.parametrize("db, kind", [
    ("postgres://ann:s3cret@db.example.com:5432/shop", ("postgres", "postgres")),
    ("postgresql://ann@db/shop", ("postgres", "postgres")),
    ("sqlite:///tmp/shop.db", (None, "sqlite")),
    ("snowflake://ann:s3cret@acct/db/schema", (None, "snowflake")),
    ("mysql://root:s3cret@127.0.0.1/shop", ("mysql", "mysql")),
    ("md:shop?motherduck_token=s3cret", ("motherduck", "motherduck")),
    ("data/lahman.duckdb", None),
    ("/tmp/md:odd/file.duckdb", None),
])
def test_connection_strings_are_recognised(db, kind):
    assert kind_of(db) == kind


@pytest.mark.parametrize("db, shown", [
    ("postgres://ann:s3cret@db.example.com/shop", "postgres://ann:***@db.example.com/shop"),
    ("host=db user=ann password=s3cret dbname=shop", "host=db user=ann password=*** dbname=shop"),
    ("md:shop?motherduck_token=s3cret", "md:shop?motherduck_token=***"),
    ("mysql://root@127.0.0.1/shop", "mysql://root@127.0.0.1/shop"),
    # issue 30: an @, a space, a slash or a colon in the password; query and libpq forms; quoted values
    ("postgres://ann:p@ss w0rd@db.example.com/shop", "postgres://ann:***@db.example.com/shop"),
    ("postgres://ann:a/b:c@d@db.example.com:5432/shop?sslmode=require",
     "postgres://ann:***@db.example.com:5432/shop?sslmode=require"),
    ("postgresql://ann@db/shop?password=two words&sslmode=require", "postgresql://ann@db/shop?password=***&sslmode=require"),
    ("host=db user=ann password='my s3cret' dbname=shop", "host=db user=ann password=*** dbname=shop"),
    ("host=db user=ann PASSWORD = s3cret dbname=shop", "host=db user=ann PASSWORD = *** dbname=shop"),
    ("dbname=shop sslpassword=s3cret", "dbname=shop sslpassword=***"),
    ("mysql://root:@localhost/db", "mysql://root:***@localhost/db"),
    ("postgres://ann:s3cret@db/shop?application_name=a@b", "postgres://ann:***@b"),     # over-hidden: the safe side
    ("data/lahman.duckdb", "data/lahman.duckdb"),
])
def test_redact_hides_the_password(db, shown):
    assert redact(db) == shown
    assert redact(redact(db)) == shown


#: Issue 43, finding 9: a driver that splits the password at "@" quotes the rest back as a host name.
@pytest.mark.parametrize("db, message, secret_parts", [
    ("postgresql://shopro:wr@ngP@ss@127.0.0.1:5/shop",
     'could not translate host name "ngP@ss@127.0.0.1" to address: Name or service not known', ["ngP", "ngP@ss"]),
    ("postgresql://duck:Wr0ng@Pw@127.0.0.1:5433/state",
     'connection to server at "Pw@127.0.0.1", port 5433 failed: Connection refused', ["Pw@"]),
    ("postgresql://duck:s3cr3t@Pw:/x@127.0.0.1/state", 'host "Pw:/x@127.0.0.1" unknown; password s3cr3t@Pw:/x',
     ["s3cr3t", "Pw:/x", "/x@"]),
    ("host=db user=ann password='ab@cdef' dbname=shop", 'FATAL: role "ann" cdef@db', ["cdef"]),
])
def test_a_drivers_message_keeps_no_piece_of_the_password(db, message, secret_parts):
    from duckask.utils.db.remote import redact_error

    out = redact_error(message, db)
    assert all(part not in out for part in secret_parts), out
    assert "127.0.0.1" in out or "db" in out                      # the host stays: the message still says where


def test_a_remote_database_is_shown_redacted_on_every_surface(tmp_path, isolated_env, monkeypatch):
    """The password is kept by the connection only: the displayed name (health, an answer's JSON, a saved chat
    session, the audit) is built redacted where the string enters. The ATTACH-and-copy step needs a server,
    so a local DuckDB file stands in for its snapshot."""
    import json

    from conftest import build_small_db

    from duckask.utils.api import ask, prepare
    from duckask.utils.app.conversation import Conversation
    from duckask.utils.db import remote
    from duckask.utils.llm import ScriptedLLM

    snapshot = build_small_db(tmp_path / "snapshot.duckdb")
    monkeypatch.setattr(remote, "snapshot", lambda db, cache, **_: snapshot)
    dsn = "postgres://ann:p@ss w0rd@127.0.0.1:5432/shop"
    prep = prepare(dsn, llm=ScriptedLLM({}))
    assert prep.db == "postgres://ann:***@127.0.0.1:5432/shop" and prep.database.source == prep.db
    r = ask(sql="SELECT count(*) AS n FROM teams", db=dsn, llm=ScriptedLLM({}))
    shown = json.dumps(r.to_dict(), default=str)
    assert r.ok and "p@ss" not in shown and "w0rd" not in shown and "ann:***@" in shown
    assert r.all_rows().values.tolist() == [[3]]          # the redacted name finds the open connection again
    conv = Conversation(dsn, llm=ScriptedLLM({}))
    conv.ask(sql="SELECT 1 AS one")
    saved = tmp_path / "session.json"
    conv.save(saved)
    assert "w0rd" not in saved.read_text() and "ann:***@" in saved.read_text()
    pytest.importorskip("fastapi", reason="the server extra is not installed")
    from fastapi.testclient import TestClient

    from duckask.utils.app.server import create_app

    with TestClient(create_app(dsn, llm=ScriptedLLM({}), api_key="k")) as client:
        for path in ("/api/health",):
            for headers in ({}, {"Authorization": "Bearer k"}):
                assert "w0rd" not in client.get(path, headers=headers).text
        body = client.post("/api/sql", json={"sql": "SELECT 1 AS one"}, headers={"Authorization": "Bearer k"}).text
        assert "w0rd" not in body


@pytest.mark.parametrize("db, extension", [("mysql://root:s3cret@127.0.0.1:1/shop", "mysql"),
                                           ("md:shop?motherduck_token=s3cret", "motherduck")])
def test_a_missing_extension_is_named_with_how_to_install_it(isolated_env, db, extension):
    with pytest.raises(DatabaseError) as e:
        open_database(db)
    message = str(e.value)
    assert f"DuckDB's {extension} extension (not installed" in message
    assert f"install_extension('{extension}')" in message and "s3cret" not in message


def test_postgres_without_extension_or_driver_names_both_ways(isolated_env, monkeypatch):
    from duckask.utils.db import adbc_source

    monkeypatch.setattr(adbc_source, "driver", lambda dialect: None)
    with pytest.raises(DatabaseError) as e:
        open_database("postgres://ann:s3cret@127.0.0.1:1/shop")
    message = str(e.value)
    assert "DuckDB's postgres extension (not installed" in message and "pip install 'duckask[postgres]'" in message
    assert "s3cret" not in message and "ann:***@" in message


def test_the_cli_never_echoes_the_password(isolated_env):
    """Nothing listens on port 1: the ADBC driver's connection error is shown, the password never."""
    p = subprocess.run([str(DUCKASK), "ask", "how many orders?", "--db", "postgres://ann:s3cret@127.0.0.1:1/shop"],
                       capture_output=True, text=True, env=clean_env(isolated_env), timeout=120)
    assert p.returncode != 0 and "cannot read postgres://ann:***@127.0.0.1:1/shop" in p.stderr
    assert "Connection refused" in p.stderr
    assert "s3cret" not in p.stdout + p.stderr


def test_a_drivers_unreachable_host_message_on_the_cli_keeps_no_piece_of_the_password(isolated_env, tmp_path):
    """The probe's own form: libpq split the password at its first "@" and quoted the rest as the host."""
    pytest.importorskip("adbc_driver_postgresql", reason="the postgres extra is not installed")
    run = subprocess.run([str(Path(sys.executable).parent / "duckask"), "schema", "--db",
                          "postgresql://shopro:wr@ngP@ss@127.0.0.1:5/shop"], capture_output=True, text=True,
                         env=clean_env(isolated_env), cwd=tmp_path, timeout=120)
    out = run.stdout + run.stderr
    assert run.returncode != 0 and "postgresql://shopro:***@127.0.0.1:5/shop" in out
    assert "ngP" not in out and "wr@" not in out and "ss@" not in out, out
