"""Settings out of range, or misspelt, are refused naming the setting, where it was read and
what it may be (hunt-ops #4).

`skillbank.toml` was checked for types only: `retire_harmful_margin = -1` retired a rule on a
helpful vote, `merge_threshold = 5` stopped every merge, `nan` and a negative timeout were
taken, a misspelt key was ignored silently, `model_dir = 5` was a bare TypeError, and a bad
number exited 1 instead of 2 (invalid input).
"""

from __future__ import annotations

import pytest

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.errors import InvalidInputError
from skillbank.settings import load_settings


@pytest.mark.parametrize("line, named, allowed", [
    ("merge_threshold = 5", "merge_threshold", "from 0 to 1"),
    ("merge_threshold = nan", "merge_threshold", "from 0 to 1"),
    ("related_threshold = -0.1", "related_threshold", "from 0 to 1"),
    ("prune_max_help_rate = 7", "prune_max_help_rate", "from 0 to 1"),
    ("duplicate_threshold = -0.5", "duplicate_threshold", "at least 0"),
    ("retire_harmful_margin = -1", "retire_harmful_margin", "at least 1"),
    ("retire_harmful_margin = 0", "retire_harmful_margin", "at least 1"),
    ("retire_harmful_margin = 2.5", "retire_harmful_margin", "whole number"),
    ("chroma_timeout = -5", "chroma_timeout", "at least 0"),
    ("max_pending_guidelines = -1", "max_pending_guidelines", "at least 0"),
    ("model_dir = 5", "model_dir", "folder path"),
    ('merge_threshold = "abc"', "merge_threshold", "a number"),
])
def test_an_out_of_range_setting_in_the_file_is_refused(tmp_path, line, named, allowed):
    (tmp_path / "skillbank.toml").write_text(line + "\n")
    with pytest.raises(InvalidInputError) as caught:
        load_settings(tmp_path)
    message = str(caught.value)
    assert named in message and "skillbank.toml" in message and allowed in message, message


def test_a_misspelt_key_is_refused_with_the_nearest_name(tmp_path):
    (tmp_path / "skillbank.toml").write_text("max_pending_guidlines = 0\n")
    with pytest.raises(InvalidInputError, match="did you mean 'max_pending_guidelines'"):
        load_settings(tmp_path)


def test_what_the_file_may_hold_besides_settings_is_accepted(tmp_path):
    (tmp_path / "skillbank.toml").write_text(
        'include-bundled = false\nchroma_timeout = inf\nretire_harmful_margin = 1\n'
        'merge_threshold = 1\n\n[skill_trust]\n\n[skill_policy.third-party]\nhigh = "hold"\n')
    settings = load_settings(tmp_path)
    assert settings.retire_harmful_margin == 1 and settings.chroma_timeout == float("inf")


def test_a_duplicate_threshold_above_1_still_turns_folding_off(tmp_path):
    """Review: the code has always read a threshold above 1 as "never fold"; a root with it
    stopped opening once settings were range-checked."""
    (tmp_path / "skillbank.toml").write_text("duplicate_threshold = 1.01\n")
    assert load_settings(tmp_path).duplicate_threshold == 1.01


def test_an_out_of_range_environment_variable_names_the_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("SKILLBANK_MIN_SCORE", "2")
    with pytest.raises(InvalidInputError, match="SKILLBANK_MIN_SCORE"):
        load_settings(tmp_path)


def test_a_negative_margin_no_longer_retires_a_rule_on_a_helpful_vote(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "skillbank.toml").write_text("retire_harmful_margin = -1\n")
    with pytest.raises(InvalidInputError, match="retire_harmful_margin"):
        Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False)
    with pytest.raises(InvalidInputError, match="retire_harmful_margin"):
        Skillbank.open(tmp_path / "other", embedding_function=HashEmbedding(),
                       include_bundled=False, retire_harmful_margin=-1)


def test_the_cli_exits_2_naming_the_setting(cli_root):
    from test_multiprocess import cli

    cli_root.mkdir(parents=True)
    (cli_root / "skillbank.toml").write_text("merge_treshold = 0.9\n")
    done = cli(cli_root, "--json", "stats")
    assert done.returncode == 2, done.stderr
    assert "did you mean 'merge_threshold'" in done.stderr
