"""A skill folder that is a git clone never serves its `.git/` (hunt-git #4, session 23).

The bank's own skill `pdf`, cloned with a token in its remote URL, served `.git/config` (the
token in full) and `.git/logs/HEAD` to any MCP client, untrusted HTTP ones included, through
`read_skill_resource` and `skill://pdf/.git/config`: reads checked hidden and vendored files
only for skills not the bank's own, while the resource list never named them. Through an
untrusted MCP server face, in process and through a client of another process that owns the
root.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from owner_client import bank_for
from skillbank.errors import NotFoundError

TOKEN = "SECRET-TOKEN-4711"
#: The last two through links committed in the clone (review of session 23): a file link to
#: `.git/config` and a folder link to `.git/`.
HIDDEN = [".git/config", ".git/logs/HEAD", ".env", "node_modules/left-pad/index.js",
          "notes.md", "docs/config"]


def _clone_like(folder) -> None:
    (folder / ".git" / "logs").mkdir(parents=True)
    (folder / ".git" / "config").write_text(
        f'[remote "origin"]\n\turl = https://user:{TOKEN}@example.com/pdf.git\n')
    (folder / ".git" / "logs" / "HEAD").write_text(f"0000 5dca commit (initial) {TOKEN}\n")
    (folder / ".env").write_text(f"API_KEY={TOKEN}\n")
    (folder / "node_modules" / "left-pad").mkdir(parents=True)
    (folder / "node_modules" / "left-pad" / "index.js").write_text(f"// {TOKEN}\n")
    (folder / "notes.md").symlink_to(".git/config")
    (folder / "docs").symlink_to(".git", target_is_directory=True)
    (folder / "scripts").mkdir()
    (folder / "scripts" / "merge.py").write_text("print('merge')\n")


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_an_own_skill_that_is_a_clone_keeps_its_git_folder(tmp_path, remote):
    from skillbank.mcp_server import build_server

    with bank_for(tmp_path, remote) as bank:
        skill = bank.skills.create("pdf", "Merge PDF files into one document.", "# Steps\n")
        _clone_like(Path(skill.path).parent)
        bank.skills.sync()
        assert [r.path for r in bank.skills.load("pdf").resources] == ["scripts/merge.py"]
        assert bank.skills.read_resource("pdf", "scripts/merge.py") == "print('merge')\n"
        for relative in HIDDEN:
            with pytest.raises(NotFoundError, match="not served"):
                bank.skills.read_resource("pdf", relative)
        async with Client(build_server(bank, trusted=False), mode="legacy") as client:
            for relative in HIDDEN:
                tool = await client.call_tool("read_skill_resource",
                                              {"name": "pdf", "path": relative})
                assert tool.is_error and TOKEN not in tool.content[0].text, relative
                with pytest.raises(Exception) as refused:
                    await client.read_resource(f"skill://pdf/{relative}")
                assert TOKEN not in str(refused.value), relative
