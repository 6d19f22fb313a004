"""`propose` asks its drafter with no lock held (hunt-sampling #1, session 36).

A model drafter (MCP sampling: up to 120 s a group; any LLM) was asked while `propose` held the
memory's write lock: every other session's `record_experience` waited and failed after 60 s
saying "another process" held it. Now the drafts are asked outside the locks and written under
them after deciding again what is still due. Real banks, real files; the drafter blocks on an
event, so nothing here depends on timing: a write that waited on the lock fails with BusyError
after the bank's (short) lock timeout, or the bounded wait on its event runs out.
"""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path
from typing import Any

import pytest

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.memories.skills.drafting import DraftMaterial, DraftText, RuleDrafter
from test_skill_drafts import record_groups, scripted_reply

BOUND = 60  # seconds: generous bounds on events, never a timing assertion


def open_bank(root: Path) -> Skillbank:
    return Skillbank.open(root, skill_roots=[], embedding_function=HashEmbedding(),
                          include_bundled=False, sync=False, write_lock_timeout=5)


@pytest.fixture
def bank(tmp_path):
    bank = open_bank(tmp_path / "root")
    yield bank
    bank.close()


class BlockedDrafter:
    """A model drafter that waits for `go` before answering the first group."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.go = threading.Event()
        self.calls = 0

    def write(self, material: DraftMaterial) -> DraftText:
        self.calls += 1
        self.asked.set()
        assert self.go.wait(BOUND), "the test never let the drafter answer"
        return dataclasses.replace(RuleDrafter().write(material), drafted_by="model")


class Proposing(threading.Thread):
    """`bank.skills.propose(drafter=...)` on its own thread; its drafts or its error."""

    def __init__(self, bank: Skillbank, drafter: Any) -> None:
        super().__init__(daemon=True)
        self.bank, self.drafter = bank, drafter
        self.drafts: list[Any] | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.drafts = self.bank.skills.propose(drafter=self.drafter)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc

    def finish(self) -> list[Any]:
        self.drafter.go.set()
        self.join(BOUND)
        assert not self.is_alive() and self.error is None, self.error
        assert self.drafts is not None
        return self.drafts


def proposing_blocked(bank: Skillbank) -> tuple[BlockedDrafter, Proposing]:
    """A propose on its own thread whose drafter was asked and waits for `go`."""
    drafter = BlockedDrafter()
    proposing = Proposing(bank, drafter)
    proposing.start()
    if not drafter.asked.wait(BOUND):
        proposing.finish()
        raise AssertionError("the drafter was never asked")
    return drafter, proposing


def test_writes_complete_while_the_drafter_is_waiting(bank):
    record_groups(bank)
    drafter, proposing = proposing_blocked(bank)
    try:
        # Another session's writes, while the model is still drafting: they did wait on the
        # lock and failed with "another process is writing" (BusyError) before.
        recorded = bank.experiences.record(task="Rotate the TLS certificate on the gateway",
                                           outcome="success")
        saved = bank.skills.save("rotate-certs", "Rotate TLS certificates. Use when one expires.",
                                 "# Rotate\n\n1. Renew.\n")
        assert not drafter.go.is_set()  # all of it happened while the drafter waited
    finally:
        drafts = proposing.finish()
    assert str(recorded).startswith("exp-") and saved.name == "rotate-certs"
    assert sorted(d.drafted_by for d in drafts) == ["model", "model"]
    assert sorted(d.name for d in bank.skills.drafts()) == sorted(d.name for d in drafts)


def test_a_draft_another_proposer_wrote_meanwhile_is_not_written_twice(bank):
    record_groups(bank)
    _, proposing = proposing_blocked(bank)
    try:
        theirs = bank.skills.propose(drafter=RuleDrafter())  # another session, meanwhile
        assert len(theirs) == 2
    finally:
        ours = proposing.finish()
    assert ours == []  # the same groups: drafted already, not again under another name
    pending = bank.skills.drafts()
    assert sorted(d.name for d in pending) == sorted(d.name for d in theirs)
    assert {d.drafted_by for d in pending} == {"rules"}
    proposed = [e for e in bank.skills._ledger() if e["op"] == "proposed"]
    assert sorted(e["name"] for e in proposed) == sorted(d.name for d in theirs)


def test_a_persons_edit_made_while_the_model_drafts_is_kept(bank):
    record_groups(bank)
    first = {d.name: d for d in bank.skills.propose(drafter=RuleDrafter())}
    csv = next(d for d in first.values() if "csv" in d.name)
    bank.experiences.record(task="Import the vendors CSV file into the suppliers database table",
                            outcome="success", when_to_use="When loading CSV exports into a SQL database",
                            steps=[{"action": "detect_encoding"}, {"action": "copy_into_table"}])
    _, proposing = proposing_blocked(bank)  # the CSV draft is due again (a new run of its kind)
    try:
        text = Path(csv.path).read_text(encoding="utf-8").replace("## Checks", "## Checks\n\n- A person's check.")
        bank.skills.edit_draft(csv.name, text)  # a person, meanwhile
    finally:
        ours = proposing.finish()
    assert ours == []
    assert "A person's check." in Path(bank.skills.draft(csv.name).path).read_text(encoding="utf-8")


async def test_other_sessions_write_while_propose_skills_samples_the_clients_model(bank):
    anyio = pytest.importorskip("anyio")
    import mcp_types as types
    from mcp import Client

    from skillbank.mcp_server import build_server

    record_groups(bank)
    asked, go = anyio.Event(), anyio.Event()

    async def sample(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        asked.set()
        await go.wait()
        return types.CreateMessageResult(role="assistant", model="fake-llm",
                                         content=types.TextContent(type="text", text=scripted_reply()))

    results: dict[str, Any] = {}
    with anyio.fail_after(BOUND * 2):
        async with Client(build_server(bank, trusted=True), mode="legacy",
                          sampling_callback=sample) as proposer, \
                Client(build_server(bank, trusted=True)) as other:

            async def propose() -> None:
                results["propose"] = await proposer.call_tool("propose_skills", {"min_support": 3})

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(propose)
                with anyio.fail_after(BOUND):
                    await asked.wait()
                try:
                    results["record"] = await other.call_tool("record_experience", {
                        "task": "Rotate the TLS certificate on the gateway", "outcome": "success"})
                    results["save"] = await other.call_tool("save_skill", {
                        "name": "rotate-certs", "description": "Rotate TLS certificates. Use when one expires.",
                        "body": "# Rotate\n\n1. Renew.\n"})
                    results["waiting"] = not go.is_set()
                finally:
                    go.set()
    assert results["waiting"]
    for name in ("record", "save", "propose"):
        assert not results[name].is_error, (name, results[name].content[0].text)
    drafts = results["propose"].structured_content["drafts"]
    assert [d["drafted_by"] for d in drafts] == ["model", "model"]
    assert all(d["reason"] for d in drafts)
