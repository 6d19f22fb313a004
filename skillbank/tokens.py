"""Token counting with tiktoken, offline.

Budgets are what a model sees, so they are counted with a real tokenizer. tiktoken downloads
its encodings on first use; skillbank ships cl100k_base's file (llama-index-core ships the same
one) and builds its own `tiktoken.Encoding` from it, so counting works with no network. It never
touches `TIKTOKEN_CACHE_DIR`: setting it made every other tiktoken use in the host process, and
every child process, look only in skillbank's folder, so an app's own cached encodings (e.g.
o200k_base) stopped loading offline (hunt-wheel #1, session 38).
When no encoding can be loaded at all, a conservative estimate (4 characters a token, rounded up)
keeps budgets safe rather than failing the caller.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import os
from pathlib import Path
from typing import Any, Callable

ENCODING = "cl100k_base"
# sha1 of the encoding's download URL: the file name tiktoken gives it in a cache folder.
_CACHE_KEYS = {
    "cl100k_base": "9b5ad71b2ce5302211f9c61530b329a4922fc6a4",
    "o200k_base": "fb374d419588a4632f3f557e76b4b70aebbca790",
}
# cl100k_base as tiktoken_ext.openai_public.cl100k_base() defines it (that function downloads the
# ranks, so its settings are copied here; tests/test_tokens_offline.py checks they still match).
_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_PAT_STR = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


def _offline_files() -> list[Path]:
    """Places on this machine that may already hold the encoding file, best first."""
    folders = [Path(__file__).parent / "_tiktoken_cache"]
    for env in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if os.environ.get(env):
            folders.append(Path(os.environ[env]))
    try:
        import importlib.util

        spec = importlib.util.find_spec("llama_index.core")
        if spec and spec.submodule_search_locations:
            for location in spec.submodule_search_locations:
                folders.append(Path(location) / "_static" / "tiktoken_cache")
    except (ImportError, ValueError):
        pass
    import tempfile

    folders.append(Path(tempfile.gettempdir()) / "data-gym-cache")
    return [folder / _CACHE_KEYS[ENCODING] for folder in folders]


def _local_encoding() -> Any | None:
    """cl100k_base built from a file on disk (checked against its published hash), or None.

    Read and parsed here, not through tiktoken.load, whose cache layer keys by path and would
    copy the file into tiktoken's cache folder.
    """
    import tiktoken

    for path in _offline_files():
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if hashlib.sha256(data).hexdigest() != _SHA256:
            continue
        ranks = {base64.b64decode(token): int(rank)
                 for token, rank in (line.split() for line in data.splitlines() if line)}
        return tiktoken.Encoding(ENCODING, pat_str=_PAT_STR, mergeable_ranks=ranks,
                                 special_tokens=dict(_SPECIAL_TOKENS))
    return None


@functools.lru_cache(maxsize=1)
def _encoder() -> Callable[[str], int]:
    try:
        import tiktoken

        try:
            encoding = _local_encoding()
        except Exception:  # e.g. an old tiktoken that cannot compile the pattern: its own way
            encoding = None
        if encoding is None:
            encoding = tiktoken.get_encoding(ENCODING)
        return lambda text: len(encoding.encode(text, disallowed_special=()))
    except Exception:  # offline with no cached encoding: estimate, never under-count badly
        return lambda text: (len(text) + 3) // 4 + 1


def count_tokens(text: str) -> int:
    """Number of tokens `text` costs a model (cl100k_base)."""
    return _encoder()(text) if text else 0
