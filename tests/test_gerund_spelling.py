"""Lessons written without a model spell their verbs right (hunt-expscale #2, session 37).

The gerund helper doubled a final consonant only for one-syllable verbs, so a lesson of
"Debug the OOM kills in the gateway pods" read "When debuging the OOM kills…", and commit,
submit, refer, omit, control, format… came out "commiting", "submiting", "refering". Verbs
stressed before their last syllable (visit, open, target, edit) keep a single consonant.
"""

from __future__ import annotations

import pytest

from skillbank import Skillbank
from skillbank.distill.morphology import _gerund
from skillbank.embeddings import HashEmbedding


@pytest.mark.parametrize("verb, gerund", [
    ("debug", "debugging"), ("commit", "committing"), ("submit", "submitting"),
    ("refer", "referring"), ("omit", "omitting"), ("control", "controlling"),
    ("permit", "permitting"), ("admit", "admitting"), ("unzip", "unzipping"),
    ("format", "formatting"), ("begin", "beginning"), ("embed", "embedding"),
    ("rerun", "rerunning"), ("unwrap", "unwrapping"), ("re-run", "re-running"),
    # unchanged: stress before the last syllable, or the usual rules
    ("visit", "visiting"), ("open", "opening"), ("target", "targeting"), ("edit", "editing"),
    ("render", "rendering"), ("limit", "limiting"), ("answer", "answering"),
    ("run", "running"), ("fix", "fixing"), ("write", "writing"), ("tie", "tying"),
    ("cherry-pick", "cherry-picking"),
])
def test_gerunds(verb, gerund):
    assert _gerund(verb) == gerund


def test_a_model_free_lesson_reads_debugging(tmp_path):
    with Skillbank.open(tmp_path, embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        eid = bank.experiences.record(
            task="Debug the OOM kills in the gateway pods", outcome="failure",
            feedback="It failed because the memory limit was too low; raise the limit first.")
        lessons = [bank.experiences.get(i) for i in bank.experiences.distill(eid)]
        assert lessons
        text = " ".join([l.task + " " + l.when_to_use + " " + " ".join(map(str, l.lessons))
                         for l in lessons])
        assert "debugging" in text.lower() and "debuging" not in text.lower()
