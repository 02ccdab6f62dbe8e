"""A throwaway PostgreSQL server for the tests and the scale-out benchmark: ``initdb`` in a temporary folder,
started on 127.0.0.1 on a free port with password authentication, as an unprivileged user (``nobody`` when
run as root: Postgres refuses to run as root), and stopped (``-m immediate``) at the end.

``pg_binaries()`` finds Debian's PostgreSQL (``/usr/lib/postgresql/<n>/bin``) or one on PATH; ``.ci/setup``
installs it when missing. Where there is none (a user's clone), the tests that need it skip and say why.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import quote

from openai_stub import free_port

PASSWORD = "s3cr3t@Pw:/x"       # with @ : / in it, so the redaction is tested on the hard case
USER = "duck"


def pg_binaries() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]))
    if found:
        return found[-1].parent
    on_path = shutil.which("initdb")
    return Path(on_path).parent if on_path else None


WHY_NOT = "PostgreSQL is not installed (apt-get install postgresql; .ci/setup does it): the Postgres tests need it"


class PostgresServer:
    """``start()``, ``url(db)`` (with the password), ``sql(statement, db)`` as the superuser, ``stop()``."""

    def __init__(self, options: str = "", where: Path | None = None):
        """``options``: more ``-c name=value`` server settings (a benchmark's memory); ``where``: the folder
        the cluster lives in (default a new temporary one)."""
        self.bin = pg_binaries()
        if self.bin is None:
            raise RuntimeError(WHY_NOT)
        self.options = options
        self.dir = Path(tempfile.mkdtemp(prefix="duckask-pg-", dir=where))
        self.port = free_port()
        self.as_user = ["runuser", "-u", "nobody", "--"] if os.geteuid() == 0 else []

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run([*self.as_user, *args], capture_output=True, text=True, check=check, timeout=120)

    def start(self) -> PostgresServer:
        pwfile = self.dir / "pw"
        pwfile.write_text(PASSWORD + "\n")
        if self.as_user:
            shutil.chown(self.dir, "nobody")
            shutil.chown(pwfile, "nobody")
        self._run(str(self.bin / "initdb"), "-D", str(self.dir / "data"), "-U", USER, "--pwfile", str(pwfile),
                  "-A", "scram-sha-256", "-E", "UTF8", "--no-sync")
        pwfile.unlink()
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.dir / "data"), "-l", str(self.dir / "log"), "-w", "-o",
                  f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60 "
                  f"{self.options}",
                  "start")
        return self

    def url(self, db: str = "postgres", password: str = PASSWORD) -> str:
        return f"postgresql://{USER}:{quote(password, safe='')}@127.0.0.1:{self.port}/{db}"

    def sql(self, *statements: str, db: str = "postgres") -> list:
        """Run statements (each alone, committed) and return the last one's rows (or [])."""
        import adbc_driver_postgresql.dbapi as pg

        rows: list = []
        with pg.connect(self.url(db), autocommit=True) as conn:
            for s in statements:
                with conn.cursor() as cur:
                    cur.execute(s)
                    rows = cur.fetchall() if cur.description else []
        return rows

    def create_database(self, name: str, *statements: str) -> str:
        """A new database ``name``, ``statements`` run in it (each alone, committed); returns its URL."""
        self.sql(f'CREATE DATABASE "{name}"')
        if statements:
            self.sql(*statements, db=name)
        return self.url(name)

    def stop(self) -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.dir / "data"), "-m", "immediate", "stop", check=False)
        shutil.rmtree(self.dir, ignore_errors=True)
