"""Bad input to the learning loop: a clear error, or a safe no-op with a reason; nothing lost
(issue 25's "Bad input" line; hunt-badinput #2, #3, #4 and #10, session 26).

- #2 `replaces=` naming a rule with that rule's own wording stored a copy under a new id and
  superseded the rule: its votes stayed behind, ids callers held pointed at a superseded rule,
  and each repeat chained another copy (untrusted too, once approved).
- #3 a critique of emoji or punctuation alone gave an empty report, where "" is `ignored`.
- #4 `learn(rules=[...])` stored rules with no words ("👍", "...", U+200B) as active rules,
  served to emoji-only requests, though `add()` refuses the same text.
- #10 two `rules=` replacing one id: rule 1 was written, then the call raised on rule 2 (rule 2
  lost, no report, a retry failed the same way).

Each in process and through a client of another process that owns the root; #2 and #3 also
through a real MCP session.
"""

from __future__ import annotations

import pytest
from mcp import Client

from owner_client import bank_for
from skillbank.errors import InvalidInputError

RULE = "Never put SQL in f-strings."
REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])


def _all(bank) -> list[tuple[str, str, str, int]]:
    return sorted((g.id, g.text, g.status, g.helpful) for g in bank.guidelines.list(status=None))


@REMOTE
def test_replacing_a_rule_by_its_own_wording_keeps_it(tmp_path, minilm, remote):
    with bank_for(tmp_path, remote, minilm) as bank:
        gid = bank.guidelines.add(RULE).guideline_id
        bank.guidelines.vote(gid, helpful=True)
        bank.guidelines.vote(gid, helpful=True)
        before = _all(bank)
        assert before == [(gid, RULE, "active", 2)]
        entries = [
            bank.guidelines.add(RULE, replaces=gid),
            bank.guidelines.add(RULE, replaces=gid, trusted=False),
            bank.guidelines.learn("critique", rules=[{"text": "never put sql in f-strings",
                                                      "replaces": gid}]).entries[0],
            bank.guidelines.learn("Never put SQL in f-strings", replaces=gid).entries[0],
        ]
        for entry in entries:
            assert entry.action == "ignored", entry
            assert gid in entry.detail and "already worded as this one" in entry.detail, entry
        assert _all(bank) == before  # one rule, its id and its votes
        # A new when_to_use is a change the caller asked for (review, session 26): it goes ahead.
        moved = bank.guidelines.add(RULE, replaces=gid, when_to_use="When writing SQL by hand")
        assert moved.action == "superseded" and moved.superseded_id == gid, moved
        assert bank.guidelines.get(moved.guideline_id).when_to_use == "When writing SQL by hand"


@REMOTE
def test_a_critique_with_no_words_is_ignored_with_a_reason(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        for critique in ("👍👍🔥", "!!!", "🚀"):
            entries = bank.guidelines.learn(critique).entries
            assert [(e.action, e.detail) for e in entries] == [
                ("ignored", "no words to learn from (only symbols or emoji)")], critique
        assert _all(bank) == []


@REMOTE
def test_rules_with_no_words_are_refused_as_add_refuses_them(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        for text in ("\u200b", "...", "👍"):
            with pytest.raises(InvalidInputError, match="rule 2 has no words"):
                bank.guidelines.learn("critique", rules=["Use tabs in Makefiles.", text])
            with pytest.raises(InvalidInputError, match="no words"):
                bank.guidelines.add(text)
            entries = bank.guidelines.learn("critique", candidates=[text]).entries
            assert [(e.action, e.detail) for e in entries] == [
                ("ignored", "no words to learn from (only symbols or emoji)")], text
        assert _all(bank) == []  # nothing written, not even the good rule of a refused call


@REMOTE
def test_two_rules_replacing_one_rule_are_refused_before_anything_is_written(tmp_path, minilm,
                                                                             remote):
    with bank_for(tmp_path, remote, minilm) as bank:
        old = bank.guidelines.add("Keep slides to five bullets.").guideline_id
        rules = [{"text": "Keep slides to three bullets.", "replaces": old},
                 {"text": "Use one idea per slide.", "replaces": old}]
        for _attempt in (1, 2):
            with pytest.raises(InvalidInputError, match=f"rules 1 and 2 both replace {old}"):
                bank.guidelines.learn("Three bullets, and one idea per slide.", rules=rules)
            assert _all(bank) == [(old, "Keep slides to five bullets.", "active", 0)]
        rules[1].pop("replaces")  # as the error says: the other rule without replaces
        report = bank.guidelines.learn("Three bullets, and one idea per slide.", rules=rules)
        assert [e.action for e in report.entries] == ["superseded", "added"], report
        assert {g.text for g in bank.guidelines.list(status="active")} == {
            "Keep slides to three bullets.", "Use one idea per slide."}


@REMOTE
async def test_the_mcp_tools_say_why_nothing_changed(tmp_path, minilm, remote):
    from skillbank.mcp_server import build_server

    with bank_for(tmp_path, remote, minilm) as bank:
        gid = bank.guidelines.add(RULE).guideline_id
        bank.guidelines.vote(gid, helpful=True)
        before = _all(bank)
        async with Client(build_server(bank, trusted=True), mode="legacy") as client:
            same = await client.call_tool("add_guideline", {"text": RULE, "replaces": gid})
            assert not same.is_error and same.structured_content["action"] == "ignored", same
            assert "already worded as this one" in same.structured_content["detail"]
            emoji = await client.call_tool("learn_from_critique", {"critique": "👍👍🔥"})
            assert [e["action"] for e in emoji.structured_content["entries"]] == ["ignored"]
        assert _all(bank) == before
