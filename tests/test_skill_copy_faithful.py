"""Skill writes keep file modes, and `skills copy` is a faithful copy of a skill folder.

Before the fix every file skillbank wrote was 0600 (`mkstemp`), so a copied script lost its
executable bit and `skills update` turned a hand-written 0644 SKILL.md into 0600; a link to a
sibling file was dropped without a word; and one asset over 1 MiB refused the whole copy. The
copy is run in process and through a client of another process that owns the root.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import write_skill
from owner_client import owner_process
from skillbank import fsutil
from skillbank.cli import app
from test_skills_repo import remote  # noqa: F401 - a fixture: a bare skills repository


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def opened(monkeypatch) -> list:
    """The banks the CLI opens in this process (to assert one was a client of an owner)."""
    from skillbank.bank import Skillbank

    seen: list = []
    real = Skillbank.open.__func__

    def spy(cls, *args, **kwargs):
        seen.append(real(cls, *args, **kwargs))
        return seen[-1]

    monkeypatch.setattr(Skillbank, "open", classmethod(spy))
    return seen


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


# fsutil.atomic_write -------------------------------------------------------------------------
def test_atomic_write_keeps_a_replaced_files_mode_and_new_files_private_unless_shared(
        tmp_path, umask_022):
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    fsutil.atomic_write(script, "#!/bin/sh\necho new\n")
    assert mode(script) == 0o755 and "echo new" in script.read_text()
    record = tmp_path / "record.json"
    fsutil.atomic_write(record, "{}")  # a memory record: what a user told an agent
    assert mode(record) == 0o600
    fresh = tmp_path / "new.md"
    fsutil.atomic_write(fresh, "text", private=False)  # a skill's file: shared as any other
    assert mode(fresh) == 0o644  # like open(): 0666 less the umask
    secret = tmp_path / "secret.json"
    fsutil.atomic_write(secret, "{}", mode=0o600)
    assert mode(secret) == 0o600
    fsutil.atomic_write(secret, "{}")  # rewritten: stays private
    assert mode(secret) == 0o600
    fsutil.atomic_write(tmp_path / "chunks.bin", iter([b"ab", "cd"]))  # bytes chunks stream too
    assert (tmp_path / "chunks.bin").read_bytes() == b"abcd"
    assert not list(tmp_path.glob(".*.tmp"))


def test_the_owner_endpoint_stays_private_under_a_loose_umask(tmp_path):
    from skillbank.sharing import endpoint

    old = os.umask(0o000)
    try:
        root = tmp_path / "root"
        root.mkdir()
        published = endpoint.Endpoint(socket=str(root / "s"), token="t" * 64, pid=os.getpid(),
                                      root=str(root), started=0.0)
        endpoint.write_endpoint(root, published)
    finally:
        os.umask(old)
    assert mode(root / endpoint.ENDPOINT_FILE) == 0o600
    assert endpoint.read_endpoint(root) is not None  # a readable-by-others file is refused


# skills copy / skills update -----------------------------------------------------------------
@pytest.fixture
def shared(tmp_path) -> Path:
    """A read-only skill folder with an executable script, an in-folder link, a link out of
    the folder, and a 2 MiB asset."""
    folder = tmp_path / "shared"
    skill = write_skill(folder, "pdf-tools", "Merge PDF files with the bundled script.",
                        "Run `scripts/merge.sh a.pdf b.pdf`; see references/usage.md.\n").parent
    (skill / "scripts").mkdir()
    (skill / "scripts" / "merge.sh").write_text('#!/bin/sh\necho merged "$@"\n')
    (skill / "scripts" / "merge.sh").chmod(0o755)
    (skill / "references").mkdir()
    (skill / "references" / "guide.md").write_text("# usage\n")
    (skill / "references" / "usage.md").symlink_to("guide.md")
    (tmp_path / "outside.txt").write_text("not the skill's\n")
    (skill / "references" / "escape.md").symlink_to(tmp_path / "outside.txt")
    (skill / "assets").mkdir()
    (skill / "assets" / "template.pptx").write_bytes(os.urandom(2 << 20))
    return folder


def check_copy(copy: Path, shared: Path, result: dict) -> None:
    source = shared / "pdf-tools"
    merged = subprocess.run([str(copy / "scripts" / "merge.sh"), "a.pdf"], capture_output=True,
                            text=True)
    assert merged.stdout == "merged a.pdf\n", merged  # still executable
    assert mode(copy / "scripts" / "merge.sh") == 0o755
    assert mode(copy / "SKILL.md") == 0o644 and mode(copy / "references" / "guide.md") == 0o644
    assert (copy / "references" / "usage.md").read_text() == "# usage\n"  # the link's file
    assert (copy / "assets" / "template.pptx").read_bytes() == \
        (source / "assets" / "template.pptx").read_bytes()
    assert not (copy / "references" / "escape.md").exists()
    assert result["left_out"] == [{"path": "references/escape.md",
                                   "reason": "a link out of the skill folder (not followed)"}]
    assert result["links_copied_as_files"] == ["references/usage.md"]
    assert "assets/template.pptx" in {r["path"] for r in result["resources"]}


def test_copy_keeps_modes_in_folder_links_and_large_assets_and_names_what_it_leaves_out(
        cli_root, shared, umask_022):
    base = ["--no-bundled", "--skills-dir", str(shared)]
    result = CliRunner().invoke(app, [*base, "--json", "skills", "copy", "pdf-tools"])
    assert result.exit_code == 0, (result.stdout, result.stderr)
    check_copy(cli_root / "skills" / "pdf-tools", shared, json.loads(result.stdout))
    # A person sees what was left out, and why.
    (cli_root / "skills" / "pdf-tools").rename(cli_root / "gone")
    human = CliRunner().invoke(app, [*base, "skills", "copy", "pdf-tools"])
    assert human.exit_code == 0, human.stderr
    assert "left out references/escape.md: a link out of the skill folder" in \
        " ".join(human.stdout.split())


def test_copy_through_a_client_of_the_owner_is_as_faithful(cli_root, shared, umask_022, opened):
    with owner_process(cli_root, (shared,)):
        result = CliRunner().invoke(app, ["--no-bundled", "--skills-dir", str(shared), "--json",
                                          "skills", "copy", "pdf-tools"])
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert opened and all(bank.is_remote for bank in opened)
    check_copy(cli_root / "skills" / "pdf-tools", shared, json.loads(result.stdout))


def test_update_keeps_a_hand_written_skill_files_mode(cli_root, umask_022):
    skill = write_skill(cli_root / "skills", "notes", "Take notes.")
    skill.chmod(0o664)
    result = CliRunner().invoke(app, ["--no-bundled", "skills", "update", "notes",
                                      "-d", "Take meeting notes."])
    assert result.exit_code == 0, result.stderr
    assert "meeting notes" in skill.read_text() and mode(skill) == 0o664


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_copy_proposed_in_git_names_what_the_proposal_cannot_carry(cli_root, shared, remote,
                                                                      monkeypatch):  # noqa: F811
    monkeypatch.setenv("SKILLBANK_SKILLS_REPO", str(remote))
    monkeypatch.setenv("SKILLBANK_SKILLS_FOLLOW_SECONDS", "0")
    result = CliRunner().invoke(app, ["--skills-dir", str(shared), "--json", "skills", "copy",
                                      "pdf-tools"])
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    out = json.loads(result.stdout)
    assert out["proposal"] is not None
    assert {e["path"] for e in out["left_out"]} == {"references/escape.md",
                                                     "assets/template.pptx"}
    assert any("scripts/merge.sh" in note for note in out["notes"])


def test_an_adopted_draft_is_a_skill_file_like_a_saved_one(tmp_path, umask_022):
    """Drafts were written private (0600) and adopted by a copy that kept it: a skill folder
    nobody else on the machine could read, unlike a saved skill (0644)."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        saved = bank.skills.save("csv-report", "Build a weekly CSV report from the orders.",
                                 "# CSV report\n\n1. Query.\n2. Write the CSV.\n")
        for i in range(4):
            bank.experiences.record(
                task=f"Import the orders CSV file into the Postgres database table {i}",
                steps=[{"action": "read_csv"}, {"action": "copy_into_table"}], outcome="success")
        drafts = bank.skills.propose(min_support=3)
        assert drafts
        adopted = bank.skills.adopt(drafts[0].name)
        assert mode(Path(saved.path)) == mode(Path(adopted.path)) == 0o644
