"""Issue 24's wipe by another door: a copied root (`cp -r`, a template) carried the original's
`.skillbank-id`, so on a Chroma server both were one deployment and the copy's deletes and
forgets removed the original's entries (its skill and experience silently unsearchable, even
after a sync). A copy is now refused before it touches a shared index, with the fix named; a
moved root, an embedded copy and a copy given a `deployment` of its own open as before (given
the original's: tests/test_deployment_one_root.py). Real `chroma run` server."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.errors import InvalidInputError
from skillbank.index_ownership import IDENTITY_FILE, ORIGIN_FILE


def _open(root: Path, **kw) -> Skillbank:
    return Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False, **kw)


def _fill(root: Path, **kw) -> str:
    with _open(root, **kw) as bank:
        bank.skills.save("key-rotation", "Rotate the signing keys safely.", "# Steps\n")
        return bank.experiences.record(task="Rotate the zanzibar signing keys", outcome="failure")


def _indexed(root: Path, **kw) -> dict[str, list[str]]:
    with _open(root, sync=False, share=False, **kw) as view:
        return {kind: sorted(view.index(kind).ids()) for kind in ("skills", "experiences")}


def test_a_copied_root_is_refused_on_a_chroma_server(tmp_path, chroma_server):
    a, b = tmp_path / "a", tmp_path / "b"
    eid = _fill(a, chroma_url=chroma_server)
    before = _indexed(a, chroma_url=chroma_server)
    assert before == {"skills": ["key-rotation"], "experiences": [eid]}
    shutil.copytree(a, b)
    with pytest.raises(InvalidInputError) as refused:
        with _open(b, chroma_url=chroma_server) as copy:  # before: it opened ...
            copy.skills.delete("key-rotation")  # ... and these removed A's entries
            copy.forget(eid)
    assert "is a copy of the root at" in str(refused.value)
    assert "deployment" in str(refused.value) and IDENTITY_FILE in str(refused.value)
    # It advised "the same value on both to share one index on purpose": the two roots then
    # deleted each other's entries (hunt-chroma #1, session 24).
    assert "same value" not in str(refused.value) and "team mode" in str(refused.value)
    assert _indexed(a, chroma_url=chroma_server) == before
    # The named fix: the copy becomes a deployment of its own; A keeps every entry.
    (b / IDENTITY_FILE).unlink()
    (b / ORIGIN_FILE).unlink()
    with _open(b, chroma_url=chroma_server) as copy:
        copy.skills.delete("key-rotation")
        copy.forget(eid)
    assert _indexed(a, chroma_url=chroma_server) == before
    # Or a `deployment` of its own set by hand: its own index, from its own files.
    shutil.copytree(a, tmp_path / "c")
    with _open(tmp_path / "c", chroma_url=chroma_server, deployment="team-x") as own:
        assert own.index("skills").ids() == ["key-rotation"]
    assert _indexed(a, chroma_url=chroma_server) == before


def test_a_moved_root_and_an_embedded_copy_open_as_before(tmp_path, chroma_server):
    a = tmp_path / "a"
    eid = _fill(a, chroma_url=chroma_server)
    moved = tmp_path / "moved"
    os.rename(a, moved)  # same file system: the id file keeps its inode, one deployment
    assert _indexed(moved, chroma_url=chroma_server)["experiences"] == [eid]
    embedded = tmp_path / "e"
    _fill(embedded)
    shutil.copytree(embedded, tmp_path / "e2")  # its own chroma/ folder: nothing shared
    with _open(tmp_path / "e2") as copy:
        assert copy.index("skills").ids() == ["key-rotation"]


def test_a_root_moved_to_another_disk_opens_and_a_copy_from_elsewhere_is_refused(
        tmp_path, chroma_server):
    """A move across file systems (or a restore to a new path) gives the id file a new inode:
    it was refused as a copy of a folder that no longer existed (review, session 17). On the
    machine the id was made on, the old folder being gone makes it a move; a root copied from
    another machine (whose folders this one cannot see) stays refused."""
    import json

    a = tmp_path / "a"
    eid = _fill(a, chroma_url=chroma_server)
    moved = tmp_path / "other-disk"
    shutil.copytree(a, moved)  # what `mv` across file systems does: copy, then delete
    shutil.rmtree(a)
    assert _indexed(moved, chroma_url=chroma_server)["experiences"] == [eid]
    with _open(moved, chroma_url=chroma_server) as bank:  # and it writes as that deployment
        assert bank.experiences.get(eid).task.startswith("Rotate")
    origin = json.loads((moved / ORIGIN_FILE).read_text())
    assert origin["path"] == str(moved.resolve())  # recorded where it lives now
    # A copy brought from another machine: its origin names that machine; refused as before.
    elsewhere = tmp_path / "from-laptop"
    shutil.copytree(moved, elsewhere)
    (elsewhere / ORIGIN_FILE).write_text(json.dumps({**origin, "path": "/home/ada/.skillbank",
                                                     "host": "ada-laptop"}))
    with pytest.raises(InvalidInputError, match="is a copy of the root at /home/ada"):
        _open(elsewhere, chroma_url=chroma_server).close()
