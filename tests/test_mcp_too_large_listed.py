"""A skill file no read returns is marked so in `resources/list` (hunt-mcpauthor #4, session 37).

`references/big.md` (2 MiB) was listed with size, digest and MIME type like any file, and every
`resources/read` failed "resources over 1048576 bytes are not returned"; docs/mcp.md never named
the limit. Now the listing marks it (`_meta["skillbank/too_large"]`, "too large to read" in its
description); a file within the limit is listed as before. Through a real MCP session.
"""

from __future__ import annotations

import pytest

from conftest import write_skill


async def test_a_file_over_the_read_limit_is_listed_as_too_large(tmp_path):
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.mcp_server import build_server

    bank = Skillbank.open(tmp_path / "root", include_bundled=False,
                          embedding_function=HashEmbedding())
    try:
        folder = write_skill(bank.root / "skills", "big-notes", "Keep the big notes.").parent
        (folder / "references").mkdir()
        (folder / "references" / "big.md").write_text("x" * (2 << 20))
        (folder / "references" / "small.md").write_text("small\n")
        bank.skills.sync()
        async with Client(build_server(bank, trusted=True)) as client:
            listed = {str(r.uri): r for r in (await client.list_resources()).resources}
            big = listed["skill://big-notes/references/big.md"]
            small = listed["skill://big-notes/references/small.md"]
            assert big.size == 2 << 20 and "too large to read" in big.description
            assert (big.meta or {}).get("skillbank/too_large") is True
            assert "too large" not in small.description
            assert "skillbank/too_large" not in (small.meta or {})
            with pytest.raises(MCPError, match="1048576 bytes"):
                await client.read_resource("skill://big-notes/references/big.md")
            assert (await client.read_resource(
                "skill://big-notes/references/small.md")).contents[0].text == "small\n"
    finally:
        bank.close()
