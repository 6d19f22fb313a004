"""A memory block's lines in scripts without spaces (hunt-i18n, session 22).

Lines were cut back to their last space: a Chinese lesson "教训: …300 characters…" has its only
space after the label, so the block showed "Feedback: 教训:…" and the lesson was gone. And lines
were cut by characters, not tokens: 400 Chinese characters cost 400–500 tokens where 400 English
ones cost ~100, so a 250-token budget gave an empty block (a line now costs at most half its
character limit in tokens: a 219-character Greek rule, ~200 tokens, stays whole). In process and through a client of
another process that owns the root.
"""

from __future__ import annotations

import pytest

from owner_client import bank_for
from skillbank.text_cut import cut_at_word, within_tokens
from skillbank.tokens import count_tokens

SENTENCE = "在迁移数据库之前必须先备份所有的表，并且确认备份可以恢复，否则一旦出错数据将无法找回。"


def test_a_cut_ends_at_a_near_space_and_never_throws_most_of_the_line_away():
    english = "Always run the whole migration inside one transaction and compare the row counts"
    assert cut_at_word(english, 40) == "Always run the whole migration inside…"
    assert cut_at_word("教训: " + SENTENCE * 3, 60) == ("教训: " + SENTENCE * 3)[:59] + "…"
    assert cut_at_word("short", 40) == "short"


def test_a_dense_line_is_cut_to_its_token_allowance():
    line = within_tokens(SENTENCE * 10, 100)
    assert count_tokens(line) <= 100 and line.startswith(SENTENCE) and line.endswith("…")
    english = "Keep every public function documented with a one-line summary of why it exists."
    assert within_tokens(english, 100) == english


def _check(bank) -> None:
    lesson = "教训: " + SENTENCE * 6
    bank.experiences.record(task="迁移 订单数据库到新的集群", outcome="failure", feedback=lesson)
    shown = bank.context_for("迁移 订单数据库", budget_tokens=3000).text
    line = next(line for line in shown.splitlines() if "Feedback:" in line)
    assert SENTENCE in line.split("Feedback:", 1)[1]  # the lesson, not just its label

    bank.guidelines.learn("review", rules=[{"text": "迁移数据库之前必须备份。" + SENTENCE * 8}])
    block = bank.context_for("迁移数据库之前必须备份", budget_tokens=400)
    assert block.guidelines and block.tokens <= 400


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_dense_script_lines_in_the_block(tmp_path, minilm, remote):
    with bank_for(tmp_path, remote, minilm) as bank:
        _check(bank)
