"""A real PostgreSQL server for the service tests, and a fresh database per test.

.ci/run starts Debian's postgresql on 127.0.0.1 and exports IMGCHECK_TEST_PG_URL (a superuser URL).
Without it, the session fixture starts a throwaway server itself from Debian's binaries
(/usr/lib/postgresql/N/bin) in a temporary data directory, as the `postgres` user when run as root
(postgres refuses to run as root). Tests skip only when those binaries are absent.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid

import pytest
from registryfixture import free_port

URL_ENV = "IMGCHECK_TEST_PG_URL"


def _bindir() -> str | None:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0,
    )
    if found:
        return os.path.dirname(found[-1])
    initdb = shutil.which("initdb")
    return os.path.dirname(os.path.realpath(initdb)) if initdb else None


class _Server:
    """postgres on a free loopback port with a password (scram) for the test user; stopped at exit."""

    def __init__(self, bindir: str):
        self.bindir = bindir
        self.dir = tempfile.mkdtemp(prefix="imgcheck-pg-")
        os.chmod(self.dir, 0o755)
        self.data = os.path.join(self.dir, "data")
        self.port = free_port()
        self.password = uuid.uuid4().hex
        pwfile = os.path.join(self.dir, "pw")
        with open(pwfile, "w") as fh:
            fh.write(self.password + "\n")
        self.user = None
        if os.geteuid() == 0:
            self.user = pwd.getpwnam("postgres")
            os.chown(self.dir, self.user.pw_uid, self.user.pw_gid)
            os.chown(pwfile, self.user.pw_uid, self.user.pw_gid)
        self._run(
            "initdb",
            "-D",
            self.data,
            "-U",
            "imgcheck",
            "--auth=scram-sha-256",
            f"--pwfile={pwfile}",
            "-E",
            "UTF8",
            "--locale=C.UTF-8" if os.path.exists("/usr/lib/locale/C.utf8") else "--locale=C",
        )
        self._run(
            "pg_ctl",
            "-D",
            self.data,
            "-l",
            os.path.join(self.dir, "log"),
            "-w",
            "-t",
            "60",
            "start",
            "-o",
            f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.dir} -c fsync=off",
        )
        self.url = f"postgresql://imgcheck:{self.password}@127.0.0.1:{self.port}/postgres"

    def _run(self, tool: str, *args: str) -> None:
        cmd = [os.path.join(self.bindir, tool), *args]
        if self.user is not None:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{tool} failed: {done.stdout}\n{done.stderr}")

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server_url():
    """A superuser URL of a running PostgreSQL server."""
    url = os.environ.get(URL_ENV)
    if url:
        yield url
        return
    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install 'imgcheck[serve-pg]')")
    bindir = _bindir()
    if bindir is None:
        pytest.skip(f"no PostgreSQL server binaries (apt-get install postgresql) and {URL_ENV} is not set")
    server = _Server(bindir)
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture
def pg_url(pg_server_url):
    """A URL of a new, empty database (dropped afterwards), so every test starts from no schema."""
    import psycopg
    from psycopg import sql

    name = f"imgcheck_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    base, _, _ = pg_server_url.rpartition("/")
    yield f"{base}/{name}"
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
