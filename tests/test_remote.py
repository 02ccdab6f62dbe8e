"""Other databases through DuckDB's extensions (``utils/db/remote.py``, issue 24 part 2): postgres://,
mysql:// and md: connection strings are recognised, their password is never shown, and where the extension
is not installed (this machine cannot install any: no internet, and PyPI's duckdb-extension wheels are for
DuckDB 1.x) the error names the extension and how to install it. The ATTACH-and-copy path itself needs a
reachable server and an installed extension, so it is not run here."""
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
])
def test_redact_hides_the_password(db, shown):
    assert redact(db) == shown


@pytest.mark.parametrize("db, extension", [("postgres://ann:s3cret@127.0.0.1:1/shop", "postgres"),
                                           ("mysql://root:s3cret@127.0.0.1:1/shop", "mysql"),
                                           ("md:shop?motherduck_token=s3cret", "motherduck")])
def test_a_missing_extension_is_named_with_how_to_install_it(isolated_env, db, extension):
    with pytest.raises(DatabaseError) as e:
        open_database(db)
    message = str(e.value)
    assert f"DuckDB's {extension} extension is not installed" in message
    assert f"install_extension('{extension}')" in message and "s3cret" not in message


def test_the_cli_never_echoes_the_password(isolated_env):
    p = subprocess.run([str(DUCKASK), "ask", "how many orders?", "--db", "postgres://ann:s3cret@127.0.0.1:1/shop"],
                       capture_output=True, text=True, env=clean_env(isolated_env), timeout=120)
    assert p.returncode != 0 and "postgres extension is not installed" in p.stderr
    assert "s3cret" not in p.stdout + p.stderr and "ann:***@" in p.stderr
