"""Load the MiniLM ONNX session and tokenizer, and let a server start that before Chroma loads.

Building the session takes 0.3-0.7 s, most of it in onnxruntime's native code with the GIL
released. `skillbank.embeddings` (where `MiniLMEmbedding` lives) imports Chroma, about a second of
pure-Python work; this module imports neither Chroma nor numpy, so a process that knows it will
embed (the MCP server) calls `preload()` first thing: the session builds on a thread while the
process imports the rest, and `MiniLMEmbedding` takes it (`take`) instead of building its own.
Nothing changes for a process that never preloads: `take` finds nothing and `build` runs as before.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any

MODEL_NAME = "all-MiniLM-L6-v2"
MAX_TOKENS = 256

#: (model folder, intra-op threads) -> the session and tokenizer being built for it.
_preloads: dict[tuple[str, int], "Future[tuple[Any, Any]]"] = {}
_lock = threading.Lock()


def chroma_model_dir() -> Path:
    """Where Chroma itself keeps (and downloads) the default model."""
    return Path.home() / ".cache" / "chroma" / "onnx_models" / MODEL_NAME / "onnx"


def local_model_dir(model_dir: str | os.PathLike | None = None) -> Path | None:
    """The first of the argument, `SKILLBANK_MODEL_DIR` and Chroma's cache that holds the model
    (either the `onnx/` folder itself or its parent), or None. A folder named as the argument is
    the only one looked at: an explicit `--model-dir` that holds no model must not be replaced
    silently by the environment's (#27)."""
    candidates = ((model_dir,) if model_dir else
                  (os.environ.get("SKILLBANK_MODEL_DIR"), chroma_model_dir()))
    for candidate in candidates:
        if not candidate:
            continue
        path = Path(candidate).expanduser()
        for folder in (path, path / "onnx"):
            if (folder / "model.onnx").is_file() and (folder / "tokenizer.json").is_file():
                return folder
    return None


def build(folder: Path, threads: int = 0) -> tuple[Any, Any]:
    """A new (onnxruntime session, tokenizer) for the model in `folder`."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the longest in the batch
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if threads:
        options.intra_op_num_threads = threads
    # Threads sleep instead of spinning between ops: same speed on an idle machine, and on
    # a busy one (a server beside an agent, or a shared CI box) 400 skill texts cost
    # 10.2 CPU-s instead of 12.8 (benchmarks: docs/benchmarks.md, "Embedding throughput").
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = ort.InferenceSession(
        str(folder / "model.onnx"), sess_options=options, providers=["CPUExecutionProvider"]
    )
    return session, tokenizer


def preload(model_dir: str | os.PathLike | None = None, threads: int = 0) -> bool:
    """Start building the session for the model `MiniLMEmbedding(model_dir)` would find locally,
    on a daemon thread. False (nothing started) when no local folder holds the model: the
    embedding then finds, downloads or reports it itself, as without a preload."""
    folder = local_model_dir(model_dir)
    if folder is None:
        return False
    key = (str(folder), threads)
    with _lock:
        if key in _preloads:
            return True
        future: Future[tuple[Any, Any]] = Future()
        _preloads[key] = future

    def run() -> None:
        try:
            future.set_result(build(folder, threads))
        except BaseException as exc:  # noqa: BLE001 - `take` then builds again and reports it
            future.set_exception(exc)

    thread = threading.Thread(target=run, name="skillbank-model-preload", daemon=True)
    thread.start()
    _wait_at_exit(thread)
    return True


#: Preload threads still building when the interpreter exits.
_building: list[threading.Thread] = []


def _wait_at_exit(thread: threading.Thread) -> None:
    """Let a session build finish before the interpreter exits (at most `EXIT_WAIT` s).

    A process that exits while onnxruntime is still building a session on a daemon thread
    (a server refusing a bad option right after starting the preload, a short script) dies
    with "terminate called without an active exception" (SIGABRT) in onnxruntime's teardown:
    seen in CI-like runs of the preload test under load."""
    import atexit

    with _lock:
        if not _building:
            atexit.register(_join_building)
        _building.append(thread)


EXIT_WAIT = 60.0


def _join_building() -> None:
    for thread in list(_building):
        thread.join(timeout=EXIT_WAIT)


def take(folder: Path, threads: int = 0) -> tuple[Any, Any] | None:
    """The preloaded session and tokenizer for `folder` (waiting for it to finish), once; None
    when nothing was preloaded for it or the preload failed."""
    with _lock:
        future = _preloads.pop((str(folder), threads), None)
    if future is None:
        return None
    try:
        return future.result()
    except Exception:  # noqa: BLE001 - the caller's own build raises the error it reports
        return None


def discard() -> None:
    """Forget preloads nobody took (a process that turned out not to embed, e.g. a client of
    another process's root), so their sessions can be freed."""
    with _lock:
        _preloads.clear()
