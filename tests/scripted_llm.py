"""Scripted `prompt -> text` models for the LLM distiller's parsing tests (hunt-llm, session 32),
importable both by a test and by an owner process (`owner_client.owner_process(preamble=...)`),
so a memory operation runs with the same model in process and in the process that owns a root.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any, Iterator

OLD_RULE = "Use British spelling in the release notes."
#: New rules and what the model says of each against the old one: never a contradiction.
NOT_CONFLICTING = {
    "Use short sentences in the release notes.": "These rules don't contradict each other; they are distinct.",
    "Use plain words in the release notes.": "The new rule doesn't conflict with the old one: distinct.",
    "Use bullet lists in the release notes.": "It never contradicts the old rule; distinct.",
    "Use past tense in the release notes.": "These rules don't contradict each other.",
}
#: The model calls this one a contradiction of the old rule (the model-free relation does not).
CONFLICTING = "Use numbered lists in the release notes."


def relate_model(prompt: str) -> str:
    """Rules: the critique as one rule. Relations: "contradiction" for `CONFLICTING` against
    `OLD_RULE`, else the new rule's reply in `NOT_CONFLICTING` (or "distinct")."""
    if prompt.startswith("Two rules for an AI agent"):
        old = prompt.split("OLD: ", 1)[1].split("\n", 1)[0]
        new = prompt.split("NEW: ", 1)[1].split("\n", 1)[0]
        if new == CONFLICTING and old == OLD_RULE:
            return "contradiction"
        return NOT_CONFLICTING.get(new, "distinct")
    if "critique of an AI agent" in prompt:
        critique = prompt.split("Critique:\n", 1)[1].split("\n\nInstructions:", 1)[0]
        return json.dumps([{"text": critique, "topic": "writing"}])
    return "[]"


def echo_model(prompt: str) -> str:
    """LlamaIndex's `MockLLM`: the prompt back, its JSON template included."""
    return prompt


MODELS = {"relate": relate_model, "echo": echo_model}


def opening_with(skillbank_cls: Any, model: str) -> Any:
    """A stand-in for `Skillbank` whose `open` gives the bank an `LLMDistiller` over `model`
    (the owner script rebinds its `Skillbank` to it in its preamble)."""
    from skillbank.distill import LLMDistiller

    class Opening:
        @staticmethod
        def open(root: Any, **kw: Any) -> Any:
            return skillbank_cls.open(root, distiller=LLMDistiller(MODELS[model]), **kw)

    return Opening


def preamble(model: str) -> str:
    return f"from scripted_llm import opening_with\nSkillbank = opening_with(Skillbank, {model!r})\n"


@contextlib.contextmanager
def bank_with_model(tmp_path: Path, remote: bool, model: str) -> Iterator[Any]:
    """A bank whose distiller is an `LLMDistiller` over `model` (a name in `MODELS`): opened in
    this process, or (`remote`) a client of an owner process that distils with it."""
    from owner_client import client_bank, owner_process
    from skillbank import Skillbank
    from skillbank.distill import LLMDistiller
    from skillbank.embeddings import HashEmbedding

    root = tmp_path / "root"
    if remote:
        root.mkdir()
        with owner_process(root, preamble=preamble(model)), client_bank(root) as bank:
            yield bank
        return
    with Skillbank.open(root, distiller=LLMDistiller(MODELS[model]), include_bundled=False,
                        embedding_function=HashEmbedding()) as bank:
        yield bank
