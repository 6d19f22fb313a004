"""The MCP change monitor's diff between two polls (`mcp_server.notify.changes`).

Met in `test_mcp_transports` one run in three: a SKILL.md rewritten by truncating it first
made the skill vanish for one poll and come back changed; subscribers got two list changes and
never the `resources/updated` for the URI they watched."""

from __future__ import annotations

from skillbank.mcp_server.notify import changes

URI = "skill://csv-cleaning/SKILL.md"


def test_a_uri_that_comes_back_changed_is_updated():
    known = {URI: "v1"}
    assert changes({URI: "v1"}, {}, known) == (True, [])  # gone for a poll
    assert changes({}, {URI: "v2"}, known) == (True, [URI])  # back, changed: updated


def test_plain_changes_and_returns_unchanged():
    known = {URI: "v1", "skill://a/SKILL.md": "a"}
    assert changes(dict(known), {URI: "v2", "skill://a/SKILL.md": "a"}, known) == (False, [URI])
    assert changes({URI: "v2"}, {}, known) == (True, [])
    assert changes({}, {URI: "v2"}, known) == (True, [])  # back as it was: nothing to read again
    assert changes({URI: "v2"}, {URI: "v2", "skill://new/SKILL.md": "n"}, known) == (True, [])
