"""What a curator does to guideline files by hand beside a running agent (hunt-curator, session 25).

#1: a rule set back to `status: active` by hand, a rule file written by hand or one moved to
another topic folder was never served by a long-running process's search or memory block (only
a rule the index offered was checked), until an unrelated list, get or write re-read the files.
#5: `forget` of a rule whose file was also copied into another topic folder said "forgot for
good", then the copy loaded as the rule and was served again, its text still on disk; a running
process never noticed the copy. #7: show/vote/retire of a rule whose file does not parse said
"no guideline" instead of naming the file and its error.

Each in process and through a client of an owner process (the developer guide).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from owner_client import bank_for
from skillbank.errors import NotFoundError

BOTH = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
SLIDES = "make a slide deck with bullets"


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def _settings(tmp_path: Path, text: str) -> None:
    """`<root>/skillbank.toml` read by this process's bank and by the owner's alike."""
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "skillbank.toml").write_text(text, encoding="utf-8")


def _served(bank, task: str, topic: str | None = None) -> list[str]:
    return [h.id for h in bank.guidelines.search(task, k=3, topic=topic)]


@BOTH
def test_rules_a_curator_puts_back_adds_or_moves_are_served(tmp_path, remote):
    _settings(tmp_path, "guidelines_recheck_seconds = 0\n")  # every search looks
    with bank_for(tmp_path, remote) as bank:
        gid = bank.guidelines.add("Keep slides to ten bullets.", topic="slides").guideline_id
        path = Path(bank.guidelines.get(gid).path)
        assert _served(bank, SLIDES) == [gid]
        _edit(path, "status: active", "status: retired")
        assert _served(bank, SLIDES) == []
        _edit(path, "status: retired", "status: active")  # the curator changed their mind
        assert _served(bank, SLIDES) == [gid]
        assert gid in bank.context_for("Make a slide deck with bullets").ids

        added = path.with_name("gl-0123456789ab.md")  # a rule written by hand
        added.write_text(path.read_text(encoding="utf-8").replace(gid, "gl-0123456789ab")
                         .replace("Keep slides to ten bullets.", "Never deploy on Fridays."),
                         encoding="utf-8")
        assert _served(bank, "deploy the release on friday") == ["gl-0123456789ab"]

        (path.parent.parent / "decks").mkdir()
        path.rename(path.parent.parent / "decks" / path.name)  # re-filed the documented way
        assert _served(bank, SLIDES, topic="decks") == [gid]
        assert gid not in _served(bank, SLIDES, topic="slides")


@BOTH
def test_a_rule_put_back_by_hand_is_served_within_the_default_recheck(tmp_path, remote):
    """The default spaces the check (2 s): a search after that long serves the rule."""
    with bank_for(tmp_path, remote) as bank:
        gid = bank.guidelines.add("Keep slides to ten bullets.", topic="slides").guideline_id
        path = Path(bank.guidelines.get(gid).path)
        assert _served(bank, SLIDES) == [gid]
        _edit(path, "status: active", "status: retired")
        assert _served(bank, SLIDES) == []
        _edit(path, "status: retired", "status: active")
        time.sleep(2.5)  # past the window however slow the machine: only ever more due
        assert _served(bank, SLIDES) == [gid]


def _files_holding(root: Path, text: str) -> list[str]:
    """Files under the root (Chroma's own aside: tests/test_forget.py greps those) that hold
    `text`."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and "chroma" not in p.relative_to(root).parts
                  and text.encode() in p.read_bytes())


def _copy_into_another_topic(bank, root: Path) -> tuple[str, Path]:
    """A rule, and its file copied into a second topic folder (`cp` where `mv` was meant)."""
    gid = bank.guidelines.add("Never put SQL in f-strings; use bound parameters.",
                              topic="python").guideline_id
    path = Path(bank.guidelines.get(gid).path)
    (root / "guidelines" / "sql").mkdir()
    copy = root / "guidelines" / "sql" / path.name
    shutil.copy(path, copy)
    return gid, copy


