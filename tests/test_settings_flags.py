"""Yes/no settings read from the environment mean what they say (session 20).

`SKILLBANK_SKILLS_DIRECT_PUBLISH=0` turned direct publishing on: the environment's "0" was kept
as a string, and a non-empty string is true. A word that is neither yes nor no, or a number
setting that is no number, is refused naming the setting.
"""

from __future__ import annotations

import pytest

from skillbank.settings import load_settings


@pytest.mark.parametrize("word, meant", [("0", False), ("false", False), ("No", False),
                                         ("off", False), ("1", True), ("true", True),
                                         ("YES", True), ("on", True)])
def test_a_flag_from_the_environment(tmp_path, monkeypatch, word, meant):
    monkeypatch.setenv("SKILLBANK_SKILLS_DIRECT_PUBLISH", word)
    monkeypatch.setenv("SKILLBANK_START_WITHOUT_CHROMA", word)
    settings = load_settings(tmp_path)
    assert settings.skills_direct_publish is meant
    assert settings.start_without_chroma is meant


def test_a_flag_from_the_root_settings_file(tmp_path):
    (tmp_path / "skillbank.toml").write_text("skills_direct_publish = false\n")
    assert load_settings(tmp_path).skills_direct_publish is False


@pytest.mark.parametrize("variable, value, named", [
    ("SKILLBANK_SKILLS_DIRECT_PUBLISH", "maybe", "skills_direct_publish"),
    ("SKILLBANK_DUPLICATE_THRESHOLD", "abc", "duplicate_threshold"),
])
def test_a_value_of_the_wrong_kind_is_refused_naming_the_setting(tmp_path, monkeypatch,
                                                                  variable, value, named):
    monkeypatch.setenv(variable, value)
    with pytest.raises(ValueError, match=named):
        load_settings(tmp_path)
