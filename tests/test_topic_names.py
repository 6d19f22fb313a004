"""Topics named in other languages keep their names (hunt i18n, #7).

`slugify` kept only a-z0-9 and fell back to "general": rules given the topics "数据库" (database)
and "前端" (front end) were both filed under `general`, so `context_for(topic="前端")` served the
database rule; "Sécurité" became `s-curit` and "Größe" `gr-e`, in `guidelines topics`, in the
listings and as folder names. Skill names keep the Agent Skills rule (a-z, 0-9, hyphens). In
process and through a client of another process that owns the root.
"""

from __future__ import annotations

import os
import unicodedata

import pytest

from owner_client import bank_for
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.errors import UnsafePathError
from skillbank.fsutil import check_topic, slugify


@pytest.mark.parametrize("text, topic", [
    ("数据库", "数据库"), ("Sécurité", "securite"), ("Größe", "grosse"), ("Łódź", "lodz"),
    ("Безопасность данных", "безопасность-данных"), ("हिन्दी भाषा", "हिन्दी-भाषा"),
    ("Customer Support", "customer-support"), ("snake_case", "snake-case"), ("  ", "general"),
])
def test_a_topic_keeps_its_words(text, topic):
    assert slugify(text) == topic and check_topic(topic) == topic


def test_a_topic_of_no_words_is_named_not_general():
    assert slugify("🚀") == slugify("🚀") != slugify("🎉")
    assert slugify("🚀").startswith("topic-") and check_topic(slugify("🚀"))


@pytest.mark.parametrize("bad", ["数据-", "数--据", "Abc", "数据/x", "a b", "a_b", "ДБ", "..", "con"])
def test_a_topic_folder_name_stays_safe(bad):
    with pytest.raises(UnsafePathError):
        check_topic(bad)


def test_skill_names_keep_the_agent_skills_rule(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        with pytest.raises(UnsafePathError):
            bank.skills.save("数据库", "Database rules.", "# Steps\n")


RULES = [("Use bound parameters in every SQL query.", "数据库"),
         ("Use rem units for font sizes in CSS.", "前端"),
         ("Always quote the invoice number in emails.", "Sécurité")]


def _learn_and_filter(bank) -> dict[str, str]:
    ids = {}
    for text, topic in RULES:
        report = bank.guidelines.learn("Review", rules=[{"text": text, "topic": topic}])
        ids[topic] = report.ids()[0]
    assert sorted(bank.guidelines.topics()) == sorted(["数据库", "前端", "securite"])
    for topic, gid in ids.items():
        shown = bank.context_for("Style the login page with CSS font sizes", topic=topic).ids
        assert shown == [gid], topic
    return ids


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_rules_are_filed_and_served_under_their_own_topic(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        ids = _learn_and_filter(bank)
    folders = set(os.listdir(tmp_path / "root" / "guidelines"))
    assert {"数据库", "前端", "securite"} <= folders and "general" not in folders
    with bank_for(tmp_path, False) as bank:  # read back from the files
        assert {g.id: g.topic for g in bank.guidelines.list()} == {
            ids["数据库"]: "数据库", ids["前端"]: "前端", ids["Sécurité"]: "securite"}


def test_a_topic_folder_named_in_nfd_is_the_same_topic(tmp_path):
    """macOS HFS+ hands folder names back decomposed (Hangul as jamo)."""
    with bank_for(tmp_path, False) as bank:
        gid = bank.guidelines.add("Write commit messages in Korean.", topic="한국어").guideline_id
    folder = tmp_path / "root" / "guidelines"
    os.rename(folder / "한국어", folder / unicodedata.normalize("NFD", "한국어"))
    with bank_for(tmp_path, False) as bank:
        assert bank.guidelines.get(gid).topic == "한국어"
        assert [g.id for g in bank.guidelines.list(topic="한국어")] == [gid]


def test_punctuation_names_no_topic():
    """"-" or "..." is what a distiller may answer for "no topic" (s22 review: it became a
    hashed topic of its own, outside the general pool)."""
    assert slugify("-") == slugify("...") == "general"


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_one_topic_one_folder_whatever_the_call(tmp_path, remote):
    """`learn` slugified a rule's topic ("sécurité" -> "securite") while `add`, `list` and
    `search` took it as typed, so one topic sat in two or three folders and a topic filter saw
    only part of it (s22 review); an NFD spelling was stored raw."""
    nfd = unicodedata.normalize("NFD", "sécurité")
    with bank_for(tmp_path, remote) as bank:
        learnt = bank.guidelines.learn("Security review", rules=[
            {"text": "Encrypt every exported invoice file.", "topic": "Sécurité"}]).ids()[0]
        added = bank.guidelines.add("Rotate the API keys every ninety days.",
                                    topic="sécurité").guideline_id
        typed = bank.guidelines.add("Never log access tokens.", topic=nfd).guideline_id
        assert bank.guidelines.topics() == ["securite"]
        # As typed in `learn`, capitals and all: `add`, `list` and `search` refused "Sécurité"
        # and "Release Notes" while `learn` filed them (hunt-upgrade, session 23).
        capital = bank.guidelines.add("Sign every release tag.", topic="Sécurité").guideline_id
        notes = bank.guidelines.add("Name the release in the title.",
                                    topic="Release Notes").guideline_id
        assert bank.guidelines.topics() == ["release-notes", "securite"]
        assert [g.id for g in bank.guidelines.list(topic="Release Notes")] == [notes]
        for topic in ("sécurité", nfd, "securite", "Sécurité"):
            assert {g.id for g in bank.guidelines.list(topic=topic)} == {
                learnt, added, typed, capital}
        found = bank.guidelines.search("encrypt the exported invoice file", topic="sécurité")
        assert learnt in [h.id for h in found]
