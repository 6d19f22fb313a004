"""`LLMDrafter.from_llamaindex(llm)` labels a draft "model" only when the model wrote its
description, and a fallback says why (hunt-llama #5, session 35).

Before, any JSON object in the reply (`{}`, `{"rules": [{"text": 42}]}`) made the draft
`drafted_by="model"` and its SKILL.md "Drafted by skillbank (model)", though its description,
steps and pitfalls were all the rule drafter's; and a model that raised gave a rules draft
with nothing saying why (only `drafter.last_error`, which the next draft overwrites). Now such
a reply is no model draft: the rules' whole, `drafted_by="rules"`, its `reason` saying why, and
a warning once per kind of failure, as the LLM distiller says it. In process only: a client of
an owner process cannot send its drafter (the owner drafts with its own, and warns).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata  # noqa: E402

from skillbank import Skillbank  # noqa: E402
from skillbank.embeddings import HashEmbedding  # noqa: E402
from skillbank.memories.skills import drafting  # noqa: E402
from skillbank.memories.skills.drafting import LLMDrafter  # noqa: E402


class ReplyLLM(CustomLLM):
    reply: str = "{}"

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata()

    def complete(self, prompt: str, formatted: bool = False, **kw) -> CompletionResponse:
        if self.reply == "raise":
            raise RuntimeError("model offline")
        return CompletionResponse(text=self.reply)

    def stream_complete(self, prompt: str, formatted: bool = False, **kw):
        raise NotImplementedError


def propose(tmp_path, reply):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        for i in range(3):
            bank.experiences.record(task=f"Migrate the orders table {i}", outcome="failure",
                                    feedback="Forgot to lock the table; writes were lost.")
        drafter = LLMDrafter.from_llamaindex(ReplyLLM(reply=reply))
        drafts = bank.skills.propose(drafter=drafter, min_support=2)
    assert len(drafts) == 1
    return drafts[0], Path(drafts[0].path).read_text(), drafter


@pytest.mark.parametrize("reply, why", [
    ("{}", "no usable description in the reply"),
    (json.dumps({"rules": [{"text": 42}]}), "no usable description in the reply"),
    (json.dumps({"description": "", "steps": ["Lock the table first."]}),
     "no usable description in the reply"),
    ("not JSON", "unparseable reply"),
    ("raise", "RuntimeError: model offline"),
], ids=["empty-object", "other-json", "empty-description", "unparseable", "raises"])
def test_a_reply_without_a_description_is_a_rules_draft_that_says_why(tmp_path, reply, why,
                                                                     monkeypatch, caplog):
    monkeypatch.setattr(drafting, "_warned", set(), raising=False)  # once per process and kind
    with caplog.at_level(logging.WARNING, logger="skillbank"):
        draft, text, drafter = propose(tmp_path, reply)
    assert draft.drafted_by == "rules" and "Drafted by skillbank (rules)" in text
    assert "(model)" not in text and "Lock the table first." not in text
    assert draft.reason.endswith(f"; drafted by the rules, not the model ({why})"), draft.reason
    assert drafter.last_error == why
    warned = [r.getMessage() for r in caplog.records if "model drafter failed" in
              r.getMessage()]
    assert len(warned) == 1 and why in warned[0], warned


def test_a_reply_with_its_description_is_the_model_s_draft(tmp_path):
    """The model wrote the description; lists it left out are the rules' (docs/api.md)."""
    draft, text, drafter = propose(
        tmp_path, json.dumps({"description": "Migrate a table with the table locked. Use when "
                                             "changing a live table."}))
    assert draft.drafted_by == "model" and "Drafted by skillbank (model)" in text
    assert draft.description.startswith("Migrate a table with the table locked")
    assert "not the model" not in draft.reason and drafter.last_error is None
