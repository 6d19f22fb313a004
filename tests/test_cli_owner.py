"""The short-lived background owner (#27): an interactive command starts it and attaches, later
commands attach to it (no Chroma, no model in their process), and it ends by itself once no
command has come for the idle time. Scripts and tests (no terminal) never start one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import pytest
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from conftest import write_skill


def cli(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("SKILLBANK_")
            or k == "SKILLBANK_MODEL_DIR"}
    probe = ("import sys; from skillbank.cli import main\n"
             "try:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n    code = e.code\n"
             "print('HEAVY=' + ','.join(m for m in ('chromadb', 'onnxruntime') "
             "if m in sys.modules), file=sys.stderr)\n")
    return subprocess.run([sys.executable, "-c", probe, "--root", str(root), *args],
                          capture_output=True, text=True, timeout=600,
                          env={**base, "SKILLBANK_EMBEDDING": "hash", **env})


@contextmanager
def holding_root(root: Path, env: dict[str, str], *, share: bool = True) -> Iterator[None]:
    """Another Python process holds `root` open (shared, or `share=False`: publishing no
    endpoint) for the block; it closes its bank when the block ends (its stdin closed)."""
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys\nfrom skillbank import Skillbank\n"
         "from skillbank.embeddings import HashEmbedding\n"
         f"b = Skillbank.open(sys.argv[1], embedding_function=HashEmbedding(), share={share})\n"
         "print('ready', flush=True)\nsys.stdin.read()\nb.close()\n", str(root)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert holder.stdout.readline().strip() == "ready"
        yield
    finally:
        holder.stdin.close()
        holder.wait(60)


def test_commands_attach_to_a_background_owner_that_ends_by_itself(tmp_path):
    root = tmp_path / "root"
    write_skill(tmp_path / "lib", "pdf-merge", "Merge PDF files into one document")
    first = cli(root, "--no-bundled", "--skills-dir", str(tmp_path / "lib"), "--json", "stats",
                SKILLBANK_CLI_OWNER="1", SKILLBANK_CLI_OWNER_IDLE="30")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["skills"] == 1
    pid = int((root / ".cli-owner.pid").read_text().split()[0])
    os.kill(pid, 0)  # the owner runs
    second = cli(root, "--no-bundled", "--json", "skills", "search", "merge pdf files",
                 SKILLBANK_CLI_OWNER="1", SKILLBANK_CLI_OWNER_IDLE="30")
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)[0]["name"] == "pdf-merge"
    # Attached: no model session in this process (the hash embedding these tests use lives in
    # skillbank.embeddings, which imports chromadb; with the real model a client imports neither).
    assert "onnxruntime" not in second.stderr.split("HEAVY=")[-1]
    deadline = time.monotonic() + 300
    while (root / ".cli-owner.pid").exists():  # idle for 30 s: it closes the root and exits
        assert time.monotonic() < deadline, "the background owner did not end"
        time.sleep(0.5)
    try:
        os.kill(pid, 0)
        alive = True
    except OSError:
        alive = False
    deadline = time.monotonic() + 60
    while alive and time.monotonic() < deadline:
        time.sleep(0.2)
        try:
            os.kill(pid, 0)
        except OSError:
            alive = False
    assert not alive


def test_scripts_never_start_one(tmp_path):
    root = tmp_path / "root"
    done = cli(root, "--no-bundled", "--json", "stats")  # not a terminal, no SKILLBANK_CLI_OWNER
    assert done.returncode == 0, done.stderr
    assert not (root / ".cli-owner.pid").exists() and not (root / ".cli-owner.log").exists()


def test_a_served_root_is_attached_to_without_a_background_owner(tmp_path):
    """While `skillbank serve`, an MCP server or a Python process owns the root, an interactive
    command attaches to it. Before, it started a background owner that only became that
    process's client and exited, and the command waited 120 s for it to say ready."""
    root = tmp_path / "root"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLBANK_")
           or k == "SKILLBANK_MODEL_DIR"}
    with holding_root(root, env):
        done = cli(root, "--no-bundled", "--json", "stats", SKILLBANK_CLI_OWNER="1")
        assert done.returncode == 0, done.stderr
        assert not (root / ".cli-owner.log").exists()  # no background owner was started
        assert "onnxruntime" not in done.stderr.split("HEAVY=")[-1]


