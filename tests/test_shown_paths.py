"""What an HTTP client is shown of the host's paths (skillbank.mcp_server.identity.shown_path).

Remote clients see paths relative to the memory root; a folder outside it only by its last
part — so the root's own `skills` and the bundled `skills` were both shown as "skills" in
`skillbank://stats` (docs hunt, session 18). Outside the root a path is now marked as such,
and the bundled skills are named."""

from __future__ import annotations

from skillbank import scope as scopes
from skillbank.mcp_server.identity import FACE, shown_path
from skillbank.memories.skills.skill_trust_api import _bundled_root


def test_a_remote_caller_tells_the_roots_skills_from_the_bundled_ones(tmp_path):
    root = tmp_path / "root"
    (root / "skills").mkdir(parents=True)
    elsewhere = tmp_path / "team" / "skills"
    remote = scopes.default_scope("default", face=FACE)
    with scopes.using(remote):
        shown = [shown_path(p, root) for p in (root / "skills", _bundled_root(), elsewhere)]
    assert shown == ["skills", "(bundled skills)", "…/skills"]
    assert len(set(shown)) == 3
    assert shown_path(str(elsewhere), root) == str(elsewhere)  # a local caller: whole
