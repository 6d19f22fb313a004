"""A skill lists only the files a read of it accepts, and a refused path says its own reason
(hunt-disclose #5 and #8, session 25).

#5: `references/back\\slash.md` and `references/v1%2e0 notes.md` were listed by `load()`, MCP
`resources/list` and `load_skill` (as `…/back%5Cslash.md`, `…/v1%252e0%20notes.md`), and no
face could read them: `safe_join` refuses a backslash and a literal `%2e`/`%2f`/`%5c`, which a
second decoding layer would turn into a separator or `..`. They stay refused and are no longer
listed. #8: `./references/x.md`, `references/x.md/` and `references//x.md` were refused with
"must stay inside its folder (no '..')". Own and third-party skills, in process and through a
client of another process that owns the root, and through a real MCP session.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from conftest import write_skill
from owner_client import bank_for
from skillbank.errors import UnsafePathError
from skillbank.fsutil import safe_join

UNREADABLE = ["references/back\\slash.md", "references/v1%2e0 notes.md",
              "references/a%2Fb.md", "references/c%5cd.md"]
READABLE = ["references/ok.md", "references/50% done #1?.md"]


def _files(folder: Path) -> None:
    for relative in UNREADABLE + READABLE:
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(f"# {relative}\n")


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
async def test_a_skill_lists_only_the_files_a_read_accepts(tmp_path, remote):
    from skillbank.mcp_server import build_server

    vendor = tmp_path / "vendor"
    _files(write_skill(vendor, "release-notes", "Keep release notes for every version.").parent)
    own = tmp_path / "root" / "skills"
    _files(write_skill(own, "notes", "Write meeting notes as a markdown summary.").parent)
    with bank_for(tmp_path, remote, skill_roots=(vendor,)) as bank:
        for name in ("notes", "release-notes"):
            listed = [r.path for r in bank.skills.load(name).resources]
            assert sorted(listed) == sorted(READABLE), name
            for relative in listed:
                assert bank.skills.read_resource(name, relative) == f"# {relative}\n"
            for relative in UNREADABLE:  # still refused: never read as a plain name
                with pytest.raises(UnsafePathError):
                    bank.skills.read_resource(name, relative)
        async with Client(build_server(bank, trusted=False), mode="legacy") as client:
            uris = [str(r.uri) for r in (await client.list_resources()).resources]
            for name in ("notes", "release-notes"):
                files = [u for u in uris if u.startswith(f"skill://{name}/")
                         and not u.endswith("/SKILL.md")]
                assert len(files) == len(READABLE), files
                for uri in files:
                    assert (await client.read_resource(uri)).contents[0].text.startswith("# ")
                loaded = await client.call_tool("load_skill", {"name": name})
                assert not loaded.is_error
                text = loaded.content[0].text
                assert "slash" not in text and "v1%" not in text and "a%2" not in text, text


@pytest.mark.parametrize("relative, reason", [
    ("./references/x.md", "leave out the leading './' (write 'references/x.md')"),
    ("references/x.md/", "ends with '/': name a file (write 'references/x.md')"),
    ("references//x.md", "has an empty part ('//'): write 'references/x.md'"),
    ("./", "names no file"),
    ("references/./x.md", "has a '.' part: write 'references/x.md'"),
    ("references/../../x.md", "must stay inside its folder (no '..')"),
    ("references\\x.md", "no backslash"),
    ("references%2fx.md", "percent-encoded"),
    ("/etc/passwd", "must be relative"),
])
def test_each_refused_path_says_its_own_reason(tmp_path, relative, reason):
    with pytest.raises(UnsafePathError) as refused:
        safe_join(tmp_path, relative)
    assert reason in str(refused.value)
    if relative.startswith("./") or relative.endswith("/") or "//" in relative:
        assert "'..'" not in str(refused.value)  # #8: nothing here leaves the folder


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_read_says_why_a_dot_slash_path_is_refused(tmp_path, remote):
    own = tmp_path / "root" / "skills"
    folder = write_skill(own, "notes", "Write meeting notes as a markdown summary.").parent
    (folder / "references").mkdir()
    (folder / "references" / "x.md").write_text("# x\n")
    with bank_for(tmp_path, remote) as bank:
        assert bank.skills.read_resource("notes", "references/x.md") == "# x\n"
        for relative, reason in [("./references/x.md", "leading './'"),
                                 ("references/x.md/", "ends with '/'"),
                                 ("references//x.md", "empty part"),
                                 # a pinned skill's digests name `references/x.md` only; this
                                 # read passed (review of session 25's disclosure fixes)
                                 ("references/./x.md", "'.' part")]:
            with pytest.raises(UnsafePathError, match=reason) as refused:
                bank.skills.read_resource("notes", relative)
            assert "'..'" not in str(refused.value)
