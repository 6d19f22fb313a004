"""A guideline file's problems are told to the reviewers of its namespace only (hunt-scope #1,
session 28).

`guidelines.problems()` showed every reviewer every rule file a hand edit did not get through:
a reviewer of `team` read the paths, rule ids and frontmatter values of alice's files (a
file-manager copy, a `topic:` edited by hand, keys the format does not have), and so did the
memory browser's "Files that could not be read" and `skillbank --namespace bob guidelines
list`. Now a file is told to the reviewers of its namespace (the rule read from it, else the
`namespace:` the file names); one whose namespace cannot be told, to reviewers of every
namespace only — as damaged drafts are (`skills.draft_problems`, commit 4b9c799).

In process and through a client of an owner process; the browser and the CLI as people meet them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from owner_client import bank_for
from skillbank.errors import NotFoundError
from skillbank.scope import Scope
from test_ui_security import client

BOTH = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
ALICE = Scope(principal="alice", namespace="alice", role="contributor", face="test")
ALICE_REVIEWER = Scope(principal="arev", namespace="alice", role="reviewer", face="test")
TEAM_LEAD = Scope(principal="lead", namespace="team", role="reviewer", face="test")


def _damage_alices_files(bank, root: Path) -> dict[str, Path]:
    """alice's rules, hand-edited four ways; {what: the file named}."""
    alice = bank.scoped(ALICE)
    ids = [alice.guidelines.add(text, topic="support").guideline_id for text in (
        "Never email customers before legal reviews the text.",
        "Keep customer refunds under 100 euros without approval.",
        "Answer every support ticket within one working day.")]
    files = [Path(bank.guidelines.get(gid).path) for gid in ids]
    copy = files[0].with_name(f"{ids[0]} (copy).md")  # a file manager's copy: not read
    shutil.copy(files[0], copy)
    text = files[1].read_text(encoding="utf-8")  # a topic and a key edited in by hand
    files[1].write_text(text.replace("topic:", "topic: alice-private-topic\nold_topic:", 1),
                        encoding="utf-8")
    text = files[2].read_text(encoding="utf-8")  # a YAML slip: the rule is not read
    files[2].write_text(text.replace("status: active", "status: [active"), encoding="utf-8")
    nowhere = root / "guidelines" / "support" / "gl-0123456789ab.md"  # no frontmatter at all
    nowhere.write_text("Always answer in the customer's language.\n", encoding="utf-8")
    bank.guidelines.sync()
    return {"copy": copy, "edited": files[1], "broken": files[2], "nowhere": nowhere}


@BOTH
def test_a_reviewer_is_told_of_its_own_namespaces_files_only(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        files = _damage_alices_files(bank, tmp_path / "root")
        # Fails before: lead, who neither reads nor reviews alice, was shown all of them.
        assert bank.scoped(TEAM_LEAD).guidelines.problems() == []
        told = {(f.code, Path(f.path)) for f in bank.scoped(ALICE_REVIEWER).guidelines.problems()}
        assert told == {("bad-file-name", files["copy"]), ("topic-mismatch", files["edited"]),
                        ("unknown-key", files["edited"]), ("yaml", files["broken"])}
        # A file that names no namespace may be anyone's: the local admin reviews every one.
        everything = {(f.code, Path(f.path)) for f in bank.guidelines.problems()}
        assert everything == told | {("no-frontmatter", files["nowhere"])}

        broken = files["broken"].stem  # its id: its file is named to its reviewers only
        with pytest.raises(NotFoundError) as caught:
            bank.scoped(TEAM_LEAD).guidelines.get(broken)
        assert "no guideline" in str(caught.value) and "support" not in str(caught.value)
        with pytest.raises(NotFoundError, match="cannot be read"):
            bank.scoped(ALICE_REVIEWER).guidelines.get(broken)


@BOTH
def test_the_browser_of_another_namespace_lists_none_of_them(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        files = _damage_alices_files(bank, tmp_path / "root")
        c, _ = client(bank.scoped(TEAM_LEAD))
        page = c.get("/guidelines").text
        assert "support" not in page and "alice-private-topic" not in page
        c, _ = client(bank.scoped(ALICE_REVIEWER))
        page = c.get("/guidelines").text
        assert "Files that could not be read" in page and files["broken"].name in page


def test_the_cli_for_one_namespace_names_its_own_files_only(cli_root):
    from typer.testing import CliRunner

    from skillbank import Skillbank
    from skillbank.cli import app
    from skillbank.embeddings import HashEmbedding

    with Skillbank.open(cli_root, embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        files = _damage_alices_files(bank, cli_root)

    def listed(namespace: str) -> str:
        result = CliRunner().invoke(app, ["--no-bundled", "--namespace", namespace,
                                          "guidelines", "list"])
        assert result.exit_code == 0, result.output
        return " ".join(result.output.split())

    bobs = listed("bob")
    assert "support" not in bobs and "alice-private-topic" not in bobs  # fails before
    alices = listed("alice")
    assert files["broken"].name in alices and files["copy"].name in alices
    assert files["nowhere"].name not in alices  # it names no namespace: not alice's to see
