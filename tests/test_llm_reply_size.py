"""hunt-llm #4, session 32: a 10 MB sampled reply of "[" took ~40 s to parse in pure Python
(20 tries, each to the end of the reply), on the MCP server's event loop. Parsing a reply is
not a memory operation: these tests call the distiller and `extract_json` directly."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest

from skillbank.distill import LLMDistiller
from skillbank.distill.json_reply import MAX_REPLY_CHARS, ReplyTooLong, extract_json
from skillbank.records import Experience


def test_a_reply_over_the_limit_is_not_read_and_says_why():
    """hunt-llm #4, session 32: a 10 MB reply of "[" took ~40 s to parse (each of 20 tries
    scanned to the end). A reply over MAX_REPLY_CHARS is now refused at once: the rules come
    from the fallback and `last_error` says the reply was too long."""
    huge = "[" * (MAX_REPLY_CHARS + 1)
    with pytest.raises(ReplyTooLong):
        extract_json(huge)
    distiller = LLMDistiller(lambda prompt: huge)
    rules = distiller.rules_from_critique("Use British spelling in the docs.")
    assert [r.text for r in rules] == ["Use British spelling in the docs."]
    assert distiller.last_error.startswith("ReplyTooLong: the reply is 1,000,001 characters")
    assert distiller.relate("Use short sentences.", "Use British spelling.", similarity=0.2) == "distinct"
    assert distiller.lessons_from_experience(Experience(task="Migrate the users table",
                                                        outcome="failure", feedback="Forgot the lock."))
    assert distiller.last_error.startswith("ReplyTooLong")


def test_one_scan_finds_what_the_tries_found():
    """The single scan (hunt-llm #4) keeps the old readings: the first span that parses,
    a nested one when the outer does not, strings and apostrophes respected."""
    assert extract_json('Sure: [{"text": "a ] b"}] and more [1]') == [{"text": "a ] b"}]
    assert extract_json('[{"text": "ok"},, {"text": "b"}]') == {"text": "ok"}
    assert extract_json("The users' table: [{'text': \"Don't [x]\"}]") == [{"text": "Don't [x]"}]
    assert extract_json("[" * (MAX_REPLY_CHARS - 10)) is None
    assert extract_json("[" * (MAX_REPLY_CHARS - 10) + "]") == []
    assert extract_json("x [ " * 20000 + "[1, 2]") == [1, 2]
    assert extract_json("```json\n[1]\n```" * 50_000) == [1]


def test_the_async_parse_runs_off_the_event_loop(monkeypatch):
    """hunt-llm #4, session 32: the MCP server's `learn_from_critique` awaited
    `arules_from_critique`, which parsed the sampled reply on the event loop (a 10 MB reply
    froze the session's other calls ~20 s). The parse now runs in a worker thread."""
    threads: dict[str, int] = {}
    parse_rules, parse_lessons = LLMDistiller._parse_rules, LLMDistiller._parse_lessons

    def rules(self, *a, **kw):
        threads["rules"] = threading.get_ident()
        return parse_rules(self, *a, **kw)

    def lessons(self, *a, **kw):
        threads["lessons"] = threading.get_ident()
        return parse_lessons(self, *a, **kw)

    monkeypatch.setattr(LLMDistiller, "_parse_rules", rules)
    monkeypatch.setattr(LLMDistiller, "_parse_lessons", lessons)

    async def sampled(prompt: str) -> str:
        return json.dumps([{"text": "Use British spelling.", "topic": "writing"}])

    async def main() -> int:
        d = LLMDistiller(lambda p: "", acomplete=sampled)
        assert [r.text for r in await d.arules_from_critique("Use British spelling.")] == ["Use British spelling."]
        await d.alessons_from_experience(Experience(task="Write the notes", outcome="success"))
        return threading.get_ident()

    loop_thread = asyncio.run(main())
    assert threads and all(t != loop_thread for t in threads.values()), threads
