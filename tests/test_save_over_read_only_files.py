"""`save` over a read-only skill carries its files over (hunt-mcpauthor #6, session 37).

`save_skill` of a name served from `--skills-dir` wrote the bank's own copy with the SKILL.md
only; that copy shadows the original, so `scripts/merge.py` was no longer served ("has no file
'scripts/merge.py'") while the new body still said to run it. An adopted revision and
`skills copy` carry the files; now `save` does too (a file the caller gives wins). A held
skill's files are not carried: they were never served, and would be served as the bank's own.
In process and through a real MCP session.
"""

from __future__ import annotations

import os

from conftest import write_skill
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding


def _ext(tmp_path):
    ext = tmp_path / "ext"
    folder = write_skill(ext, "pdf-merge", "Merge several PDF files into one document",
                         "# Steps\n\nRun scripts/merge.py.\n").parent
    (folder / "scripts").mkdir()
    (folder / "scripts" / "merge.py").write_text("print('merge')\n")
    os.chmod(folder / "scripts" / "merge.py", 0o755)
    (folder / "references").mkdir()
    (folder / "references" / "qpdf.md").write_text("qpdf notes\n")
    return ext


async def test_save_over_a_read_only_skill_keeps_serving_its_files(tmp_path):
    from mcp import Client

    from skillbank.mcp_server import build_server

    ext = _ext(tmp_path)
    bank = Skillbank.open(tmp_path / "root", skill_roots=[ext], include_bundled=False,
                          embedding_function=HashEmbedding())
    try:
        async with Client(build_server(bank, trusted=True)) as client:
            saved = await client.call_tool("save_skill", {
                "name": "pdf-merge", "description": "Merge PDFs v2",
                "body": "# Steps\n\nRun scripts/merge.py twice.\n"})
            assert not saved.is_error, saved.content
            loaded = (await client.call_tool("load_skill", {"name": "pdf-merge"})
                      ).structured_content
            assert loaded["trust"] == "own"
            read = await client.read_resource("skill://pdf-merge/scripts/merge.py")
            assert read.contents[0].text == "print('merge')\n"
        own = bank.skills.load("pdf-merge")
        assert own.writable and sorted(r.path for r in own.resources) == [
            "references/qpdf.md", "scripts/merge.py"]
        assert os.stat(os.path.join(os.path.dirname(own.path), "scripts", "merge.py")
                       ).st_mode & 0o100  # still executable
        # A file given with the save wins over the carried one.
        bank.skills.delete("pdf-merge")
        bank.skills.save("pdf-merge", "Merge PDFs v3", "# Steps\n\nRun it.\n",
                         resources={"scripts/merge.py": "print('mine')\n"})
        assert bank.skills.read_resource("pdf-merge", "scripts/merge.py") == "print('mine')\n"
        assert bank.skills.read_resource("pdf-merge", "references/qpdf.md") == "qpdf notes\n"
    finally:
        bank.close()


def test_a_held_skills_files_are_not_carried(tmp_path):
    ext = _ext(tmp_path)
    bank = Skillbank.open(tmp_path / "root", skill_roots=[ext], include_bundled=False,
                          embedding_function=HashEmbedding())
    try:
        bank.skills.review_skill("pdf-merge", "reject", reason="phones home")
        bank.skills.save("pdf-merge", "Merge PDFs, my own way", "# Steps\n\nUse qpdf.\n")
        assert bank.skills.load("pdf-merge").resources == []
    finally:
        bank.close()
