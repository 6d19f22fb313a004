"""Shared fixtures: temp banks with the fast hash embedding or the real offline model."""

from __future__ import annotations

import contextlib
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
MODEL_DIR = SHARED / "models" / "all-MiniLM-L6-v2"
if not (MODEL_DIR / "onnx" / "model.onnx").is_file() and os.environ.get("SKILLBANK_MODEL_DIR"):
    # A checkout with no ../shared beside it (a git worktree elsewhere): the model the
    # environment names, rather than skipping every test that needs the model's judgement.
    MODEL_DIR = Path(os.environ["SKILLBANK_MODEL_DIR"])

# No network at test time: every bank (and every subprocess a test starts) finds the model here.
if (MODEL_DIR / "onnx" / "model.onnx").is_file():
    os.environ.setdefault("SKILLBANK_MODEL_DIR", str(MODEL_DIR))
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")


@pytest.fixture(scope="session")
def model_dir() -> Path:
    if not (MODEL_DIR / "onnx" / "model.onnx").is_file():
        pytest.skip("the offline MiniLM model is not at ../shared/models")
    return MODEL_DIR


@pytest.fixture(scope="session")
def minilm(model_dir):
    """One real embedding function for the whole session (loading it costs ~0.5 s)."""
    from skillbank.embeddings import MiniLMEmbedding

    return MiniLMEmbedding(model_dir=str(model_dir))


def cli_words(*args: str) -> str:
    """`skillbank --no-bundled ARGS` run in this process (typer's CliRunner), its output on one
    line (rich wraps long lines at spaces); the command must succeed."""
    from typer.testing import CliRunner

    from skillbank.cli import app

    result = CliRunner().invoke(app, ["--no-bundled", *args])
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


@pytest.fixture
def issuer():
    """An OIDC issuer on loopback (tests/oidc_issuer.py), closed after the test."""
    from oidc_issuer import Issuer

    made = Issuer()
    yield made
    made.close()


@pytest.fixture
def cli_root(tmp_path, monkeypatch) -> Path:
    """A clean environment for the CLI: no inherited SKILLBANK_ settings (but the offline
    model), the hash embedding, a temp root (returned), wide tables for text assertions."""
    for name in list(os.environ):
        if name.startswith("SKILLBANK_") and name != "SKILLBANK_MODEL_DIR":
            monkeypatch.delenv(name)
    monkeypatch.setenv("SKILLBANK_EMBEDDING", "hash")
    monkeypatch.setenv("SKILLBANK_ROOT", str(tmp_path / "root"))
    monkeypatch.setenv("COLUMNS", "200")  # rich tables: no wrapping inside the assertions
    return tmp_path / "root"


@pytest.fixture
def hash_bank(tmp_path):
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    bank = Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                          include_bundled=False, sync=False)
    yield bank
    bank.close()


def write_skill(root: Path, name: str, description: str, body: str = "# Steps\n\nDo it.\n",
                extra: str = "") -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "SKILL.md"
    path.write_text(f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}")
    return path


@contextlib.contextmanager
def watching(bank):
    """`bank.skills.watch` on its own thread; yields the queue its reports arrive on, and stops
    it (bounded) when the block ends."""
    reports: queue.Queue = queue.Queue()
    stop = threading.Event()
    watcher = threading.Thread(target=bank.skills.watch,
                               kwargs={"stop_event": stop, "on_sync": reports.put})
    watcher.start()
    try:
        yield reports
    finally:
        stop.set()
        watcher.join(60)
    assert not watcher.is_alive()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory):
    """A real `chroma run` server on loopback, for the HttpClient paths."""
    chroma = Path(sys.executable).parent / "chroma"
    if not chroma.exists():
        pytest.skip("chroma CLI not installed")
    port = free_port()
    data = tmp_path_factory.mktemp("chroma-server")
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    proc = subprocess.Popen(
        [str(chroma), "run", "--path", str(data), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    import urllib.request

    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 300  # generous: start-up under load
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1)
            break
        except OSError:
            if proc.poll() is not None:
                pytest.fail("chroma run exited early")
            time.sleep(0.3)
    else:
        proc.kill()
        pytest.fail("chroma run did not start within 300 s")
    yield url
    stop_process(proc)


def stop_process(proc: subprocess.Popen) -> None:
    """Terminate a server a test started, killing it if it does not stop within 10 s."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="session")
def postgres():
    """A private PostgreSQL 15 cluster on loopback for the session (tests/pg_cluster.py)."""
    yield from _postgres_cluster()


@pytest.fixture
def two_machines(tmp_path, chroma_server, postgres):
    """Two team workers of one fresh deployment, each with its own root (two machines:
    `tmp_path / "machine-a"` and `"machine-b"`), on the session's PostgreSQL and `chroma run`."""
    from team_worker import two_banks

    with two_banks(tmp_path / "machine-a", tmp_path / "machine-b", chroma_server,
                   postgres.url) as pair:
        yield pair


@pytest.fixture
def own_postgres():
    """A private cluster for one test (one that stops or restarts it)."""
    yield from _postgres_cluster()


def _postgres_cluster():
    sys.path.insert(0, str(Path(__file__).parent))
    import pg_cluster

    why = pg_cluster.missing()
    if why and os.environ.get("SKILLBANK_REQUIRE_POSTGRES"):  # CI: never a silent skip
        pytest.fail(why)
    if why:
        pytest.skip(why)
    cluster = pg_cluster.Cluster()
    try:
        cluster.init()
    except subprocess.CalledProcessError as exc:
        cluster.destroy()
        pytest.fail(f"PostgreSQL did not start: {exc.stderr or exc.stdout}\n{cluster.log()}")
    try:
        yield cluster
    finally:
        cluster.destroy()