def test_an_owner_that_cannot_start_is_not_waited_for(tmp_path):
    """A background owner that exits without owning the root (here a Python process holds it
    unshared) is noticed at once: the command answers for itself (busy) instead of waiting
    120 s for an owner that will never say ready."""
    root = tmp_path / "root"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLBANK_")
           or k == "SKILLBANK_MODEL_DIR"}
    with holding_root(root, env, share=False):
        started = time.monotonic()
        done = cli(root, "--no-bundled", "--json", "stats", SKILLBANK_CLI_OWNER="1")
        took = time.monotonic() - started
    assert "BusyError" in done.stderr, done.stderr
    assert (root / ".cli-owner.log").exists() and not (root / ".cli-owner.pid").exists()
    assert took < 110, took  # it waited the full 120 s for the owner before


def test_a_new_skill_folder_is_served_by_a_fresh_background_owner(tmp_path):
    """A command that adds a skill folder (remembered from then on) while a background owner
    serves the old ones gets it served: before, it was attached to the old owner, saw none of
    the new folder's skills and was told to stop a process it never started."""
    root = tmp_path / "root"
    write_skill(tmp_path / "a", "pdf-merge", "Merge PDF files into one document")
    write_skill(tmp_path / "b", "image-resize", "Resize images to a given width")
    env = dict(SKILLBANK_CLI_OWNER="1", SKILLBANK_CLI_OWNER_IDLE="20")
    first = cli(root, "--no-bundled", "--skills-dir", str(tmp_path / "a"), "--json", "stats",
                **env)
    assert json.loads(first.stdout)["skills"] == 1, first.stderr
    old = int((root / ".cli-owner.pid").read_text().split()[0])
    second = cli(root, "--no-bundled", "--skills-dir", str(tmp_path / "b"), "--json", "stats",
                 **env)
    stats = json.loads(second.stdout)
    assert stats["skills"] == 2 and stats["served_note"] is None, second.stderr
    assert int((root / ".cli-owner.pid").read_text().split()[0]) != old
    third = cli(root, "--no-bundled", "--json", "stats", **env)  # remembered: same owner
    assert json.loads(third.stdout)["skills"] == 2


