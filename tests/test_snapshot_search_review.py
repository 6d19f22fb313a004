"""#27 review of the MCP server's first answers from the root's snapshot (skillbank/snapshot_search).

Real stdio sessions (the helpers of test_mcp_snapshot_search): a skill removed from a
`--skills-dir` folder, a read-only folder, a request for more results than the first answers
asked; and the hand-over of the trust book from the snapshot library to the bank's.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import anyio
import pytest

from test_mcp_snapshot_search import answers, find, library, prime, session, startup

ENV = {"SKILLBANK_EMBEDDING": "hash"}


def test_a_skill_removed_since_the_snapshot_is_not_served(tmp_path):
    root, folder = library(tmp_path)

    async def main() -> None:
        await prime(root, folder, **ENV)
        (folder / "git-rebase" / "SKILL.md").unlink()
        (folder / "git-rebase").rmdir()
        found, seconds = await answers(root, folder, **ENV)
        assert "snapshot_ready" not in seconds and "snapshot_answers" not in seconds
        assert all(s["name"] != "git-rebase" for answer in found for s in answer["skills"])

    anyio.run(main)


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file modes")
def test_a_read_only_folder_answers_from_the_snapshot_as_the_bank_does(tmp_path):
    root, folder = library(tmp_path)
    modes = {}

    async def main() -> None:
        await prime(root, folder, **ENV)
        for path in [folder, *folder.iterdir()]:
            modes[path] = path.stat().st_mode
            path.chmod(stat.S_IRUSR | stat.S_IXUSR)
        try:
            fast, fast_seconds = await answers(root, folder, **ENV)
            full, _ = await answers(root, folder, SKILLBANK_MCP_SNAPSHOT="0", **ENV)
        finally:
            for path, mode in modes.items():
                path.chmod(mode)
        assert fast_seconds.get("snapshot_answers", 0) >= 1, fast_seconds
        assert fast == full

    anyio.run(main)


def test_fifty_results_from_the_snapshot_equal_the_banks(tmp_path):
    root, folder = library(tmp_path)

    async def many(**env: str) -> tuple[dict, dict]:
        async with session(root, folder, **env) as client:
            result = await client.call_tool("find_skills", {"task": "skills for reports", "k": 50})
            assert not result.is_error, result.content[0].text
            return result.structured_content, await startup(client)

    async def main() -> None:
        await prime(root, folder, **ENV)
        fast, seconds = await many(**ENV)
        full, _ = await many(SKILLBANK_MCP_SNAPSHOT="0", **ENV)
        assert seconds.get("snapshot_answers", 0) >= 1, seconds
        assert fast == full

    anyio.run(main)


def test_the_bank_takes_the_snapshot_librarys_trust_book_even_before_its_first_search(tmp_path):
    """The loader hands the trust book over once the bank is open; when the first search came
    after the hold (1 s), the snapshot library had made none yet, and a search it answered
    before the bank's skills were ready made a second book (a second scanner queue, never
    closed, scanning the same third-party skills again) and a second version timeline."""
    from skillbank.bank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.settings import load_settings
    from skillbank.snapshot_search import hand_over, open_library

    root, folder = library(tmp_path)
    anyio.run(lambda: prime(root, folder, **ENV))
    embedding = HashEmbedding()
    early = open_library(load_settings(root, skill_roots=(str(folder),)), [folder], embedding)
    assert early is not None
    with Skillbank.open(root, skill_roots=[folder], embedding_function=embedding,
                        sync=False) as bank:
        hand_over(early, bank.skills)  # no search yet: the client asked after the hold
        assert early.search("rebase my branch onto main", k=3)  # answered from the snapshot
        assert bank.skills.search("rebase my branch onto main", k=3)  # then by the bank
        assert early.trust_book is bank.skills.trust_book
        assert early.__dict__["_versions_seen"] is bank.skills.__dict__["_versions_seen"]


def test_a_write_first_ends_the_hold_and_is_found_next(tmp_path):
    """The bank's opening waits (here up to 120 s) for the first search from the snapshot: a
    first call that writes must end that wait, not sit behind it, and a search after the write
    answers from the bank (the snapshot does not have the new skill)."""
    root, folder = library(tmp_path)

    async def main() -> None:
        await prime(root, folder, **ENV)
        async with session(root, folder, **ENV) as client:
            with anyio.fail_after(100):  # under the hold: a deadlock fails here
                async with anyio.create_task_group() as group:
                    saved: dict = {}

                    async def save() -> None:
                        saved["r"] = await client.call_tool("save_skill", {
                            "name": "invoice-ocr",
                            "description": "Read totals from scanned invoices with OCR",
                            "body": "# Steps\n\nRun tesseract.\n"})

                    group.start_soon(save)
                    group.start_soon(find, client, "extract the tables of a PDF report", None)
            assert not saved["r"].is_error, saved["r"].content[0].text
            found = await find(client, "read the totals from scanned invoices with OCR", None)
            assert found["skills"] and found["skills"][0]["name"] == "invoice-ocr"

    anyio.run(main)


def test_vectors_of_another_embedding_are_not_used(tmp_path, model_dir):
    """Primed with the hash embedding, started with MiniLM: the bank refuses the collection
    (built with another embedding), and the snapshot, whose vectors are the hash embedding's,
    must not answer in its place."""
    root, folder = library(tmp_path)

    async def main() -> None:
        await prime(root, folder, **ENV)
        async with session(root, folder) as client:
            result = await client.call_tool("find_skills", {"task": "extract the tables of a "
                                                            "PDF report"})
            # an answer would have come from the snapshot: the bank refuses, and says why
            assert result.is_error and "skillbank-hash" in result.content[0].text

    anyio.run(main)


WRITER = """
import sys
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
with Skillbank.open(sys.argv[1], skill_roots=[sys.argv[2]], embedding_function=HashEmbedding(),
                    include_bundled=False) as bank:
    bank.skills.save("invoice-ocr", "Read totals from scanned invoices with OCR",
                     "# Steps\\n\\nRun tesseract.\\n")
