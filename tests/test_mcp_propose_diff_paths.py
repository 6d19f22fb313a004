"""`propose_skills` shows an HTTP client no host path in a draft's diff (hunt-mcpauthor #3,
session 37).

A revision of a skill from `--skills-dir EXT` came back with `path` made relative but the diff
header `--- /srv/.../EXT/csv-report/SKILL.md`: the host layout that errors, stats and
`save_skill`'s note hide from HTTP clients (docs/mcp.md). Through a real
`serve --transport http --token T --trust` and a real MCP session.
"""

from __future__ import annotations

from conftest import write_skill


async def test_a_drafts_diff_names_no_host_path_over_http(tmp_path):
    from mcp_http import bearer_session, call_ok, serving_http

    ext = tmp_path / "ext"
    write_skill(ext, "csv-report", "Summarise a CSV file into a short report")
    root = tmp_path / "root"
    with serving_http(root, tmp_path / "serve.log", "--token", "tok-trusted-123", "--trust",
                      "--skills-dir", str(ext)) as url:
        async with bearer_session(url, "tok-trusted-123") as client:
            for i in range(3):
                await call_ok(client, "record_experience", {
                    "task": f"Summarise the sales{i} CSV file into a short report",
                    "outcome": "failure", "tags": ["skill:csv-report"],
                    "feedback": "The totals were wrong because the header row was counted."})
            drafts = (await call_ok(client, "propose_skills", {}))["drafts"]
    assert [d["revises"] for d in drafts] == ["csv-report"]
    diff = drafts[0]["diff"]
    assert diff.startswith("--- ") and "csv-report/SKILL.md" in diff.splitlines()[0]
    assert str(tmp_path) not in diff and str(ext) not in diff
