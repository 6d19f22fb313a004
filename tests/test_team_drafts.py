"""A person's edit of a skill draft in team mode (issue 24): every worker sees it.

In team mode a draft is a row of `sb_drafts`; each worker keeps a working copy under its own
`<root>/drafts/`. Before, an edit reached only the working copy it was made in: the row kept
the text as proposed, and a worker that had read the draft once kept its own stale copy (its
`.draft.json` had not changed, so it was taken for "this worker's copy"), then adopted the
old text. Now a person edits a draft through `skillbank skills edit-draft` (or
`bank.skills.edit_draft`), acknowledged once the row holds it, or edits the working copy's
files, which that worker writes to the row at its next read of the drafts; either way every
worker's next read has it. Real PostgreSQL (private cluster), `chroma run`, and the person's
CLI as a process of its own on another root.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from team_worker import reindex_drafts, until

pytest.importorskip("psycopg")


def _draft(bank) -> str:
    return reindex_drafts(bank)[0]


def _text(bank, name: str) -> str:
    return Path(bank.skills.draft(name).path).read_text(encoding="utf-8")


def _edited(text: str, line: str) -> str:
    return text.rstrip() + f"\n\n## Pitfalls\n\n- {line}\n"


def _cli(root: Path, bank, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    """The person's `skillbank` on their own root, a process of the same deployment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLBANK_")}
    env.update(SKILLBANK_EMBEDDING="hash", SKILLBANK_CLI_OWNER="0", ANONYMIZED_TELEMETRY="False",
               SKILLBANK_DATABASE_URL=bank.store.db.url, SKILLBANK_DEPLOYMENT=bank.store.deployment,
               SKILLBANK_CHROMA_URL=bank.settings.chroma_url)
    if os.environ.get("SKILLBANK_MODEL_DIR"):
        env["SKILLBANK_MODEL_DIR"] = os.environ["SKILLBANK_MODEL_DIR"]
    return subprocess.run([sys.executable, "-m", "skillbank.cli", "--root", str(root), "--json",
                           *args], input=stdin, capture_output=True, text=True, env=env,
                          timeout=300)


def test_an_edit_through_the_cli_is_seen_by_every_worker_and_adopted(two_machines, tmp_path):
    a, b = two_machines
    name = _draft(a)
    before = _text(b, name)  # B's working copy holds the draft as proposed
    assert _text(a, name) == before
    edited = _edited(before, "Pause the writers before the rebuild, or the index forks.")

    done = _cli(tmp_path / "laptop", a, "skills", "edit-draft", name, "--file", "-", stdin=edited)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["name"] == name

    assert until(lambda: _text(a, name) == edited), "worker A kept the text as proposed"
    assert until(lambda: _text(b, name) == edited), "worker B kept its stale working copy"
    skill = b.skills.adopt(name)
    assert "the index forks" in Path(skill.path).read_text(encoding="utf-8")


def test_an_edit_of_a_working_copy_reaches_the_other_worker(two_machines):
    a, b = two_machines
    name = _draft(a)
    original = _text(b, name)
    assert _text(a, name) == original
    edited = _edited(original, "Check the replica lag first.")
    Path(b.skills.draft(name).path).write_text(edited, encoding="utf-8")  # a person, on B

    assert _text(b, name) == edited  # B's next read keeps it and writes it to the row
    assert until(lambda: _text(a, name) == edited), "worker A never saw B's edit"


def test_edits_on_two_workers_at_once_keep_both_texts(two_machines):
    a, b = two_machines
    name = _draft(a)
    original = _text(a, name)
    assert _text(b, name) == original
    folder_b = Path(b.skills.draft(name).path).parent
    mine = _edited(original, "Mine: warm the cache after.")
    (folder_b / "SKILL.md").write_text(mine, encoding="utf-8")  # a person on B, unsaved
    theirs = _edited(original, "Theirs: announce it in the channel.")
    a.skills.edit_draft(name, theirs)  # acknowledged first

    assert _text(b, name) == theirs
    kept = list((folder_b.parent / ".conflicts").glob(f"{name}-*/SKILL.md"))
    assert [p.read_text(encoding="utf-8") for p in kept] == [mine], "B's person's edit was lost"


def test_an_edit_that_is_not_a_valid_skill_changes_nothing(two_machines):
    from skillbank.errors import InvalidInputError

    a, b = two_machines
    name = _draft(a)
    original = _text(b, name)
    with pytest.raises(InvalidInputError, match="not a valid skill"):
        a.skills.edit_draft(name, "no front matter at all\n")
    with pytest.raises(InvalidInputError, match="not a valid skill"):
        a.skills.edit_draft(name, original.replace(f"name: {name}", "name: another-name"))
    assert _text(b, name) == original and _text(a, name) == original


def test_embedded_an_edit_is_the_drafts_file_and_adoption_serves_it(tmp_path):
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        name = _draft(bank)
        edited = _edited(_text(bank, name), "Keep the old index until the new one answers.")
        draft = bank.skills.edit_draft(name, edited)
        assert draft.name == name and _text(bank, name) == edited
        assert not (tmp_path / "root" / "drafts" / ".synced").exists()  # files column: no copy
        skill = bank.skills.adopt(name)
        assert "until the new one answers" in Path(skill.path).read_text(encoding="utf-8")
