"""A client of another process that owns the root, written once: every test of a memory
operation runs it also this way (the developer guide), so the owner process and the client
bank were written again in each such test.

Tests import it as `from owner_client import ...`, as they import `team_worker` and
`mcp_http`. What a test checks stays in the test; only the two processes are set up here.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

from test_multiprocess import env_for
from skillbank import Skillbank
from workers.common import open_bank

OWNER = """
import os, sys, time
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding, MiniLMEmbedding
exec(os.environ.get('OWNER_PREAMBLE', ''))  # a test's hooks in the owner (edit_in_write.py)
roots = [p for p in os.environ.get('OWNER_SKILL_ROOTS', '').split(os.pathsep) if p]
embedding = (MiniLMEmbedding() if os.environ.get('OWNER_EMBEDDING') == 'minilm'
             else HashEmbedding())
if os.environ.get('OWNER_HELD'):  # tests/held_embedding.py
    from held_embedding import HeldEmbedding
    embedding = HeldEmbedding(os.environ['OWNER_HELD'])
bank = Skillbank.open(os.environ['SKILLBANK_ROOT'], embedding_function=embedding,
                      include_bundled=os.environ.get('OWNER_BUNDLED') == '1', skill_roots=roots)
if os.environ.get('OWNER_WATCH') == '1':
    bank.watch()  # the files watched, as `skillbank serve` does
print('ready', os.getpid(), flush=True)
for line in sys.stdin:
    pass
bank.close()
"""


@contextlib.contextmanager
def owner_process(root: Path, skill_roots: tuple[Path, ...] = (), *, minilm: bool = False,
                  bundled: bool = False, watch: bool = False,
                  held: Path | None = None,
                  preamble: str = "") -> Iterator[subprocess.Popen]:
    """Another process that owns `root` (the hash embedding, or the offline MiniLM where a test
    needs the model's judgement; the bundled skills only when asked) until the block ends
    (stdin closed: it closes the bank); with `watch`, its watcher syncs the skill files; with
    `held`, its embedding holds on that folder's `hold` file (`held_embedding.py`); `preamble`
    (Python) runs in it before it opens the root (hooks: `edit_in_write.py`)."""
    env = env_for(root, OWNER_SKILL_ROOTS=os.pathsep.join(map(str, skill_roots)),
                  OWNER_EMBEDDING="minilm" if minilm else "hash",
                  OWNER_BUNDLED="1" if bundled else "0", OWNER_WATCH="1" if watch else "0",
                  OWNER_HELD=str(held or ""), OWNER_PREAMBLE=preamble)
    proc = subprocess.Popen([sys.executable, "-c", OWNER], env=env, text=True, cwd=root.parent,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        line = proc.stdout.readline().split()
        assert line and line[0] == "ready", "the owner process did not start"
        yield proc
    finally:
        if proc.poll() is None:
            with contextlib.suppress(OSError):
                os.kill(proc.pid, signal.SIGCONT)
            proc.stdin.close()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextlib.contextmanager
def client_bank(root: Path) -> Iterator[Any]:
    """This process's bank on `root`, which another process owns: a client (asserted, so a
    test never passes in process by mistake), closed when the block ends."""
    bank = open_bank(root)
    try:
        assert bank.is_remote, "the bank is not a client of another process"
        yield bank
    finally:
        bank.close()


@contextlib.contextmanager
def client_of_owner(root: Path, *, minilm: bool = False,
                    skill_roots: tuple[Path, ...] = ()) -> Iterator[Any]:
    """A client bank on `root` while an owner process serves it (both end with the block)."""
    with owner_process(root, skill_roots, minilm=minilm), client_bank(root) as bank:
        yield bank


@contextlib.contextmanager
def bank_for(tmp_path: Path, remote: bool, embedding: Any = None,
             skill_roots: tuple[Path, ...] = ()) -> Iterator[Any]:
    """The bank a test checks a memory operation on, both ways the developer guide asks for:
    opened in this process (`embedding`, else the hash embedding), or (`remote`) a client of an
    owner process on the same root (with the offline MiniLM when `embedding` is given); either
    way with `skill_roots` as the extra (read-only) skill folders."""
    root = tmp_path / "root"
    if remote:
        root.mkdir(exist_ok=True)
        with client_of_owner(root, minilm=embedding is not None,
                             skill_roots=skill_roots) as bank:
            yield bank
        return
    from skillbank.embeddings import HashEmbedding

    with Skillbank.open(root, embedding_function=embedding or HashEmbedding(),
                        include_bundled=False, skill_roots=list(skill_roots) or None) as bank:
        yield bank
