"""Embedding functions, registered with Chroma under skillbank's own names.

`MiniLMEmbedding` runs the same all-MiniLM-L6-v2 ONNX model as Chroma's default, with the same
vectors, about 10x faster: Chroma's class pads every input to 256 tokens, while mean pooling with
the attention mask makes padding irrelevant to the result, so we pad only to the longest text of
a length-sorted batch. One session is built once and reused.

`HashEmbedding` is a tiny deterministic function (feature hashing of words) for fast tests and
for measuring everything but the model; it is honest about being lexical.

Both speak Chroma's embedding-function protocol (name, config, `__call__`) and are registered
with Chroma by name (`register_with_chroma`, called when an index opens a collection), so a
collection records which embedding made it and reopening it with another one is caught. They do
not subclass Chroma's `EmbeddingFunction`: importing this module (and so the index and the skill
library) must not import Chroma, which costs ~0.5-1 s — the MCP server answers its first skill
search from a snapshot before Chroma is imported (`skillbank.snapshot_search`, #27). Chroma takes
any object with these methods (duck typing; its own `__call__` checks are for its classes).
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

from skillbank import onnx_model
from skillbank.errors import SkillbankError
from skillbank.onnx_model import (  # noqa: F401 - chroma_model_dir is re-exported
    MAX_TOKENS,
    MODEL_NAME,
    chroma_model_dir,
    local_model_dir,
)

MODEL_FILES = (
    "model.onnx",
    "tokenizer.json",
    "vocab.txt",
    "config.json",
    "special_tokens_map.json",
    "tokenizer_config.json",
)
_QUERY_CACHE_SIZE = 512
_registered = False
_register_lock = threading.Lock()


def register_with_chroma() -> None:
    """Register both classes in Chroma's registry of embedding functions (once).

    Chroma rebuilds a collection's embedding function from its recorded name when the
    collection is opened without one; the index calls this before opening a collection. Not
    before Chroma is imported: a Chroma client has imported it, and an index over something
    else (the snapshot search, `skillbank.snapshot_search`) must not import it."""
    global _registered
    if _registered or "chromadb" not in sys.modules:
        return
    with _register_lock:
        if not _registered:
            from chromadb.utils.embedding_functions import register_embedding_function

            register_embedding_function(MiniLMEmbedding)
            register_embedding_function(HashEmbedding)
            _registered = True


def resolve_model_dir(model_dir: str | os.PathLike | None = None) -> Path:
    """Find the ONNX model folder: the argument, `SKILLBANK_MODEL_DIR`, then Chroma's cache.

    Accepts either the `onnx/` folder itself or its parent. When nothing is found locally,
    Chroma's own downloader fetches the model into its cache (needs network, as Chroma does).
    """
    found = local_model_dir(model_dir)
    if found is not None:
        return found
    candidates = [model_dir] if model_dir else [os.environ.get("SKILLBANK_MODEL_DIR")]
    explicit = [str(c) for c in candidates if c]
    if explicit:  # a folder was named and holds no model: say so, do not go to the network
        raise ModelUnavailableError(
            f"the embedding model {MODEL_NAME} is not in {' or '.join(explicit)} (no "
            "onnx/model.onnx + tokenizer.json there); set SKILLBANK_MODEL_DIR (or --model-dir) "
            "to a folder holding them")
    from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

    try:
        ONNXMiniLM_L6_V2()._download_model_if_not_exists()
    except Exception as exc:  # offline, proxy, disk: say what to do instead of a network trace
        raise ModelUnavailableError(
            f"the embedding model {MODEL_NAME} is not on this machine and could not be "
            f"downloaded ({type(exc).__name__}: {exc}); set SKILLBANK_MODEL_DIR (or --model-dir) "
            "to a folder holding onnx/model.onnx and tokenizer.json"
        ) from exc
    return chroma_model_dir()


class ModelUnavailableError(SkillbankError):
    """No embedding model can be loaded here (offline, no model folder, no cache).

    The index answers from keyword search alone while this is so (keyword-only mode) and tries
    the model again after `MODEL_RETRY_SECONDS`, so dense search resumes once it is present."""


#: After a failed model load, how long before the next embedding call tries again.
MODEL_RETRY_SECONDS = 30.0


class _ChromaProtocol:
    """The parts of Chroma's embedding-function protocol both classes share (Chroma calls them
    when it creates or reopens a collection)."""

    def default_space(self) -> str:
        return "cosine"

    def supported_spaces(self) -> list[str]:
        return ["cosine", "l2", "ip"]

    def is_legacy(self) -> bool:
        return False

    @staticmethod
    def validate_config(config: dict[str, Any]) -> None:
        return None

    def validate_config_update(self, old_config: dict[str, Any],
                               new_config: dict[str, Any]) -> None:
        return None


class MiniLMEmbedding(_ChromaProtocol):
    """all-MiniLM-L6-v2 through onnxruntime with dynamic padding; vectors equal Chroma's default."""

    def __init__(self, model_dir: str | None = None, batch_size: int = 32, threads: int = 0) -> None:
        self._model_dir_arg = model_dir
        self.batch_size = batch_size
        self.threads = threads
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()
        self._query_cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self.calls = 0  # how many texts were embedded: lets tests and benchmarks count work
        self._failed: tuple[float, ModelUnavailableError] | None = None  # last failed load

    # Chroma's registry protocol -------------------------------------------------------------
    @staticmethod
    def name() -> str:
        return "skillbank-minilm-l6-v2"

    def get_config(self) -> dict[str, Any]:
        # The model dir is where to find the weights, not what they are: it is not part of the
        # config, so a collection opens on any machine with the same model.
        return {"model": MODEL_NAME, "max_tokens": MAX_TOKENS}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> "MiniLMEmbedding":
        return MiniLMEmbedding()

    # Model ----------------------------------------------------------------------------------
    def _load(self) -> None:
        """Build the session, or raise ModelUnavailableError (again only every 30 s)."""
        import time

        if self._failed is not None and time.monotonic() - self._failed[0] < MODEL_RETRY_SECONDS:
            raise self._failed[1]
        try:
            self._load_model()
        except ModelUnavailableError as exc:
            self._failed = (time.monotonic(), exc)
            raise
        except Exception as exc:  # a broken or unreadable model file: the same degraded mode
            error = ModelUnavailableError(f"the embedding model {MODEL_NAME} could not be "
                                          f"loaded: {type(exc).__name__}: {exc}")
            self._failed = (time.monotonic(), error)
            raise error from exc
        self._failed = None

    def _load_model(self) -> None:
        folder = resolve_model_dir(self._model_dir_arg)
        # A server may have started building this session before Chroma was even imported.
        loaded = onnx_model.take(folder, self.threads) or onnx_model.build(folder, self.threads)
        self._session, self._tokenizer = loaded

    def warm(self) -> None:
        """Load the model now (no text embedded, nothing counted): what a face calls on a
        thread at construction, so an agent's first lookup neither waits for the model nor
        loads it on an event loop. A model that cannot load raises ModelUnavailableError."""
        with self._lock:
            if self._session is None:
                self._load()

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        encoded = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        norms[norms == 0] = 1e-12
        return (pooled / norms).astype(np.float32)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embed texts as an (n, 384) float32 array, sorting by length so padding stays small."""
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        with self._lock:
            if self._session is None:
                self._load()
            self.calls += len(texts)
            order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
            out = np.empty((len(texts), 384), dtype=np.float32)
            for start in range(0, len(order), self.batch_size):
                chunk = order[start : start + self.batch_size]
                out[chunk] = self._embed_batch([texts[i] or " " for i in chunk])
            return out

    def __call__(self, input: list[str]) -> list[np.ndarray]:  # noqa: A002 - Chroma requires `input`
        return list(self.embed(list(input)))

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query, remembering recent ones (agents ask the same thing repeatedly)."""
        cached = self._query_cache.get(text)
        if cached is not None:
            self._query_cache.move_to_end(text)
            return cached
        vector = self.embed([text])[0]
        self._query_cache[text] = vector
        if len(self._query_cache) > _QUERY_CACHE_SIZE:
            self._query_cache.popitem(last=False)
        return vector


