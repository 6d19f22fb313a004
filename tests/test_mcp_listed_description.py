"""MCP `resources/list` carries a skill's description within the spec's 1,024 characters.

Hunt (session 22, #10): a third-party skill's 60 KB description went whole into
`resources/list`, which a client loads into its context, while `find_skills` and the memory
block trimmed it. The listing now carries `skill_file.listed_description` (cut at a word, with
an ellipsis); `load` still serves the whole description with its warning.
In process, and as a client of another process that owns the root.
"""

from __future__ import annotations

import pytest

from conftest import write_skill
from test_skill_trust import vendor_bank

LONG = "Add up invoice totals in a spreadsheet. " + "Also more words about invoices. " * 1900


def _check(bank) -> None:
    from mcp_server.resources import ManifestCache, list_entries

    (main,) = [e for e in list_entries(ManifestCache().all(bank)) if e["name"] == "big-desc"]
    assert 900 < len(main["description"]) <= 1024, len(main["description"])
    assert main["description"].startswith("Add up invoice totals in a spreadsheet.")
    assert main["description"].endswith("…")
    assert len(bank.skills.load("big-desc").description) == len(LONG.strip())


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_huge_description_is_cut_in_resources_list(tmp_path, remote):
    vendor = tmp_path / "vendor"
    write_skill(vendor, "big-desc", LONG.strip())
    root = tmp_path / "root"
    with vendor_bank(root, vendor, remote) as bank:
        _check(bank)
