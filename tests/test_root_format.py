"""A root stamped by a newer skillbank is refused, not misread (hunt-upgrade #3, session 30).

An older release opened on a root the current one had written counted one outsider's five
"not helpful" votes as five trusted failures and dropped a conversation's later turns, without
a word; team mode already refused a database migrated by a newer release. Now every open reads
`<root>/.format.json`: a newer format is refused (`NewerRootError`, naming the upgrade) before
anything is written, and a root with no stamp, an older or a damaged one gets this release's.
Releases before this one cannot look; the stamp is what lets the next ones refuse.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from owner_client import client_bank, owner_process
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.root_format import FORMAT, FORMAT_FILE, NewerRootError
from test_damaged_index import skillbank


def _open(root: Path) -> Skillbank:
    return Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False)


def _stamp(root: Path, number: object) -> None:
    (root / FORMAT_FILE).write_text(json.dumps({"format": number}) + "\n")


def test_a_root_is_stamped_and_a_newer_stamp_is_refused_before_any_write(tmp_path):
    root = tmp_path / "root"
    with _open(root) as bank:
        bank.experiences.record(task="Rotate the nginx TLS certificate", outcome="success")
    assert json.loads((root / FORMAT_FILE).read_text()) == {"format": FORMAT}
    _stamp(root, FORMAT + 1)
    before = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
    with pytest.raises(NewerRootError, match=rf"root format {FORMAT + 1}; this one knows "
                                             rf"{FORMAT}\).*upgrade skillbank"):
        _open(root)
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*")) == before
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    _stamp(fresh, FORMAT + 1)
    with pytest.raises(NewerRootError):
        _open(fresh)
    assert [p.name for p in fresh.iterdir()] == [FORMAT_FILE]  # nothing made beside it


@pytest.mark.parametrize("found", [0, "1", None, True, "not json"])
def test_an_older_missing_or_damaged_stamp_is_written_again(tmp_path, found):
    root = tmp_path / "root"
    root.mkdir()
    if found == "not json":
        (root / FORMAT_FILE).write_text("{half")
    elif found is not None:
        _stamp(root, found)
    with _open(root):
        pass
    assert json.loads((root / FORMAT_FILE).read_text()) == {"format": FORMAT}


def test_a_client_of_an_owner_is_refused_a_root_stamped_newer(tmp_path):
    """The client reads the stamp itself: an owner of the same (newer) release would serve it,
    but this process's own code is what would misread the answers' shapes."""
    root = tmp_path / "root"
    root.mkdir()
    with owner_process(root):
        with client_bank(root) as bank:
            bank.experiences.record(task="Rotate the nginx TLS certificate", outcome="success")
        assert json.loads((root / FORMAT_FILE).read_text()) == {"format": FORMAT}
        _stamp(root, FORMAT + 1)
        with pytest.raises(NewerRootError):
            with client_bank(root):
                pass


def test_the_cli_names_the_upgrade(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    _stamp(root, FORMAT + 7)
    done = skillbank(root, "--no-bundled", "skills", "list")
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert f"root format {FORMAT + 7}" in done.stderr and "upgrade skillbank" in done.stderr
    assert "Traceback" not in done.stderr
