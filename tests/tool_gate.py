"""The framework tool-gate tests' bank, written once: one skill that declares it needs bash for
git (`allowed-tools: Bash(git:*)`), so an agent given a bash tool finds it and one without does
not, whichever framework builds the agent.

Test modules take the fixture as `from tool_gate import bank  # noqa: F401 - the fixture`.
"""

from __future__ import annotations

import pytest

from conftest import write_skill


@pytest.fixture
def bank(tmp_path):
    """A real bank (hash embedding, no bundled skills) holding only `git-branch-cleanup`."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    folder = tmp_path / "skills"
    write_skill(folder, "git-branch-cleanup", "Clean up stale git branches after merges",
                extra="allowed-tools: Bash(git:*)\n")
    bank = Skillbank.open(tmp_path / "root", skill_roots=[folder],
                          embedding_function=HashEmbedding(), include_bundled=False, sync=False)
    bank.skills.sync()
    yield bank
    bank.close()
