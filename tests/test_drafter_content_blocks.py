"""hunt-llm #5, session 32: `LLMDrafter.from_chat_model` over a chat model answering in content
blocks. In process only: a client of an owner process cannot send an `LLMDrafter` (the owner
drafts with its own, `BankClient._owner_distils`), so the model is read only here."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("langchain_core")

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402

from skillbank import Skillbank  # noqa: E402
from skillbank.embeddings import HashEmbedding  # noqa: E402
from skillbank.memories.skills.drafting import LLMDrafter  # noqa: E402

REPLY = json.dumps({"description": "Rotate API keys safely across services without downtime.",
                    "steps": ["Issue new keys", "Reload every service", "Revoke the old keys"],
                    "pitfalls": ["Revoking before reload breaks services"],
                    "checks": ["Every service answers"]})


def propose(tmp_path, drafter):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        for i in range(3):
            bank.experiences.record(task=f"Rotate the API keys of service {i}", outcome="success",
                                    steps=[{"action": "issue new keys"}, {"action": "reload services"},
                                           {"action": "revoke old keys"}], feedback="Worked.")
        return bank.skills.propose(drafter=drafter)


@pytest.mark.parametrize("content", [[{"type": "text", "text": REPLY}], REPLY],
                         ids=["content-blocks", "string"])
def test_a_chat_model_answering_in_content_blocks_drafts(tmp_path, content):
    """Before: `AIMessage.content` as `[{"type": "text", "text": ...}]` was read as no reply:
    `drafted_by: rules`, `last_error: unparseable reply`. Now the blocks' text is read (the
    adapters' `text_of`, as `ChatModelDistiller` reads it) and the model drafts."""
    model = GenericFakeChatModel(messages=iter([AIMessage(content=content)] * 20))
    drafter = LLMDrafter.from_chat_model(model)
    drafts = propose(tmp_path, drafter)
    assert drafts and all(d.drafted_by == "model" for d in drafts), drafter.last_error
    assert drafter.last_error is None


def test_a_llamaindex_llm_drafts(tmp_path):
    """LlamaIndex's path (`.from_llamaindex`) reads `CompletionResponse.text`, a string."""
    pytest.importorskip("llama_index.core")
    from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata

    class JsonLLM(CustomLLM):
        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata()

        def complete(self, prompt: str, formatted: bool = False, **kw) -> CompletionResponse:
            return CompletionResponse(text=REPLY)

        def stream_complete(self, prompt: str, formatted: bool = False, **kw):
            yield self.complete(prompt)

    drafter = LLMDrafter.from_llamaindex(JsonLLM())
    drafts = propose(tmp_path, drafter)
    assert drafts and all(d.drafted_by == "model" for d in drafts), drafter.last_error
