"""Team workers in tests, written once: a real `skillbank server` process on loopback, and
in-process banks of one deployment over PostgreSQL and `chroma run`.

Tests import it as `from team_worker import ...`, as they import `mcp_http` and `pg_cluster`.
Each test keeps its own flags (`--token`, `--trust`, `--auth-config`...): what a test is about
stays visible in the test.
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from conftest import free_port


def start_server(root: Path, chroma: str, database: str, *flags: str,
                 deployment: str | None = None, log: Path | None = None) -> tuple[Any, str]:
    """A `skillbank server` worker on `root` (created if missing), run from the root's parent
    folder, on a free loopback port, with `flags`; returns (process, base url) once /healthz
    answers 200. A fresh deployment unless `deployment` is given (workers that must share one
    memory pass the same); the log goes to `log`, else a file named after the port next to
    the root. The caller stops the process (conftest.stop_process)."""
    from mcp_http import team_env, wait_until_serving  # MCP's client: only tests that serve

    root.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = log or root.parent / f"worker-{port}.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "skillbank.team.server", "--root", str(root), "--chroma-url",
         chroma, "--database-url", database, "--deployment",
         deployment or uuid.uuid4().hex[:12], "--port", str(port), *flags],
        env=team_env(), stdout=log.open("w"), stderr=subprocess.STDOUT, cwd=str(root.parent))
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(proc, url, log, probe="/healthz", status=200, seconds=180)
    except BaseException:
        proc.kill()
        raise
    return proc, url


def open_bank(root: Path, chroma_url: str, database_url: str, deployment: str,
              **options: Any) -> Any:
    """An in-process team worker: a bank on `root` in `deployment`, with the hash embedding
    (these tests are about where records live and who sees them, not retrieval quality)."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    return Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                          chroma_url=chroma_url, database_url=database_url,
                          deployment=deployment, **options)


@contextmanager
def two_banks(root_a: Path, root_b: Path, chroma_url: str, database_url: str,
              **b_options: Any) -> Iterator[tuple[Any, Any]]:
    """Two in-process workers of one fresh deployment (on one root, or each on its own: two
    machines); `b_options` go to worker B only (a short `write_lock_timeout`, say). B is
    closed first."""
    deployment = uuid.uuid4().hex[:16]
    a = open_bank(root_a, chroma_url, database_url, deployment)
    try:
        b = open_bank(root_b, chroma_url, database_url, deployment, **b_options)
    except BaseException:
        a.close()
        raise
    try:
        yield a, b
    finally:
        b.close()
        a.close()


def reindex_drafts(bank: Any) -> list[str]:
    """Three runs of one kind of task (rebuilding a shop's search index) recorded on `bank`,
    then proposed: the names of the drafts it wrote (at least one, asserted)."""
    for n in range(3):
        bank.experiences.record(f"Rebuild the search index of shop {n}", "success",
                                when_to_use="When rebuilding a shop's search index",
                                steps=[{"action": "pause_writes"}, {"action": "reindex"}])
    names = [d.name for d in bank.skills.propose(min_support=3)]
    assert names
    return names


def until(check: Any, seconds: float = 30.0) -> Any:
    """Poll `check` until it returns something truthy (returned) or `seconds` pass (a failed
    assert): how a test waits for one worker to see what another wrote. Generous on purpose:
    it returns as soon as the check holds, and a loaded 2-core CI machine (Chroma restarting,
    the change feed's thread waiting for a core) once took more than the 1 s or 5 s given."""
    deadline = time.monotonic() + seconds
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, f"not seen by the other worker within {seconds} s"
        time.sleep(0.02)
