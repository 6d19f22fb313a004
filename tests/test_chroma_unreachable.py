"""An embedded bank or CLI opened with a `chroma_url` nobody answers (issue 24, bad input):
one line naming the URL and what to fix, nothing written.

Before, the CLI said only chromadb's "Could not connect to a Chroma server. Are you sure it is
running? (ValueError; run with --debug for a traceback)" — no URL, no setting to fix — and the
Python API raised that bare ValueError (a ConnectTimeout even became "Could not connect to
tenant default_tenant. Are you sure it exists?").
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import free_port
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.index_outage import ChromaUnavailableError


def test_the_cli_names_the_url_and_what_to_fix(tmp_path):
    url = f"http://127.0.0.1:{free_port()}"  # bound once, then closed: nobody listens
    root = tmp_path / "root"
    root.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLBANK_")}
    env.update(SKILLBANK_EMBEDDING="hash", SKILLBANK_CHROMA_URL=url, ANONYMIZED_TELEMETRY="False")
    done = subprocess.run([sys.executable, "-m", "skillbank.cli", "--root", str(root), "skills",
                           "list"], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 1, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"Chroma server at {url} does not answer" in lines[0], lines[0]
    assert "SKILLBANK_CHROMA_URL" in lines[0] and "chroma run" in lines[0], lines[0]
    assert not (root / "skills").exists() or not any((root / "skills").iterdir())


def test_the_python_api_raises_a_skillbank_error_naming_the_url(tmp_path):
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(ChromaUnavailableError, match=f"Chroma server at {url} does not answer"):
        with Skillbank.open(tmp_path / "root", chroma_url=url, embedding_function=HashEmbedding(),
                            include_bundled=False) as bank:
            bank.skills.list()


def test_readyz_never_shows_the_password_in_chroma_url(tmp_path):
    """/readyz is open to anyone who reaches the worker: a `chroma_url` with a user and
    password is shown without them (before: the whole URL, password included)."""
    from skillbank.team.server import readiness

    url = f"http://admin:s3cret@127.0.0.1:{free_port()}"
    bank = Skillbank.open(tmp_path / "root", chroma_url=url, embedding_function=HashEmbedding(),
                          include_bundled=False, sync=False)
    try:
        ready, checks = readiness(bank)
        assert not ready and "s3cret" not in checks["chroma"], checks
        assert checks["chroma"].startswith(f"Chroma at http://127.0.0.1:{url.rsplit(':', 1)[1]}")
    finally:
        bank.close()


def test_a_url_is_shown_without_its_credentials_with_or_without_a_scheme():
    from skillbank.index_outage import without_credentials

    assert without_credentials("http://admin:s3cret@db.example:8000") == "http://db.example:8000"
    assert without_credentials("admin:s3cret@db.example:8000") == "db.example:8000"
    assert without_credentials("https://db.example") == "https://db.example"
    assert without_credentials("db.example:8000") == "db.example:8000"
