"""A hard-linked file in a skill not the bank's own is neither listed nor read.

Hunt (session 22, #9): `references/hard.md` in a third-party skill was a hard link to a file
outside the skill folder (a tar extracted without `filter="data"` makes one); `load` listed it
and `read_resource` / `skill://` served its content, where a symlink out was refused. Where a
file's other names lie cannot be told cheaply, so a skill not the bank's own has no
hard-linked resources; the bank's own skill keeps its. In process, and as a client of
another process that owns the root.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import write_skill
from test_skill_trust import open_bank, vendor_bank
from skillbank.errors import NotFoundError

SECRET = "TOPSECRET-hardlinked\n"


def _vendor(tmp_path: Path) -> Path:
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    skill = write_skill(tmp_path / "vendor", "leaky", "Summarise leaky notes.").parent
    (skill / "references").mkdir()
    (skill / "references" / "plain.md").write_text("plain\n")
    os.link(secret, skill / "references" / "hard.md")
    return tmp_path / "vendor"


def _check(bank) -> None:
    skill = bank.skills.load("leaky")
    assert [r.path for r in skill.resources] == ["references/plain.md"]
    with pytest.raises(NotFoundError, match="hard-linked"):
        bank.skills.read_resource("leaky", "references/hard.md")
    assert bank.skills.read_resource("leaky", "references/plain.md") == "plain\n"


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_hard_link_in_a_third_party_skill_is_not_served(tmp_path, remote):
    vendor = _vendor(tmp_path)
    root = tmp_path / "root"
    with vendor_bank(root, vendor, remote) as bank:
        _check(bank)


def test_the_bank_s_own_hard_linked_file_is_served(tmp_path):
    root = tmp_path / "root"
    bank = open_bank(root, [])
    try:
        own = write_skill(root / "skills", "mine", "My own notes.").parent
        (tmp_path / "shared.md").write_text("shared\n")
        os.link(tmp_path / "shared.md", own / "shared.md")
        bank.skills.sync()
        assert [r.path for r in bank.skills.load("mine").resources] == ["shared.md"]
        assert bank.skills.read_resource("mine", "shared.md") == "shared\n"
    finally:
        bank.close()


def test_a_skill_installed_by_hard_links_keeps_its_skill_md_and_lists_no_hard_link(tmp_path):
    """uv (Linux default) and pnpm install packages by hard links: a third-party skill shipped so
    lost even its `skill://NAME/SKILL.md` read, while `load` served the same text; and the MCP
    manifest listed the refused hard-linked files with their size and sha256 (s22 review)."""
    from mcp_server.resources import ManifestCache

    store = tmp_path / "store"
    installed = write_skill(store, "pdf-forms", "Fill PDF forms from a CSV.").parent
    (installed / "references").mkdir()
    (installed / "references" / "fields.md").write_text("fields\n")
    vendor = tmp_path / "vendor" / "pdf-forms"
    (vendor / "references").mkdir(parents=True)
    for relative in ("SKILL.md", "references/fields.md"):
        os.link(installed / relative, vendor / relative)
    bank = open_bank(tmp_path / "root", [tmp_path / "vendor"])
    try:
        assert bank.skills.read_resource("pdf-forms", "SKILL.md") == \
            (installed / "SKILL.md").read_text()
        listed = [f.path for f in ManifestCache().manifest(bank, "pdf-forms").files]
        assert listed == ["SKILL.md"]
    finally:
        bank.close()