print("saved", flush=True)
"""


@pytest.mark.parametrize("snapshot", ["1", "0"])
def test_a_skill_written_by_another_process_while_the_server_starts_is_found(tmp_path, snapshot):
    """The snapshot was current when the server checked it; then, while the bank's opening
    waited for the first search (the owner lock still free), another process opened the root
    and saved a skill. A find_skills sent after that process finished must find it: the
    snapshot it was checked against is no longer the root's (CURRENT moved on, or DIRTY)."""
    import subprocess
    import sys as _sys

    from test_mcp_transports import base_env

    root, folder = library(tmp_path)

    async def main() -> None:
        await prime(root, folder, **ENV)
        async with session(root, folder, SKILLBANK_MCP_SNAPSHOT=snapshot, **ENV) as client:
            await anyio.sleep(20)  # the snapshot library is built (the bank waits for a call)
            done = await anyio.run_process([_sys.executable, "-c", WRITER, str(root), str(folder)],
                                           env=base_env(), check=False)
            assert done.returncode == 0, done.stderr.decode()[-2000:]
            found = await find(client, "read the totals from scanned invoices with OCR", None)
            assert found["skills"] and found["skills"][0]["name"] == "invoice-ocr", found

    anyio.run(main)


def test_the_snapshot_library_holds_the_banks_vectors_bit_for_bit_before_any_search(tmp_path,
                                                                                   model_dir):
    """#27 cold start: the snapshot library takes the saved matrix as it is at open (its first
    search no longer reads it back text by text and normalises it again). The rows must be the
    very vectors the opened bank ranks by: same texts, same order, the same float32 bits (the
    read-back normalised them a second time: up to 3e-8 off)."""
    import numpy as np

    from skillbank.bank import Skillbank
    from skillbank.embeddings import MiniLMEmbedding
    from skillbank.settings import load_settings
    from skillbank.snapshot_search import open_library

    root, folder = library(tmp_path)
    anyio.run(lambda: prime(root, folder, SKILLBANK_EMBEDDING="minilm"))
    embedding = MiniLMEmbedding(model_dir=str(model_dir))
    early = open_library(load_settings(root, skill_roots=(str(folder),), model_dir=model_dir),
                         [folder], embedding)
    assert early is not None
    held = early.index._dense
    assert held.matrix is not None, "the vectors are read back at the first search"
    with Skillbank.open(root, skill_roots=[folder], embedding_function=embedding,
                        include_bundled=False, sync=False) as bank:
        dense = bank.index("skills")._dense
        with dense._lock:
            dense._load()  # every vector, from Chroma, as the bank's searches rank by
            assert held.ids == dense.ids
            assert held.matrix.dtype == dense.matrix.dtype
            assert np.array_equal(held.matrix, dense.matrix)
        query = "extract the tables of a PDF report"
        assert [(h.id, h.score) for h in early.search(query, k=4)] == \
            [(h.id, h.score) for h in bank.skills.search(query, k=4)]