_WORD = re.compile(r"[a-z0-9]+")


class HashEmbedding(_ChromaProtocol):
    """Deterministic bag-of-words feature hashing: no model, microseconds per text.

    For unit tests and for benchmarks that want to separate embedding cost from the rest.
    """

    def __init__(self, dim: int = 384) -> None:
        self.dim = dim
        self.calls = 0

    @staticmethod
    def name() -> str:
        return "skillbank-hash"

    def get_config(self) -> dict[str, Any]:
        return {"dim": self.dim}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> "HashEmbedding":
        return HashEmbedding(dim=int(config.get("dim", 384)))

    def _one(self, text: str) -> np.ndarray:
        vector = np.zeros(self.dim, dtype=np.float32)
        words = _WORD.findall(text.lower())
        for token in words + [a + "_" + b for a, b in zip(words, words[1:])]:
            digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % self.dim
            vector[bucket] += 1.0 if digest[4] & 1 else -1.0
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm else vector

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += len(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._one(t) for t in texts])

    def __call__(self, input: list[str]) -> list[np.ndarray]:  # noqa: A002
        return list(self.embed(list(input)))

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


def embed_texts(function: Any, texts: list[str]) -> np.ndarray:
    """Embed with any Chroma embedding function, using our fast path when it has one."""
    if isinstance(function, (MiniLMEmbedding, HashEmbedding)):
        return function.embed(texts)
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    return np.asarray(function(texts), dtype=np.float32)


def embed_query(function: Any, text: str) -> np.ndarray:
    if isinstance(function, (MiniLMEmbedding, HashEmbedding)):
        return function.embed_query(text)
    return np.asarray(function([text])[0], dtype=np.float32)


def fingerprint(function: Any) -> str:
    """Name + config of an embedding function: what a collection records about its vectors."""
    name = function.name() if hasattr(function, "name") else type(function).__name__
    try:
        config = function.get_config()
    except Exception:  # legacy functions have no config
        config = {}
    items = ",".join(f"{k}={config[k]}" for k in sorted(config) if k != "model_dir")
    return f"{name}({items})"
