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


def test_an_error_ending_a_sentence_or_in_backquotes_shows_no_host_path(tmp_path):
    """Session 31's review of hunt-mcp-longlived #3: `shown_paths_in` rewrote a folder only
    when a quote, a slash, a space or a bracket followed it, so a message ending "... under
    /srv/bank." or quoting it in backquotes showed the host's path whole; a sibling folder
    named like it ("/srv/bank.old") is another folder and stays as it is."""
    from skillbank.mcp_server.identity import shown_paths_in

    root = tmp_path / "bank"
    models = tmp_path / "models"
    remote = scopes.default_scope("default", face=FACE)
    with scopes.using(remote):
        said = shown_paths_in(f"no index under {root}. Copy `{models}` or {root}.old", root,
                              [str(models)])
    assert str(tmp_path) not in said.replace(f"{root}.old", ""), said
    assert said.startswith("no index under .. Copy `…/models`"), said
    assert f"{root}.old" in said, said
