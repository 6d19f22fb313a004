"""Token counting with tiktoken, offline.

Budgets are what a model sees, so they are counted with a real tokenizer. tiktoken downloads
its encodings on first use; llama-index-core ships the same files, and skillbank points
`TIKTOKEN_CACHE_DIR` at a copy when no cache is configured, so counting works with no network.
When no encoding can be loaded at all, a conservative estimate (4 characters a token, rounded up)
keeps budgets safe rather than failing the caller.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Callable

ENCODING = "cl100k_base"
# sha1 of the encoding's download URL: the file name tiktoken looks for in its cache.
_CACHE_KEYS = {
    "cl100k_base": "9b5ad71b2ce5302211f9c61530b329a4922fc6a4",
    "o200k_base": "fb374d419588a4632f3f557e76b4b70aebbca790",
}


def _offline_cache_dir() -> str | None:
    """A folder that already holds the encoding file, if one can be found on this machine."""
    for env in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if os.environ.get(env):
            return None  # the user chose; respect it
    candidates = [Path(__file__).parent / "_tiktoken_cache"]
    try:
        import importlib.util

        spec = importlib.util.find_spec("llama_index.core")
        if spec and spec.submodule_search_locations:
            for location in spec.submodule_search_locations:
                candidates.append(Path(location) / "_static" / "tiktoken_cache")
    except (ImportError, ValueError):
        pass
    import tempfile

    candidates.append(Path(tempfile.gettempdir()) / "data-gym-cache")
    for folder in candidates:
        if (folder / _CACHE_KEYS[ENCODING]).is_file():
            return str(folder)
    return None


@functools.lru_cache(maxsize=1)
def _encoder() -> Callable[[str], int]:
    try:
        import tiktoken

        folder = _offline_cache_dir()
        if folder:
            os.environ.setdefault("TIKTOKEN_CACHE_DIR", folder)
        encoding = tiktoken.get_encoding(ENCODING)
        return lambda text: len(encoding.encode(text, disallowed_special=()))
    except Exception:  # offline with no cached encoding: estimate, never under-count badly
        return lambda text: (len(text) + 3) // 4 + 1


def count_tokens(text: str) -> int:
    """Number of tokens `text` costs a model (cl100k_base)."""
    return _encoder()(text) if text else 0
