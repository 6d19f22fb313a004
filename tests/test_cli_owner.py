"""The short-lived background owner (#27): an interactive command starts it and attaches, later
commands attach to it (no Chroma, no model in their process), and it ends by itself once no
command has come for the idle time. Scripts and tests (no terminal) never start one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

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


def test_commands_attach_to_a_background_owner_that_ends_by_itself(tmp_path):
    root = tmp_path / "root"
    write_skill(tmp_path / "lib", "pdf-merge", "Merge PDF files into one document")
    first = cli(root, "--no-bundled", "--skills-dir", str(tmp_path / "lib"), "--json", "stats",
                SKILLBANK_CLI_OWNER="1", SKILLBANK_CLI_OWNER_IDLE="20")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["skills"] == 1
    pid = int((root / ".cli-owner.pid").read_text().split()[0])
    os.kill(pid, 0)  # the owner runs
    second = cli(root, "--no-bundled", "--json", "skills", "search", "merge pdf files",
                 SKILLBANK_CLI_OWNER="1", SKILLBANK_CLI_OWNER_IDLE="20")
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)[0]["name"] == "pdf-merge"
    # Attached: no model session in this process (the hash embedding these tests use lives in
    # skillbank.embeddings, which imports chromadb; with the real model a client imports neither).
    assert "onnxruntime" not in second.stderr.split("HEAVY=")[-1]
    deadline = time.monotonic() + 300
    while (root / ".cli-owner.pid").exists():  # idle for 20 s: it closes the root and exits
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