@BOTH
def test_a_running_process_notices_a_copy_of_a_rule_file(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        _, copy = _copy_into_another_topic(bank, tmp_path / "root")
        assert [(f.code, Path(f.path)) for f in bank.guidelines.problems()] == [
            ("duplicate-id", copy)]
        copy.unlink()
        assert bank.guidelines.problems() == []


@BOTH
def test_forget_erases_a_copy_of_the_rule_in_another_topic_folder(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        root = tmp_path / "root"
        gid, copy = _copy_into_another_topic(bank, root)
        _edit(copy, "Never put SQL in f-strings; use bound parameters.",
              "Name every index after its table.")  # and made a second rule of it
        bank.guidelines.sync()  # seen, whether or not this process noticed the copy

        bank.forget(gid, trusted=True)

        assert not list(root.glob(f"guidelines/*/{gid}.md"))
        assert gid not in [g.id for g in bank.guidelines.list()]
        assert _served(bank, "write a database query in python") == []
        assert _served(bank, "name the index of the table") == []
        with pytest.raises(NotFoundError):
            bank.guidelines.get(gid)
        assert bank.guidelines.problems() == []
        for text in ("f-strings; use bound", "every index after its table"):
            assert _files_holding(root, text) == []


@BOTH
def test_forget_erases_copies_kept_under_other_names(tmp_path, remote):
    """A file manager's `gl-X (copy).md` (which the bank's own warning names), an editor's
    `gl-X.md.bak` and a copy in a nested folder are read as no rule, but held its text after
    forget said "for good" (review F3, session 25)."""
    with bank_for(tmp_path, remote) as bank:
        root = tmp_path / "root"
        gid = bank.guidelines.add("Never log the card number SECRET123.",
                                  topic="python").guideline_id
        path = Path(bank.guidelines.get(gid).path)
        (path.parent / "old").mkdir()
        for copy in (path.parent / f"{gid} (copy).md", path.parent / f"{gid}.md.bak",
                     path.parent / "old" / f"{gid}.md"):
            shutil.copy(path, copy)
        bank.forget(gid, trusted=True)
        assert _files_holding(root, "SECRET123") == []


@BOTH
def test_a_rule_whose_file_does_not_parse_is_named_by_id(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        gid = bank.guidelines.add("Keep slides to ten bullets.", topic="slides").guideline_id
        path = Path(bank.guidelines.get(gid).path)
        _edit(path, "status: active", "status: [active")
        for call in (lambda: bank.guidelines.get(gid),
                     lambda: bank.guidelines.vote(gid, helpful=True),
                     lambda: bank.guidelines.retire(gid),
                     lambda: bank.forget(gid, trusted=True)):
            with pytest.raises(NotFoundError) as caught:
                call()
            assert str(path) in str(caught.value) and "cannot be read" in str(caught.value)
            assert "YAML" in str(caught.value)
        assert path.read_text(encoding="utf-8").count("status: [active") == 1  # untouched
        # Outside the reviewers, the one answer for an unknown id still (problems() is theirs).
        from skillbank.scope import Scope

        if not remote:
            reader = bank.scoped(Scope(principal="agent", role="contributor"))
            with pytest.raises(NotFoundError, match="no guideline") as caught:
                reader.guidelines.get(gid)
            assert str(path) not in str(caught.value)


def test_the_cli_names_the_broken_file_of_an_id(cli_root):
    from typer.testing import CliRunner

    from skillbank import Skillbank
    from skillbank.cli import app
    from skillbank.embeddings import HashEmbedding

    with Skillbank.open(cli_root, embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        gid = bank.guidelines.add("Keep slides to ten bullets.", topic="slides").guideline_id
        path = Path(bank.guidelines.get(gid).path)
    _edit(path, "status: active", "status: [active")
    for args in (["guidelines", "show", gid], ["guidelines", "vote", gid, "--helpful"],
                 ["guidelines", "retire", gid]):
        result = CliRunner().invoke(app, ["--no-bundled", *args])
        output = " ".join(result.output.split())  # the terminal wraps long paths
        assert result.exit_code != 0 and path.name in output and "cannot be read" in output
        assert "`skillbank guidelines list` names every file" in output
        assert "bank.guidelines" not in output


@pytest.mark.slow  # an MCP server process
async def test_an_mcp_session_serves_a_rule_put_back_by_hand(tmp_path):
    """The same over a real stdio MCP session: `search_guidelines` and `memory_context` served a
    rule set back to active, or written by hand, only after a resources read or a write."""
    import re
    import sys

    from mcp import Client, StdioServerParameters

    from test_mcp_transports import base_env

    root = tmp_path / "root"
    root.mkdir()
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "skillbank.mcp_server", "--root", str(root),
                                      "--no-bundled", "--trust"],
        env=base_env(SKILLBANK_EMBEDDING="hash", SKILLBANK_GUIDELINES_RECHECK_SECONDS="0"),
        cwd=str(root.parent))

    def ids(result) -> set[str]:
        assert not result.is_error, result.content
        return set(re.findall(r"gl-[0-9a-f]{12}",
                              "".join(getattr(c, "text", "") for c in result.content)))

    async with Client(params, read_timeout_seconds=120) as client:
        async def served(task: str) -> tuple[set[str], set[str]]:
            return (ids(await client.call_tool("search_guidelines", {"task": task})),
                    ids(await client.call_tool("memory_context", {"task": task})))

        assert not (await client.call_tool("add_guideline", {
            "text": "Keep slides to ten bullets.", "topic": "slides"})).is_error
        (path,) = root.glob("guidelines/*/*.md")
        gid = path.stem
        assert await served(SLIDES) == ({gid}, {gid})
        _edit(path, "status: active", "status: retired")
        assert await served(SLIDES) == (set(), set())
        _edit(path, "status: retired", "status: active")
        assert await served(SLIDES) == ({gid}, {gid})
        path.with_name("gl-0123456789ab.md").write_text(
            path.read_text(encoding="utf-8").replace(gid, "gl-0123456789ab")
            .replace("Keep slides to ten bullets.", "Never deploy on Fridays."), encoding="utf-8")
        assert "gl-0123456789ab" in (await served("deploy the release on friday"))[0]
