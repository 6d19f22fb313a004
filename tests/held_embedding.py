"""An embedding that holds: the tests' hash embedding, which, while a `hold` file exists in its
folder, does not return from embedding any text naming a given word (it touches `embedding`
when it starts holding, `embedded` when it returns). With it a test asserts on the ORDER of
things done while the model works (hunt-git #5, session 23: the watcher embedded in its own
thread, so changes made meanwhile waited), with no timing assert: a file is the gate so that
an owner process holds the same way (`owner_client.owner_process(held=...)`).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from skillbank.embeddings import HashEmbedding

#: How long a hold lasts at most (a test that failed before removing `hold` ends anyway).
LONGEST_HOLD = 300.0


class HeldEmbedding(HashEmbedding):
    def __init__(self, folder: str | Path, word: str = "otters") -> None:
        super().__init__()
        self.folder, self.word = Path(folder), word

    def embed(self, texts: list[str]) -> np.ndarray:
        if (self.folder / "hold").exists() and any(self.word in t for t in texts):
            (self.folder / "embedding").touch()
            deadline = time.monotonic() + LONGEST_HOLD
            while (self.folder / "hold").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            vectors = super().embed(texts)
            (self.folder / "embedded").touch()
            return vectors
        return super().embed(texts)

    def embed_query(self, text: str) -> np.ndarray:  # a search never holds
        return super().embed([text])[0]
