"""An item staged while another thread fills is embedded by that filler before it lets go.

`fill(wait=False)` returns at once when another thread fills, on the promise that the filler
"takes whatever was staged meanwhile before it stops". It did not once it had moved on to the
items' other texts (`fill_rest`, minutes for a large library's body sections) or was letting go:
a skill saved then stayed keyword-only until the next sync (last read of session 23). Real
Chroma (embedded), a hash embedding that holds the filler inside the body sections' batch.
"""

from __future__ import annotations

import threading

from skillbank.embeddings import HashEmbedding
from skillbank.index import HybridIndex, IndexItem, make_client

SECTION = "a section of the body"


class HeldInSections(HashEmbedding):
    """Embeds as HashEmbedding; the first batch of body sections waits until released."""

    def __init__(self) -> None:
        super().__init__()
        self.in_sections = threading.Event()
        self.release = threading.Event()

    def embed(self, texts: list[str]):
        if any(SECTION in text for text in texts) and not self.release.is_set():
            self.in_sections.set()
            assert self.release.wait(120), "the test never released the filler"
        return super().embed(texts)


def _item(name: str, sections: int) -> IndexItem:
    texts = [f"{name}: what it does"] + [f"{name}: {SECTION} {n}" for n in range(sections)]
    return IndexItem(id=name, embed_texts=texts, keyword_text=" ".join(texts),
                     metadata={"hash": name})


def test_an_item_staged_while_the_sections_fill_is_embedded_by_that_filler(tmp_path):
    embedding = HeldInSections()
    index = HybridIndex(make_client(path=str(tmp_path / "chroma")), "late", embedding)
    index.stage([_item("first", sections=3)])
    done: list[int] = []
    filler = threading.Thread(target=lambda: done.append(index.fill(first_texts_first=True)))
    filler.start()
    try:
        assert embedding.in_sections.wait(120)  # the filler is inside the body sections
        index.stage([_item("late", sections=0)])  # as a save while a sync fills
        assert index.fill(wait=False, first_texts_first=True) == 0  # left to the filler
    finally:
        embedding.release.set()
        filler.join(120)
    assert not filler.is_alive() and done and done[0] >= 5
    assert index.pending == 0 and index.dense_complete  # "late" too, not at the next sync
    found = index.dense_texts(embedding.embed_query("late: what it does"), 10)
    assert "late" in found and "first#3" in found
