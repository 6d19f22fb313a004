"""`update`, `save` and MCP `save_skill` keep the SKILL.md they replace, so `restore` undoes them.

Hunt (report #3): create a skill, update its body, update it again: `history()` was `[]`,
`skill_versions()` listed only the current one, and the first text was nowhere under the root.
Adopt and restore kept the text they replaced; the commonest change (an author's `skills
update`, an agent's `save_skill`) kept nothing, so one wrong --body-file or an agent's
overwrite of a hand-written skill could not be undone. In process, through a client of another
process that owns the root, and through an MCP client.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from owner_client import bank_for
from skillbank.memories.skills import versions

V1 = "# v1\n\nGroup the changes by kind.\n"
V2 = "# v2\n\nLead with breaking changes.\n"
V3 = "# v3\n\nOne line per change.\n"


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_update_history_restore_round_trip(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        bank.skills.create("release-notes", "Write release notes from merged changes.", V1)
        bank.skills.update("release-notes", body=V2)
        bank.skills.save("release-notes", "Release notes, third take.", V3)  # save: an update
        history = bank.skills.history("release-notes")
        assert [v.reason.split(" by ")[0] for v in history] == ["before update", "before update"]
        assert [v.description for v in history] == ["Write release notes from merged changes."] * 2
        assert [Path(v.path).read_text().endswith(b) for v, b in zip(history, (V2, V1))] == \
            [True, True]  # newest first
        listed = bank.skills.skill_versions("release-notes")
        assert [v.version for v in listed[1:]] == [v.version for v in history]
        restored = bank.skills.restore("release-notes", history[-1].version)
        assert restored.body == V1
        after = bank.skills.history("release-notes")
        assert len(after) == 3 and Path(after[0].path).read_text().endswith(V3)
        bank.skills.update("release-notes", body=V1)  # nothing changes: nothing is kept
        assert len(bank.skills.history("release-notes")) == 3


def test_kept_versions_are_bounded_oldest_first(tmp_path, monkeypatch, hash_bank):
    monkeypatch.setattr(versions, "MAX_KEPT", 3)
    hash_bank.skills.create("release-notes", "Write release notes from merged changes.", "# 0\n")
    for n in range(1, 6):
        hash_bank.skills.update("release-notes", body=f"# {n}\n")
    history = hash_bank.skills.history("release-notes")
    assert [Path(v.path).read_text().split("---\n")[-1] for v in history] == \
        ["# 4\n", "# 3\n", "# 2\n"]
    assert len(list(Path(history[0].path).parent.glob("*.json"))) == 3


async def test_an_agent_s_save_skill_overwrite_can_be_undone(hash_bank):
    from skillbank.mcp_server import build_server

    hash_bank.skills.create("release-notes", "Write release notes from merged changes.", V1)
    async with Client(build_server(hash_bank, trusted=True)) as client:
        result = await client.call_tool("save_skill", {
            "name": "release-notes", "description": "Release notes.", "body": "# overwritten\n"})
        assert not result.is_error, result.content[0].text
    (kept,) = hash_bank.skills.history("release-notes")
    assert kept.reason.startswith("before update by ")
    assert hash_bank.skills.restore("release-notes", kept.version).body == V1
