"""A topic of emoji is one topic on every call (hunt-badinput #7, session 26).

`learn(rules=[{"topic": "🚀"}])` filed the rule under `topic-<8 hex>` (`slugify`), but `add`,
`list`, `search` and `playbook` refused `topic="🚀"` with UnsafePathError (their check matched
the typed topic against letters, digits, spaces, hyphens and underscores before slugifying), and
so did MCP `add_guideline`: the rule could be learnt but never added to, listed or filtered by
the name it was given. Punctuation and ASCII symbols stay refused (no path trick is slugified
into a name the caller did not mean). In process, through a client of an owner process, and
through a real MCP session.
"""

from __future__ import annotations

import pytest
from mcp import Client

from owner_client import bank_for
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.errors import UnsafePathError
from skillbank.fsutil import slugify

ROCKET = "🚀"


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_an_emoji_topic_is_the_same_topic_on_every_call(tmp_path, remote):
    filed = slugify(ROCKET)
    assert filed.startswith("topic-")
    with bank_for(tmp_path, remote) as bank:
        learnt = bank.guidelines.learn("Release review", rules=[
            {"text": "Tag releases with v-prefixed versions.", "topic": ROCKET}]).ids()[0]
        added = bank.guidelines.add("Sign every release tag.", topic=ROCKET).guideline_id
        assert bank.guidelines.get(added).topic == bank.guidelines.get(learnt).topic == filed
        assert bank.guidelines.topics() == [filed]
        assert {g.id for g in bank.guidelines.list(topic=ROCKET)} == {learnt, added}
        found = bank.guidelines.search("tag a release", topic=ROCKET)
        assert {h.id for h in found} == {learnt, added}
        playbook = bank.guidelines.playbook(ROCKET)
        assert playbook == bank.guidelines.playbook(filed)
        assert "Sign every release tag." in playbook
        # An emoji beside a word names the word, as `learn` files it.
        beside = bank.guidelines.add("Write the changelog first.",
                                     topic=f"{ROCKET} launch").guideline_id
        assert bank.guidelines.get(beside).topic == "launch"


@pytest.mark.parametrize("bad", ["../x", "$HOME", "~x", "a/b", "%2e%2e", "🚀/..", "🚀" * 65])
def test_punctuation_and_ascii_symbols_stay_refused(tmp_path, bad):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        with pytest.raises(UnsafePathError):
            bank.guidelines.add("Sign every release tag.", topic=bad)
        with pytest.raises(UnsafePathError):
            bank.guidelines.list(topic=bad)
        assert bank.guidelines.list() == []


async def test_mcp_add_guideline_takes_an_emoji_topic(tmp_path):
    from skillbank.mcp_server import build_server

    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        async with Client(build_server(bank, trusted=True)) as client:
            result = await client.call_tool("add_guideline", {
                "text": "Tag releases with v-prefixed versions.", "topic": ROCKET})
            assert not result.is_error, result.content[0].text
            gid = result.structured_content["guideline_id"]
        assert bank.guidelines.get(gid).topic == slugify(ROCKET)