def test_a_relative_root_and_model_folder_mean_the_same_to_the_owner(tmp_path):
    """The background owner runs in the root: before, `--root rel` made it open rel/rel (a
    stray root inside the user's, owned for ten minutes) while the command waited 120 s."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("SKILLBANK_")
            or k == "SKILLBANK_MODEL_DIR"}
    write_skill(tmp_path / "lib", "pdf-merge", "Merge PDF files into one document")
    probe = "import sys; from skillbank.cli import main; main(sys.argv[1:])"
    done = subprocess.run(
        [sys.executable, "-c", probe, "--root", "rel", "--no-bundled", "--skills-dir", "lib",
         "--json", "stats"], cwd=tmp_path, capture_output=True, text=True, timeout=100,
        env={**base, "SKILLBANK_EMBEDDING": "hash", "SKILLBANK_CLI_OWNER": "1",
             "SKILLBANK_CLI_OWNER_IDLE": "60"})  # not 5: a loaded machine took longer
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["skills"] == 1
    assert (tmp_path / "rel" / ".cli-owner.pid").exists()
    assert not (tmp_path / "rel" / "rel").exists()


def test_an_owner_that_was_starting_and_died_is_not_waited_for(tmp_path):
    """An owner killed while it opened the root (its log still ends in "starting") does not
    make the next command wait: before, a command within 120 s of that start waited the full
    120 s for an owner that was gone, then opened the root itself and started none. Now the
    starting owner's pid is recorded, a dead one is replaced at once, and the command says
    plainly that it starts a background process."""
    root = tmp_path / "root"
    root.mkdir()
    write_skill(tmp_path / "lib", "pdf-merge", "Merge PDF files into one document")
    (root / ".cli-owner.log").write_text("2026-01-01 00:00:00 starting\n")  # mtime: now
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (root / ".cli-owner.pid").write_text(f"{dead.pid} starting")
    done = cli(root, "--no-bundled", "--skills-dir", str(tmp_path / "lib"), "stats",
               SKILLBANK_CLI_OWNER="1", SKILLBANK_CLI_OWNER_IDLE="60")
    assert done.returncode == 0, done.stderr
    assert "Starting a background skillbank process" in done.stderr, done.stderr
    pid, state = (root / ".cli-owner.pid").read_text().split()
    assert state == "ready" and int(pid) != dead.pid
    os.kill(int(pid), 0)  # it serves the root for the commands that follow
    os.kill(int(pid), 15)  # and ends (closing the root) when told to


def test_only_a_terminal_on_stdout_starts_a_background_owner(monkeypatch):
    """`skillbank --json stats | jq` (stderr on the terminal, stdout piped) is a script: no
    background owner that would hold the root for minutes after it (found in review)."""
    import io

    from skillbank.cli import owner

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv(owner.ENV, raising=False)
    monkeypatch.setattr("sys.stdout", io.StringIO())
    monkeypatch.setattr("sys.stderr", Tty())
    assert owner.wanted(json_mode=True) is False
    monkeypatch.setattr("sys.stdout", Tty())
    assert owner.wanted(json_mode=False) is True
    monkeypatch.setenv(owner.ENV, "0")
    assert owner.wanted(json_mode=False) is False


def test_reindex_fresh_ends_the_background_owner_first(tmp_path):
    """The documented repair of a damaged index (`reindex --fresh`) typed at a terminal: a
    background owner started by the previous command has the index open; `owner.retire` ends
    it (the public seam; the command once reached into the module's private helpers), the
    index is deleted and rebuilt, and the skill is found again."""
    root = tmp_path / "root"
    write_skill(tmp_path / "lib", "pdf-merge", "Merge PDF files into one document")
    first = cli(root, "--no-bundled", "--skills-dir", str(tmp_path / "lib"), "--json", "stats",
                SKILLBANK_CLI_OWNER="1", SKILLBANK_CLI_OWNER_IDLE="300")
    assert first.returncode == 0, first.stderr
    assert (root / ".cli-owner.pid").exists()  # it runs, the index open
    fresh = cli(root, "--no-bundled", "--skills-dir", str(tmp_path / "lib"), "reindex", "--fresh",
                SKILLBANK_CLI_OWNER="0")
    assert fresh.returncode == 0, fresh.stderr  # was: "another process serves the memory"
    assert "deleted the index" in fresh.stderr + fresh.stdout
    assert not (root / ".cli-owner.pid").exists()
    found = cli(root, "--no-bundled", "--skills-dir", str(tmp_path / "lib"), "--json", "skills",
                "search", "merge pdf files", SKILLBANK_CLI_OWNER="0")
    assert json.loads(found.stdout)[0]["name"] == "pdf-merge"


@pytest.mark.parametrize("pythonpath", ["", ":"], ids=["plain", "empty-pythonpath-entry"])
def test_python_files_at_the_roots_top_level_never_run_in_the_owner(tmp_path, pythonpath):
    """The owner runs in the root; started with `python -m`, it had the root first on sys.path,
    so a `filelock.py` or `json.py` there ran as the owner (hunt-wheel #3, session 38). Here
    such files would leave a mark and fail; the owner imports neither and serves the root."""
    root = tmp_path / "root"
    root.mkdir()
    shadow = ("import os\n"
              "open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'RAN-' + __name__),"
              " 'w').close()\nraise ImportError('a file in the memory root')\n")
    for name in ("filelock", "json"):
        (root / f"{name}.py").write_text(shadow)
    write_skill(tmp_path / "lib", "pdf-merge", "Merge PDF files into one document")
    done = cli(root, "--no-bundled", "--skills-dir", str(tmp_path / "lib"), "--json", "stats",
               SKILLBANK_CLI_OWNER="1", SKILLBANK_CLI_OWNER_IDLE="60",
               # an empty entry puts the cwd on sys.path by its full path (review 2, s. 38)
               **({"PYTHONPATH": pythonpath + os.environ.get("PYTHONPATH", "")}
                  if pythonpath else {}))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["skills"] == 1
    assert sorted(p.name for p in root.glob("RAN-*")) == []
    pid, state = (root / ".cli-owner.pid").read_text().split()
    assert state == "ready"  # the command was served by the owner, not by itself
    os.kill(int(pid), 15)
