"""benchmarks/learning_loop.py's chat-model arm: it runs with a configured chat model (here a
scripted one: no network) and is reported as skipped without one."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("langchain_core")
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import learning_loop  # noqa: E402

if not learning_loop.DEFAULT_SET.is_dir():
    pytest.skip("the critique stream (../shared) is not here", allow_module_level=True)


class Reader(GenericFakeChatModel):
    """Answers the distiller's prompts: a critique's last sentence as its rule, "distinct"
    when asked how two rules relate. Counts the prompts it saw."""

    prompts: int = 0

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.prompts += 1
        prompt = str(messages[-1].content)
        if "Critique:" in prompt:
            critique = prompt.split("Critique:", 1)[1].split("Instructions:", 1)[0].strip()
            sentence = [s for s in critique.replace("!", ".").split(".") if s.strip()][-1]
            reply = json.dumps([{"text": sentence.strip() + ".", "topic": "general",
                                 "when_to_use": "When doing this kind of task",
                                 "actionable": True, "source_sentence": sentence.strip()}])
        else:
            reply = "distinct"
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=reply))])


def test_the_chat_arm_learns_through_the_configured_chat_model(minilm):
    rules, crits = learning_loop.load_stream(learning_loop.DEFAULT_SET, "dev")
    model = Reader(messages=iter([]))
    arms = learning_loop.make_arms(["none", "chat"], minilm, rules, chat_model=model)
    assert list(arms) == ["none", "chat"]
    arm = arms["chat"]()
    try:
        result = learning_loop.walk(arm, rules, crits[:12], (800,))
        assert model.prompts >= 12  # every critique went through the model
        assert arm.model_fallbacks == 0
        assert len(arm.bank.guidelines.list(status="active")) >= 5
        assert set(result[800]) >= {"prevented_rate", "off_domain_share", "stale_blocks"}
    finally:
        arm.close()


def test_without_a_chat_model_the_chat_arm_is_reported_as_skipped(monkeypatch, capsys,
                                                                  model_dir):
    monkeypatch.delenv(learning_loop.CHAT_MODEL_ENV, raising=False)
    assert learning_loop.make_arms(["none", "chat"], None, {}) .keys() == {"none"}
    code = learning_loop.main(["--limit", "3", "--arms", "none", "chat", "--budgets", "400",
                               "--model-dir", str(model_dir)])
    out = capsys.readouterr().out
    assert code == 0
    assert "| none | 400 |" in out
    assert "held out: the 26 future tasks after the stream" in out  # the set's tasks.jsonl
    assert "| none | 400 | 0.000 | 0.000 | 0.0 |" in out
    assert f"chat: skipped: no chat model configured (set {learning_loop.CHAT_MODEL_ENV}" in out
    model, why = learning_loop.chat_model_from("no-such-provider:some-model")
    assert model is None and why.startswith("skipped: chat model 'no-such-provider:some-model'")


def test_the_agent_topic_arm_names_each_rule_and_task_topic():
    """The agent-topic arm: the agent files each rule it writes under the critique's domain
    and states the task's domain when it asks for the block, so a block shows one domain."""
    from skillbank.embeddings import HashEmbedding

    rules, crits = learning_loop.load_stream(learning_loop.DEFAULT_SET, "dev")
    arms = learning_loop.make_arms(["agent", "agent-topic"], HashEmbedding(), rules)
    assert list(arms) == ["agent", "agent-topic"]
    arm = arms["agent-topic"]()
    try:
        learning_loop.walk(arm, rules, crits[:30], (1600,))
        topics = {g.topic for g in arm.bank.guidelines.list(status="active")}
        assert topics and topics <= {r["domain"].replace("_", "-") for r in rules.values()}
        for crit in crits[30:40]:
            arm.block(crit, 1600)
            block = arm.bank.context_for(crit["task"], budget_tokens=1600,
                                         topic=crit["domain"])
            assert {h.record.topic for h in block.guidelines} <= {
                crit["domain"].replace("_", "-")}
    finally:
        arm.close()
