"""The tool gate crosses to an owner process (#26): a face in a process that is a client of the
root's owner (another agent, the CLI's background owner) sets the agent's tool names around its
calls; the owner runs skill search under them, for find_skills and the memory context alike."""

from __future__ import annotations

from conftest import write_skill
from test_shared_root import owner_process

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.memories.skills.dependencies import agent_tools


def test_an_owner_process_gates_on_the_client_agents_tools(tmp_path):
    """Fails before: the tool names lived in a context variable of the client's process and
    never reached the owner, which answered as if there were no gate."""
    folder = tmp_path / "skills"
    write_skill(folder, "git-branch-cleanup", "Clean up stale git branches after merges",
                extra="allowed-tools: Bash(git:*)\n")
    root = tmp_path / "root"
    with owner_process(root, skill_roots=(folder,)):
        bank = Skillbank.open(root, skill_roots=[folder], embedding_function=HashEmbedding(),
                              include_bundled=False)
        try:
            assert bank.is_remote
            task = "clean up stale git branches"
            assert [h.name for h in bank.skills.search(task)] == ["git-branch-cleanup"]
            with agent_tools(["read_file"]):
                assert bank.skills.search(task) == []
                assert "git-branch-cleanup" not in bank.context_for(task).text
            with agent_tools(["Bash", "read_file"]):
                assert [h.name for h in bank.skills.search(task)] == ["git-branch-cleanup"]
                assert "git-branch-cleanup" in bank.context_for(task).text
        finally:
            bank.close()
