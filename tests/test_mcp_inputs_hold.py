"""Four holes a user-style hunt found in the MCP faces (session 16), each through a real MCP
client session, in process and over a bank that is a client of another process owning the root.

- A small Latin-1 file was listed as text/plain (only the head of a file was checked, and a bad
  byte in its last four was taken for a character cut at the sample's end), then read back as
  an octet-stream blob; a bad byte after the first 8 KiB was never seen at all.
- `score` of record_experience / learn_from_critique took "0.5" and true, though numbers are
  strict everywhere else.
- SKILLBANK_MCP_PAGE_SIZE=0 answered every resources/list with an empty page and the cursor it
  was sent: a client following nextCursor never ended.
- A trusted restatement of a pending rule was reported as superseding a "contradiction".
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Iterator

import mcp_types as types
import pytest
from mcp import Client

from conftest import write_skill
from owner_client import client_bank, owner_process
from test_mcp_server import make_bank

TEXT_TAIL = "é" * 40_000  # 80,000 bytes of UTF-8: characters cross the 64 KiB read blocks


def _skill_files(shared: Path) -> None:
    folder = write_skill(shared, "latin-notes", "Notes kept in an old encoding").parent
    refs = folder / "references"
    refs.mkdir()
    (refs / "latin1.txt").write_bytes(b"latin1 \xe9\xe8\n")
    (refs / "late.txt").write_bytes(b"a" * 9000 + b"\xff\n")
    (refs / "long.txt").write_text("x" + TEXT_TAIL, encoding="utf-8")


@contextlib.contextmanager
def served_bank(tmp_path: Path, remote: bool) -> Iterator[Any]:
    """The test library, in this process or as a client of an owner process."""
    if not remote:
        bank = make_bank(tmp_path)
        _skill_files(tmp_path / "shared-skills")
        bank.skills.sync()
        try:
            yield bank
        finally:
            bank.close()
        return
    make_bank(tmp_path).close()  # writes the library and the root
    shared = tmp_path / "shared-skills"
    _skill_files(shared)
    with owner_process(tmp_path / "root", (shared,)), client_bank(tmp_path / "root") as bank:
        bank.skills.sync()
        yield bank


def server_over(bank: Any, *, trusted: bool = True) -> Any:
    from skillbank.mcp_server import build_server

    return build_server(bank, trusted=trusted)


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_a_file_is_listed_as_it_is_read(tmp_path, remote):
    with served_bank(tmp_path, remote) as bank:
        async with Client(server_over(bank), mode="legacy") as client:
            listed = {str(r.uri): r.mime_type for r in (await client.list_resources()).resources}
            for name, binary in [("latin1.txt", True), ("late.txt", True), ("long.txt", False)]:
                uri = f"skill://latin-notes/references/{name}"
                read = (await client.read_resource(uri)).contents[0]
                assert isinstance(read, types.BlobResourceContents) is binary, name
                assert listed[uri] == read.mime_type, (name, listed[uri], read.mime_type)
                if not binary:
                    assert read.text.endswith(TEXT_TAIL)
            refused = await client.call_tool("read_skill_resource",
                                             {"name": "latin-notes", "path": "references/latin1.txt"})
            assert refused.is_error and "UTF-8" in refused.content[0].text


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_scores_are_strict_numbers(tmp_path, remote):
    with served_bank(tmp_path, remote) as bank:
        async with Client(server_over(bank), mode="legacy") as client:
            for tool, args in [("record_experience", {"task": "Tag the release",
                                                      "outcome": "success"}),
                               ("learn_from_critique", {"critique": "Use tabs in Makefiles."})]:
                for bad in ("0.5", True):
                    result = await client.call_tool(tool, {**args, "score": bad})
                    assert result.is_error and "score" in result.content[0].text, (tool, bad)
                ok = await client.call_tool(tool, {**args, "score": 1})
                assert not ok.is_error, ok.content[0].text
        assert [e.score for e in bank.experiences.list()] == [1.0]


@pytest.mark.parametrize("setting", ["SKILLBANK_MCP_PAGE_SIZE", "SKILLBANK_MCP_CONCURRENCY"])
@pytest.mark.parametrize("value", ["0", "-1", "ten"])
def test_a_setting_below_one_is_refused_when_the_server_starts(tmp_path, monkeypatch, setting,
                                                               value):
    from skillbank.errors import InvalidInputError

    monkeypatch.setenv(setting, value)
    bank = make_bank(tmp_path)
    try:
        with pytest.raises(InvalidInputError, match=f"{setting}.*at least 1"):
            server_over(bank)
    finally:
        bank.close()


def test_serve_says_which_setting_to_fix(tmp_path):
    import subprocess
    import sys

    from test_mcp_transports import base_env

    env = base_env(SKILLBANK_MCP_PAGE_SIZE="0")
    done = subprocess.run([sys.executable, "-m", "skillbank.cli", "--root", str(tmp_path / "r"),
                           "serve"], env=env, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "SKILLBANK_MCP_PAGE_SIZE='0': give a whole number of at least 1" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_trusted_restatement_confirms_a_pending_rule(tmp_path, remote):
    with served_bank(tmp_path, remote) as bank:
        pending = bank.guidelines.learn("Always sign release tags with GPG.",
                                        trusted=False).entries[0]
        assert pending.action == "pending"
        entry = bank.guidelines.learn("Always sign release tags with GPG.").entries[0]
        assert entry.superseded_id == pending.guideline_id
        assert "contradiction" not in entry.detail and "twice" not in entry.detail
        assert f"confirms pending {pending.guideline_id}" in entry.detail
        assert bank.guidelines.get(entry.guideline_id).status == "active"
