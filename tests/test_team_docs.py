"""docs/team.md, "A team deployment from a fresh machine, step by step", runs as written.

The section's ```bash blocks (all but the one marked `<!-- no-test -->`: the install, which
needs the package index) run in order in one `bash -euo pipefail`, as a reader runs them in one
shell: a PostgreSQL role and database made with `sudo -u postgres psql`, `chroma run`, a tokens
file, two `skillbank server` workers, a write through one read through the other (and hidden
from another principal), /metrics, pg_dump and a tar of the root.

What stands in for the machine: a private PostgreSQL 15 cluster (Debian's binaries in a temp
folder, superuser `postgres` by peer authentication on its socket, as Debian's own cluster is),
reached through `PGHOST`/`PGPORT`; a `sudo` on PATH that runs the command as that user with
`runuser` (this machine has no sudo); free ports in `CHROMA_PORT` and `WORKER_PORTS`; a
temporary `SKILLBANK_HOME`; this checkout's venv first on PATH (the installed `skillbank`);
`SKILLBANK_MODEL_DIR` (conftest's offline model) in place of the first start's download.
Everything the blocks start is stopped afterwards (their process group), pass or fail.
"""

from __future__ import annotations

import os
import pwd
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import free_port
from mcp_http import team_env

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "team.md"
HEADING = "## A team deployment from a fresh machine, step by step"
NO_TEST = "<!-- no-test -->"


def section_blocks() -> tuple[list[str], list[str]]:
    """(blocks to run, blocks marked no-test) of the step-by-step section, in order."""
    text = DOC.read_text(encoding="utf-8")
    assert HEADING in text, f"{DOC} has no section {HEADING!r}"
    body = text.split(HEADING, 1)[1]
    body = re.split(r"^## ", body, maxsplit=1, flags=re.M)[0]
    run, skipped = [], []
    for match in re.finditer(r"(?P<before>[^\n]*)\n```bash\n(?P<code>.*?)^```", body,
                             re.S | re.M):
        (skipped if match.group("before").strip() == NO_TEST else run).append(
            match.group("code"))
    return run, skipped


def test_the_section_is_runnable_blocks_with_one_install_step():
    run, skipped = section_blocks()
    assert len(skipped) == 1 and "pip install" in skipped[0]
    assert len(run) >= 6
    joined = "\n".join(run)
    for step in ("psql", "chroma run", "skillbank tokens add", "skillbank server", "pg_dump"):
        assert step in joined, step


def _pg_cluster(tmp_path: Path):
    sys.path.insert(0, str(Path(__file__).parent))
    import pg_cluster

    why = pg_cluster.missing()
    if why and os.environ.get("SKILLBANK_REQUIRE_POSTGRES"):
        pytest.fail(why)
    if why:
        pytest.skip(why)

    class DebianLike(pg_cluster.Cluster):
        """Superuser = the account running PostgreSQL, by peer authentication on the socket
        (Debian's cluster: `postgres`); passwords (scram) on 127.0.0.1."""

        def init(self) -> "DebianLike":
            self.superuser = "postgres" if self.as_postgres else pwd.getpwuid(os.geteuid()).pw_name
            self._run(pg_cluster.PG_BIN / "initdb", "-D", self.data, "-U", self.superuser,
                      "--auth-local=peer", "--auth-host=scram-sha-256", "-E", "UTF8",
                      "--no-sync")
            with (self.data / "postgresql.conf").open("a") as conf:
                conf.write(f"\nlisten_addresses = '127.0.0.1'\nport = {self.port}\n"
                           f"unix_socket_directories = '{self.folder}'\nfsync = off\n")
            self.start()
            return self

    return DebianLike().init()


def test_a_team_deployment_from_a_fresh_machine_runs_as_written(tmp_path):
    run, _ = section_blocks()
    cluster = _pg_cluster(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    sudo = bin_dir / "sudo"
    if cluster.as_postgres:
        sudo.write_text('#!/bin/sh\n[ "$1" = -u ] || exit 64\nuser=$2; shift 2\n'
                        'exec runuser -u "$user" -- "$@"\n')
    else:  # not root: PostgreSQL runs as this account, which is also its superuser
        sudo.write_text('#!/bin/sh\n[ "$1" = -u ] || exit 64\nshift 2\nexec "$@"\n')
    sudo.chmod(0o755)
    home = tmp_path / "srv"
    script = tmp_path / "steps.sh"
    script.write_text("set -euo pipefail\ncd \"$HOME\"\n"
                      + "\n".join(f"echo '### block {n + 1}'\n{code}"
                                  for n, code in enumerate(run)))
    env = team_env()
    env.pop("SKILLBANK_EMBEDDING", None)  # the deployment as a reader runs it: MiniLM
    env.update({
        "PATH": os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent),
                                 "/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"]),
        "HOME": str(tmp_path), "SKILLBANK_HOME": str(home),
        "PGHOST": str(cluster.folder), "PGPORT": str(cluster.port),
        "CHROMA_PORT": str(free_port()), "WORKER_PORTS": f"{free_port()} {free_port()}",
    })
    log = tmp_path / "steps.log"
    proc = subprocess.Popen(["bash", str(script)], env=env, stdout=log.open("w"),
                            stderr=subprocess.STDOUT, start_new_session=True, cwd=tmp_path)
    try:
        code = proc.wait(timeout=900)
        output = log.read_text()
        assert code == 0, output[-6000:] + "\n--- worker logs ---\n" + "".join(
            p.read_text()[-2000:] for p in sorted((home / "logs").glob("worker-*.log")))
        assert "read it; bob did not" in output
        assert re.search(r'skillbank_tool_calls_total\{outcome="ok",tool="record_experience"\}',
                         output), output[-3000:]
        assert output.count('"status": "ready"') == 2
        assert (home / "skillbank.dump").stat().st_size > 0
        assert (home / "root.tar.gz").stat().st_size > 0
        for backup in ("skillbank.dump", "root.tar.gz"):  # every member's memory: owner only
            assert (home / backup).stat().st_mode & 0o077 == 0, backup
        assert "Traceback" not in output
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)  # chroma and the workers the blocks started
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        cluster.destroy()


def test_the_documented_backup_is_readable_by_its_owner_only(tmp_path):
    """Step 8 left the dump of every member's private memory and the tar of the root and the
    tokens file `-rw-r--r--` under umask 022 (team hunt, session 19). The block runs as written
    with a stand-in `pg_dump` (it writes the file it is given, as the real one does) and real
    `tar`, under umask 022."""
    block = next(code for code in section_blocks()[0] if "pg_dump" in code)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "pg_dump").write_text(
        '#!/bin/sh\nfor a; do case "$a" in --file=*) echo dump > "${a#--file=}";; esac; done\n')
    (bin_dir / "pg_dump").chmod(0o755)
    home = tmp_path / "srv"
    (home / "root").mkdir(parents=True)
    (home / "tokens.toml").write_text("")
    env = {"PATH": f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin",
           "SKILLBANK_HOME": str(home), "SKILLBANK_DATABASE_URL": "postgresql://stand-in/db"}
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", f"umask 022\n{block}"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for backup in ("skillbank.dump", "root.tar.gz"):
        assert (home / backup).stat().st_mode & 0o077 == 0, (backup, done.stdout)