def test_the_snapshot_keeps_the_prototypes_and_word_count_its_first_search_would_compute(
        tmp_path, monkeypatch):
    """The saver keeps the background prototypes and the mean words per item beside the vectors;
    a library opened over the snapshot is given them (equal to what it would compute) and
    answers as the bank does; a snapshot saved without them (before session 11) still opens,
    its first search computes them, and the next save adds them."""
    import numpy as np

    from skillbank.bank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.memories.skills import fit, search
    from skillbank.settings import load_settings
    from skillbank.snapshot_search import DENSE_FILE, folder_of, open_library, save

    root, folder = library(tmp_path)
    bank = Skillbank.open(root, skill_roots=[folder], embedding_function=HashEmbedding(),
                          include_bundled=False)
    try:
        bank.skills.sync()
        assert save(bank.index("skills"))
    finally:
        bank.close()
    settings = load_settings(root, skill_roots=(str(folder),))
    roots = [Path(r) for r in settings.skill_roots]

    opened = open_library(settings, roots, HashEmbedding())
    assert opened is not None
    seeded = opened._background._prototypes
    assert np.allclose(seeded, fit.Background(HashEmbedding()).prototypes(), atol=1e-6)
    count, words = search._cache[id(opened.index)]
    search._cache.pop(id(opened.index))
    assert words == pytest.approx(search.words_per_item(opened.index))
    first = [(h.id, round(h.score, 6)) for h in opened.search("fix my docker build", k=3)]

    # A snapshot saved before session 11: its vectors without the two.
    current = folder_of(settings) / json.loads(
        (folder_of(settings) / "CURRENT").read_text())["snapshot"] / DENSE_FILE
    with np.load(current) as old:
        kept = {k: old[k] for k in ("ids", "matrix", "meta")}
    meta = json.loads(bytes(kept["meta"]))
    for key in ("background", "words_per_item"):
        meta.pop(key)
    kept["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    with open(current, "wb") as handle:
        np.savez(handle, **kept)
    older = open_library(settings, roots, HashEmbedding())
    assert older is not None and older._background is None
    assert [(h.id, round(h.score, 6)) for h in older.search("fix my docker build", k=3)] == first
    bank = Skillbank.open(root, skill_roots=[folder], embedding_function=HashEmbedding(),
                          include_bundled=False)
    try:
        bank.skills.sync()
        assert save(bank.index("skills"))  # vectors saved before the seeds are saved again
        resaved_path = folder_of(settings) / json.loads(
            (folder_of(settings) / "CURRENT").read_text())["snapshot"] / DENSE_FILE
        with np.load(resaved_path) as resaved:
            assert "prototypes" in resaved.files
            assert json.loads(bytes(resaved["meta"]))["words_per_item"] == pytest.approx(words)
        banks = [(h.id, round(h.score, 6)) for h in bank.skills.search("fix my docker build", k=3)]
    finally:
        bank.close()
    assert first == banks and first
