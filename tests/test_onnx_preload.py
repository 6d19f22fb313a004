"""The MCP server starts building the embedding model's session before Chroma is imported
(`skillbank.onnx_model.preload`); `MiniLMEmbedding` then takes that session instead of building
its own. These tests pin what that must not change: the vectors, the error a broken model
gives, and that a session is handed out once and only for the folder it was built from."""

from __future__ import annotations

import shutil
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from skillbank import onnx_model
from skillbank.embeddings import MiniLMEmbedding, ModelUnavailableError

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _no_leftover_preloads():
    onnx_model.discard()
    yield
    onnx_model.discard()


def _folder(model_dir: str) -> Path:
    found = onnx_model.local_model_dir(model_dir)
    assert found is not None, "the offline model is needed for these tests"
    return found


def test_a_preloaded_session_is_taken_once(model_dir):
    folder = _folder(model_dir)
    assert onnx_model.preload(model_dir) is True
    assert onnx_model.preload(model_dir) is True  # a second call starts nothing new
    session, tokenizer = onnx_model.take(folder)
    assert session.get_inputs() and tokenizer.encode("hello").ids
    assert onnx_model.take(folder) is None  # handed out once: a second bank builds its own


def test_the_embedding_uses_the_preload_and_gives_the_same_vectors(model_dir):
    texts = ["merge several PDF files into one", "write a haiku about autumn", "x"]
    plain = MiniLMEmbedding(str(model_dir))(texts)
    onnx_model.preload(model_dir)
    preloaded = MiniLMEmbedding(str(model_dir))
    vectors = preloaded(texts)
    assert onnx_model._preloads == {}  # it was taken, not left to leak
    for a, b in zip(plain, vectors):
        assert float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b))) > 0.999999


def test_a_preload_for_other_threads_or_folders_is_not_taken(model_dir, tmp_path):
    folder = _folder(model_dir)
    onnx_model.preload(model_dir, threads=1)
    assert onnx_model.take(folder, threads=0) is None  # built with other session options
    copy = tmp_path / "onnx"
    shutil.copytree(folder, copy)
    assert onnx_model.take(copy, threads=1) is None  # another folder
    assert onnx_model.take(folder, threads=1) is not None


def test_no_local_model_starts_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("SKILLBANK_MODEL_DIR", raising=False)
    monkeypatch.setattr(onnx_model, "chroma_model_dir", lambda: tmp_path / "absent")
    assert onnx_model.preload(tmp_path / "empty") is False
    assert onnx_model._preloads == {}


def test_a_failed_preload_leaves_the_error_to_the_embedding(model_dir, tmp_path):
    """A corrupt model.onnx: the preload fails quietly, and the embedding reports the failure
    itself when it is used, as without a preload."""
    broken = tmp_path / "onnx"
    shutil.copytree(_folder(model_dir), broken)
    (broken / "model.onnx").write_bytes(b"not an onnx graph")
    assert onnx_model.preload(broken) is True
    assert onnx_model.take(broken) is None
    onnx_model.preload(broken)
    with pytest.raises(ModelUnavailableError):
        MiniLMEmbedding(str(broken))(["hello"])


def test_the_server_preloads_unless_told_not_to(model_dir, tmp_path):
    """`_preload_model` starts a preload for the bank's model folder; SKILLBANK_MCP_PRELOAD_MODEL=0
    and the hash test embedding start none. Run in a fresh interpreter: environment-driven."""
    code = (
        "from skillbank import onnx_model\n"
        "from skillbank.mcp_server.options import ServeOptions\n"
        "from skillbank.mcp_server.runner import _preload_model\n"
        f"_preload_model(ServeOptions(root={str(tmp_path)!r}, model_dir={str(model_dir)!r}))\n"
        "print(len(onnx_model._preloads))\n"
    )

    def preloads(**env: str) -> str:
        full = {k: v for k, v in os.environ.items()
                if k not in ("SKILLBANK_EMBEDDING", "SKILLBANK_MCP_PRELOAD_MODEL")}
        full.update(env)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env=full, timeout=120)
        assert out.returncode == 0, out.stderr
        return out.stdout.strip()

    assert preloads() == "1"
    assert preloads(SKILLBANK_MCP_PRELOAD_MODEL="0") == "0"
    assert preloads(SKILLBANK_EMBEDDING="hash") == "0"


def test_a_bank_that_fails_to_open_drops_the_preload(model_dir):
    """The server preloads before it knows whether the bank opens; when the open fails (root
    busy, bad setting) the session must not stay in memory for the server's whole life."""
    from skillbank.errors import BusyError
    from skillbank.mcp_server.loader import BankHandle

    def busy():
        raise BusyError("another skillbank process has the root open")

    assert onnx_model.preload(model_dir)
    handle = BankHandle(opener=busy).start()
    handle._thread.join(timeout=60)
    assert onnx_model._preloads == {}
