"""`skillbank skills watch` stops on Ctrl-C, however it was started, and loses nothing.

The CI flake (tests/test_cli.py::test_skills_watch_reports_changes_until_interrupted timing out
120 s after its SIGINT) came from how the suite was started, not from the machine's speed: a
job started with `&` by a non-interactive shell inherits SIGINT as *ignored*, Python then
installs no KeyboardInterrupt, and every process the tests start inherits the same. The watcher
went on syncing (py-spy showed it upserting the skill versions written after the signal).
These tests give the watcher that inheritance on purpose, so they do not depend on how pytest
was started; and a Ctrl-C that lands while the watcher embeds (the fill since the body side)
loses nothing: the next open embeds what it had not.
"""

from __future__ import annotations

import contextlib
import json
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import write_skill
from owner_client import owner_process
from test_multiprocess import env_for

#: Starts the command after it with SIGINT ignored, as `cmd &` in a script does (exec keeps it).
SIGINT_IGNORED = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
                  "os.execv(sys.argv[1], sys.argv[1:])")


def skillbank_command() -> list[str]:
    script = Path(sys.executable).parent / "skillbank"
    return [str(script)] if script.exists() else [sys.executable, "-m", "skillbank.cli"]


@pytest.mark.slow
@pytest.mark.parametrize("served", [False, True], ids=["own-root", "served-root"])
def test_ctrl_c_stops_a_watch_started_with_sigint_ignored(tmp_path, served):
    """Before the fix this process never ended: the SIGINT was dropped (the test then fails
    at its 120 s ceiling). With another process owning the root the watcher is a client
    following the owner's changes; Ctrl-C ends it just the same."""
    root, skills = tmp_path / "root", tmp_path / "root" / "skills"
    write_skill(skills, "first-skill", "The first skill.")
    command = [sys.executable, "-c", SIGINT_IGNORED, *skillbank_command()]
    owner = owner_process(root) if served else contextlib.nullcontext()
    with owner:
        proc = subprocess.Popen([*command, "--json", "--no-bundled", "skills", "watch"],
                                env=env_for(root), text=True, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        events: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [events.put(json.loads(line)) for line in proc.stdout],
                         daemon=True).start()
        try:
            assert events.get(timeout=300)["event"] == "start"
            # A reported change puts the watcher inside its loop (where Ctrl-C means "stop").
            deadline, seen, version = time.monotonic() + 300, [], 0
            while not any("second-skill" in e["report"]["added"] + e["report"]["changed"]
                          for e in seen):
                assert time.monotonic() < deadline, f"no change reported: {seen}"
                version += 1
                write_skill(skills, "second-skill", f"Added while watching, version {version}.")
                with contextlib.suppress(queue.Empty):
                    seen.append(events.get(timeout=5))
            proc.send_signal(signal.SIGINT)
            try:
                code = proc.wait(timeout=120)  # a ceiling for a loaded machine, not a speed
            except subprocess.TimeoutExpired:
                raise AssertionError("skills watch ignored Ctrl-C (started with SIGINT "
                                     "ignored)") from None
            assert code == 0, proc.stderr.read()[-3000:]  # "stopped", not "interrupted" (130)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdout.close()
            proc.stderr.close()


def test_ctrl_c_while_the_watcher_embeds_loses_nothing(cli_root, tmp_path, monkeypatch):
    """A Ctrl-C raised from inside the embedding of a changed skill (the watcher's fill) stops
    the command cleanly (exit 0, "stopped"), and the next open's sync embeds the skill as its
    file now is. The signal comes from the embedding itself: no timing. Since hunt-git #5
    (session 23) the fill runs beside the watcher, which stops it between batches: the batch
    under way when the signal came may be written (a version the writer has since replaced,
    which the next sync embeds again)."""
    from typer.testing import CliRunner

    from skillbank import Skillbank
    from skillbank.cli import app
    from skillbank.embeddings import HashEmbedding

    extra = tmp_path / "watched"
    write_skill(extra, "first-skill", "The first skill.")
    first_done, interrupted = threading.Event(), threading.Event()
    embed = HashEmbedding.embed

    def embedding(self, texts):
        if any("first skill" in t.lower() for t in texts):
            first_done.set()  # the watcher's first sync is embedding: it scanned already
        if any("mid-fill" in t for t in texts) and not interrupted.is_set():
            interrupted.set()
            signal.raise_signal(signal.SIGINT)  # Ctrl-C, in the middle of the fill
        return embed(self, texts)

    monkeypatch.setattr(HashEmbedding, "embed", embedding)

    def writer() -> None:
        first_done.wait(300)
        version = 0
        while not interrupted.is_set() and version < 3000:
            version += 1
            write_skill(extra, "second-skill", f"Embedded mid-fill, version {version}.")
            interrupted.wait(0.2)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    # --timeout: only a ceiling, so a watcher that ignored the interrupt ends (and fails below)
    result = CliRunner().invoke(app, ["--no-bundled", "--skills-dir", str(extra),
                                      "skills", "watch", "--timeout", "300"])
    thread.join(30)
    assert interrupted.is_set(), result.stdout
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    assert "stopped" in result.stderr

    bank = Skillbank.open(cli_root, embedding_function=HashEmbedding(), include_bundled=False,
                          skill_roots=[str(extra)], sync=False)
    try:
        collection = bank.skills.index._collection
        bank.skills.sync()
        held = collection.get(ids=["second-skill"], include=["metadatas"])
        assert held["ids"] == ["second-skill"]
        on_disk = (extra / "second-skill" / "SKILL.md").read_text()
        assert f"description: {held['metadatas'][0]['description']}\n" in on_disk
        assert bank.skills.dense_complete
    finally:
        bank.close()
