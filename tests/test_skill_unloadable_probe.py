"""Only a skill folder a sync serves is named as "does not load"; the bank's own such skill is
fixed or removed by a write (review 4 #3, #4, session 38).

#3: `load("a/b/c")`, `load(".secret")` or `load("ok-skill/references")` read any SKILL.md
under a skill root, hidden or deeper than the walk goes or a skill's own resource, and told
the caller its size or encoding (an untrusted MCP client too), ending "`skillbank skills sync`
reports every such file", which the sync never did for them. Now only a name that is one
folder not starting with "." is looked for; anything else is an unknown name.

#4: `skills update` and `skills delete` of a too-large SKILL.md in the bank's own folder were
refused with "fix the file", though a write over it is how it gets fixed: every write asked
the read's "does not load" question. Now only reads ask it; `update` with a whole new text
writes it anew (the old file kept in the trash), `delete` moves it to the trash.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from conftest import write_skill
from owner_client import bank_for
from skillbank.errors import InvalidInputError, NotFoundError, UnreadableError
from test_cli import Run

PROBES = (".secret", "a/b/c/d/e/f/g", "ok-skill/references")


def probe_files(folder: Path) -> None:
    """A good skill; a Latin-1 SKILL.md in a hidden folder, a 2 MB one seven folders down,
    and one without frontmatter among the good skill's resources: none of them a skill."""
    write_skill(folder, "ok-skill", "A fine skill.")
    hidden = folder / ".secret" / "SKILL.md"
    hidden.parent.mkdir(parents=True)
    hidden.write_bytes(b"---\nname: x\n---\n\xff\n")
    deep = folder / "a" / "b" / "c" / "d" / "e" / "f" / "g" / "SKILL.md"
    deep.parent.mkdir(parents=True)
    deep.write_bytes(b"x" * 2_000_000)
    resource = folder / "ok-skill" / "references" / "SKILL.md"
    resource.parent.mkdir(parents=True)
    resource.write_text("no frontmatter here")


def _unknown(message: str, name: str) -> None:
    assert f"no skill named {name!r}" in message, message
    for leak in ("UTF-8", "1048576", "frontmatter", "sync` reports"):
        assert leak not in message, message


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_name_no_sync_serves_is_unknown_not_probed(tmp_path, remote):
    folder = tmp_path / "extra"
    probe_files(folder)
    with bank_for(tmp_path, remote, skill_roots=(folder,)) as bank:
        assert bank.skills.sync().skipped == []
        for name in PROBES:
            for call in (lambda: bank.skills.load(name),
                         lambda: bank.skills.read_resource(name, "SKILL.md")):
                with pytest.raises(NotFoundError) as caught:
                    call()
                assert not isinstance(caught.value, UnreadableError), caught.value
                _unknown(str(caught.value), name)


async def test_an_untrusted_mcp_client_cannot_probe_skill_files(tmp_path):
    from skillbank import Scope, scope as scopes
    from skillbank.mcp_server import build_server
    from skillbank.mcp_server.identity import FACE

    folder = tmp_path / "extra"
    probe_files(folder)
    big = write_skill(folder, "big-body", "Large body.", body="word " * 250_000)
    with bank_for(tmp_path, False, skill_roots=(folder,)) as bank:
        bank.skills.sync()
        http = Scope(principal="visitor", namespace="default", role="contributor",
                     trusted=False, face=FACE)
        with scopes.using(http):  # the scope the HTTP guard sets for a client without a token
            async with Client(build_server(bank, trusted=False)) as client:
                for name in PROBES:
                    for tool, args in (("load_skill", {"name": name}),
                                       ("read_skill_resource", {"name": name,
                                                                "path": "SKILL.md"})):
                        result = await client.call_tool(tool, args)
                        assert result.is_error
                        _unknown(result.content[0].text, name)
                    if "/" not in name:  # (with one, the URI names a resource of a skill)
                        with pytest.raises(Exception) as read:
                            await client.read_resource(f"skill://{name}/SKILL.md")
                        _unknown(str(read.value), name)
                # A skill folder the sync serves and reports is still named with why.
                result = await client.call_tool("load_skill", {"name": "big-body"})
                assert result.is_error and "is larger than 1048576 bytes" in \
                    result.content[0].text, result.content[0].text
                assert big.exists()


def _too_large(own: Path, name: str) -> Path:
    path = own / name / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text(f"---\nname: {name}\ndescription: d\n---\n" + "w " * 600_000)
    return path


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_the_banks_own_skill_that_does_not_load_is_fixed_or_removed(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        own = tmp_path / "root" / "skills"
        first, second, third = (_too_large(own, n) for n in ("big-one", "big-two", "big-three"))
        bank.skills.sync()
        assert not {"big-one", "big-two", "big-three"} & set(bank.skills.names())
        with pytest.raises(UnreadableError):  # a read still says why
            bank.skills.load("big-one")
        # A part alone cannot be built on a file that cannot be read: refused, saying how.
        with pytest.raises(InvalidInputError) as part:
            bank.skills.update("big-one", description="fixed")
        assert "give both a description and a body" in str(part.value)
        assert first.stat().st_size > 1_000_000  # nothing written
        fixed = bank.skills.update("big-one", description="fixed", body="Short now.")
        assert (fixed.description, fixed.body.strip()) == ("fixed", "Short now.")
        kept = list((tmp_path / "root" / ".trash").rglob("SKILL.md"))
        assert any(p.stat().st_size > 1_000_000 for p in kept), kept  # the old file kept
        saved = bank.skills.save("big-two", "saved", "Short too.")
        assert bank.skills.load("big-two").description == saved.description == "saved"
        trash = bank.skills.delete("big-three")
        assert not third.exists() and (Path(trash) / "SKILL.md").stat().st_size > 1_000_000
        assert {"big-one", "big-two"} <= set(bank.skills.names())
        assert "big-three" not in bank.skills.names()
        assert second.stat().st_size < 1000


def test_the_cli_updates_and_deletes_the_banks_own_skill_that_does_not_load(
        cli_root, tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLBANK_CLI_OWNER", "0")
    run = Run()
    run("--no-bundled", "skills", "list")  # the root and its own skills folder
    own = Path(cli_root) / "skills"
    first, second = _too_large(own, "big-one"), _too_large(own, "big-two")
    run("--no-bundled", "skills", "update", "big-one", "-d", "fixed", "-b", "Short now.")
    assert first.stat().st_size < 1000
    run("--no-bundled", "skills", "delete", "big-two")
    assert not second.exists()
