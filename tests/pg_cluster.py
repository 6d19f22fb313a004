"""A private PostgreSQL cluster for tests: Debian's binaries, a temp folder, a loopback port.

Tests run as root, and PostgreSQL refuses to run as root: the cluster is initialised and run
as the `postgres` account (Debian's package creates it) through `runuser`; as any other user
it runs as that user. Password authentication (scram) on 127.0.0.1 only, so a wrong password
in a URL fails as it would in production. `.ci/run` installs the package when it is missing.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

def _bin() -> Path:
    """PostgreSQL 15 (Debian 12's), else the newest installed version."""
    if os.environ.get("SKILLBANK_PG_BIN"):
        return Path(os.environ["SKILLBANK_PG_BIN"])
    preferred = Path("/usr/lib/postgresql/15/bin")
    if (preferred / "initdb").exists():
        return preferred
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"),
                   key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0)
    return found[-1].parent if found else preferred


PG_BIN = _bin()
USER = "skillbank"
PASSWORD = "test-password"
DATABASE = "skillbank"


def missing() -> str | None:
    """Why a cluster cannot start here (None when it can)."""
    for tool in ("initdb", "pg_ctl", "postgres"):
        if not (PG_BIN / tool).exists():
            return (f"PostgreSQL 15 binaries not found in {PG_BIN} "
                    "(apt-get install -y postgresql; .ci/run does this)")
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' account to run PostgreSQL as"
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Cluster:
    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="skillbank-pg-"))
        self.data = self.folder / "data"
        self.port = _free_port()
        self.as_postgres = os.geteuid() == 0
        if self.as_postgres:
            entry = pwd.getpwnam("postgres")
            os.chown(self.folder, entry.pw_uid, entry.pw_gid)
        os.chmod(self.folder, 0o700)

    @property
    def url(self) -> str:
        return f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{self.port}/{DATABASE}"

    def url_for(self, database: str) -> str:
        return f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{self.port}/{database}"

    def _run(self, *args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
        cmd = [str(a) for a in args]
        if self.as_postgres:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True, check=check, timeout=timeout,
                              cwd=self.folder)

    def init(self) -> "Cluster":
        pwfile = self.folder / "pw"
        pwfile.write_text(PASSWORD + "\n")
        if self.as_postgres:
            entry = pwd.getpwnam("postgres")
            os.chown(pwfile, entry.pw_uid, entry.pw_gid)
        self._run(PG_BIN / "initdb", "-D", self.data, "-U", USER, f"--pwfile={pwfile}",
                  "--auth=scram-sha-256", "-E", "UTF8", "--no-sync")
        pwfile.unlink()
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write(f"\nlisten_addresses = '127.0.0.1'\nport = {self.port}\n"
                       f"unix_socket_directories = '{self.folder}'\nfsync = off\n"
                       "max_connections = 100\n")
        self.start()
        self._createdb()
        return self

    def _createdb(self) -> None:
        env_cmd = ["env", f"PGPASSWORD={PASSWORD}", str(PG_BIN / "createdb"), "-h", "127.0.0.1",
                   "-p", str(self.port), "-U", USER, DATABASE]
        self._run(*env_cmd)

    def start(self) -> None:
        self._run(PG_BIN / "pg_ctl", "-D", self.data, "-l", self.folder / "log", "-w",
                  "-t", "120", "start")

    def stop(self, mode: str = "fast") -> None:
        self._run(PG_BIN / "pg_ctl", "-D", self.data, "-m", mode, "-w", "-t", "60", "stop",
                  check=False)

    def log(self) -> str:
        try:
            return (self.folder / "log").read_text(errors="replace")[-3000:]
        except OSError:
            return ""

    def destroy(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.folder, ignore_errors=True)
