"""Storage that refuses a write is named to the model, by MCP and the adapters' tools alike, in
the CLI's words (hunt-disk #3 and the EFBIG wording of #4, session 29).

On a full disk MCP answered "Error executing tool save_skill" and no more: an agent could not
tell a full disk from a bug, nor know that nothing was saved. EFBIG said "[Errno 27] File too
large", naming neither the file nor the limit. The wording is the core's
(`skillbank.storage_errors`), shared by the CLI (`cli.reporting`), the MCP server and
`adapters._tools.run_tool`.

The write is refused for real: the process that writes the files gets a file size limit
(RLIMIT_FSIZE), so the kernel cuts the SKILL.md write short with EFBIG. A real MCP client
session; in process and as a client of an owner process. A full disk (ENOSPC) is made by a write
that takes a prefix and then fails, in process.
"""

from __future__ import annotations

import errno
import os

import pytest

from test_usage_disk_full import REMOTE, bank_and_owner, file_size_limit

BIG_BODY = "# Steps\n\n" + "Do one careful thing at a time. " * 400  # ~13 KB


def _save(name: str) -> dict[str, str]:
    return {"name": name, "description": "Written while the storage refuses. Use when testing.",
            "body": BIG_BODY}


@REMOTE
async def test_a_file_size_limit_is_named_with_the_file_and_nothing_saved(tmp_path, remote):
    """Fails before: "Error executing tool save_skill" (MCP) and a raw OSError out of the
    LangChain tool."""
    from mcp import Client

    from skillbank.adapters.langchain import SkillbankToolkit
    from skillbank.mcp_server import build_server
    from test_mcp_server import fails

    with bank_and_owner(tmp_path, remote) as (bank, pid):
        tool = next(t for t in SkillbankToolkit(bank, include=["save_skill"]).get_tools()
                    if t.name == "save_skill")
        async with Client(build_server(bank, trusted=True)) as client:
            with file_size_limit(pid, 4096):
                said = await fails(client, "save_skill", _save("big-skill"))
                adapter_said = str(tool.invoke(_save("bigger-skill")))
            names = {skill.name for skill in bank.skills.list()}
    for text, name in ((said, "big-skill"), (adapter_said, "bigger-skill")):
        assert "ulimit -f" in text and "nothing of this call was saved" in text, text
        assert f"skills/{name}/" in text, text  # the file it could not write
    assert "big-skill" not in names and "bigger-skill" not in names


async def test_a_full_disk_is_named_by_mcp_as_by_the_cli(tmp_path, monkeypatch):
    """ENOSPC after part of the file is written: MCP says what the CLI says, and that nothing
    was saved. Fails before: "Error executing tool learn_from_critique"."""
    from mcp import Client

    from skillbank import fsutil
    from skillbank.cli.reporting import _error_details
    from skillbank.mcp_server import build_server
    from test_mcp_server import fails

    real = fsutil._write_data

    def cut_short(handle, data):  # the disk takes 100 bytes, then is full
        real(handle, (data if isinstance(data, bytes) else str(data).encode())[:100]
             if isinstance(data, (str, bytes)) else b"")
        handle.flush()
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with bank_and_owner(tmp_path, False) as (bank, _):
        async with Client(build_server(bank, trusted=True)) as client:
            monkeypatch.setattr(fsutil, "_write_data", cut_short)
            said = await fails(client, "learn_from_critique", {
                "critique": "Always double-check the totals row in every invoice.",
                "task": "invoice"})
            monkeypatch.undo()
        rules = bank.guidelines.list()
    cli = _error_details(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))[1]
    assert cli.endswith("the disk under the memory root is full; free space and retry")
    assert "the disk under the memory root is full; free space and retry" in said, said
    assert said.endswith("nothing of this call was saved"), said
    assert not [r for r in rules if "totals row" in r.text]


@pytest.mark.parametrize("said", [
    "database or disk is full",  # SQLite's words, as Chroma raises them
    "the owner process raised OperationalError: database or disk is full",
])
def test_sqlite_full_is_worded_as_a_full_disk(said):
    from skillbank.cli.reporting import _error_details
    from skillbank.storage_errors import tool_message

    assert "the disk under the memory root is full" in tool_message(RuntimeError(said))
    assert "the disk under the memory root is full" in _error_details(RuntimeError(said))[1]


def test_the_cli_names_the_file_size_limit_and_the_file(tmp_path):
    """`skills update` under `ulimit -f`: the file and the limit named. Fails before: a bare
    "Error: [Errno 27] File too large" (hunt-disk #4, session 29)."""
    import resource
    import subprocess

    from test_multiprocess import BIN, env_for

    with bank_and_owner(tmp_path, False):
        pass  # the root and its skill, closed again
    root = tmp_path / "root"
    body = tmp_path / "body.md"
    body.write_text("# Steps\n\n" + "Step number filler text.\n" * 2000)
    hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
    done = subprocess.run(
        [str(BIN / "skillbank"), "--no-bundled", "skills", "update", "pdf-tables", "-f", str(body)],
        env=env_for(root), capture_output=True, text=True, timeout=120,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (16384, hard)))
    assert done.returncode == 1, done.stderr
    assert "ulimit -f" in done.stderr and "skills/pdf-tables/SKILL.md" in done.stderr, done.stderr
    assert "Use pdfplumber." in (root / "skills" / "pdf-tables" / "SKILL.md").read_text()


def test_a_refusal_outside_the_root_is_not_told_to_copy_the_root(tmp_path):
    """Review (session 29): the tools worded every PermissionError as the root's ("may not
    write …; copy the root somewhere writable"), a read of a third-party skill's file outside
    it too; the CLI says so only under the root. Fails before."""
    from skillbank.storage_errors import tool_message

    root = tmp_path / "root"
    outside = PermissionError(13, "Permission denied", "/opt/vendor-skills/knit/guide.md")
    inside = PermissionError(13, "Permission denied", str(root / "experiences" / "x.jsonl"))
    said = tool_message(outside, root)
    assert "may not read or write /opt/vendor-skills/knit/guide.md" in said
    assert "copy the root" not in said and said.endswith("nothing of this call was saved")
    assert "copy the root somewhere writable" in tool_message(inside, root)
