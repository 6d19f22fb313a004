"""A thread id reused for a new conversation later is a new goal (review 1 #2, session 32).

fix-threads (hunt-threads #1) made a face with no state of a thread (a checkpointer that died
with its process, another worker) take its goal from the thread's open episode in the bank,
however old. Most episodes are never closed (a run given no outcome records ``unknown``), and
every LangGraph example uses ``thread_id "1"``: a new conversation on it days later, in a new
process, was recorded as a follow-up step of the finished "Rotate the API keys ..." task, which
got the new run's outcome, and the new task ("Write a haiku ...") was never recorded. Now the
open episode is picked up only while its last turn is at most `thread_pickup_seconds` old
(`ExperienceMemory.open_thread`, for both faces through `adapters._runs.open_goal`).

The episode is aged without sleeping: the bank's clock for thread turns
(`threads.clock` and the time a later turn stamps, `threads.utcnow`) is moved on, in this
process and in the owner process (its preamble reads the same offset file).
"""

from __future__ import annotations

import contextlib
import time
from datetime import timedelta
from pathlib import Path

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

from owner_client import client_bank, owner_process  # noqa: E402
from scripted import script  # noqa: E402
from skillbank import Skillbank  # noqa: E402
from skillbank.adapters.langchain import SkillbankMiddleware  # noqa: E402
from skillbank.embeddings import HashEmbedding  # noqa: E402
from skillbank.memories.experiences import threads  # noqa: E402
from skillbank.records import utcnow  # noqa: E402

REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
CONFIG = {"configurable": {"thread_id": "1"}}  # the id of every LangGraph example
OLD = "Rotate the API keys of the billing service"
NEW = "Write a haiku about autumn leaves"
DAY = 86400.0

# The owner's thread clock: real time plus the seconds in <root>/../clock-offset.
PREAMBLE = """
import pathlib
import skillbank.memories.experiences.threads as _threads
from datetime import timedelta as _td
from skillbank.records import utcnow as _utcnow
_offset_file = pathlib.Path(os.environ['SKILLBANK_ROOT']).parent / 'clock-offset'
def _offset():
    return float(_offset_file.read_text()) if _offset_file.exists() else 0.0
_threads.clock = lambda: time.time() + _offset()
_threads.utcnow = lambda: _utcnow() + _td(seconds=_offset())
"""


def move_clock(tmp_path: Path, seconds: float) -> None:
    """The thread clock, here and in an owner process, `seconds` ahead of real time."""
    (tmp_path / "clock-offset").write_text(str(seconds))


@pytest.fixture
def clock(tmp_path, monkeypatch):
    offset_file = tmp_path / "clock-offset"

    def offset() -> float:
        return float(offset_file.read_text()) if offset_file.exists() else 0.0

    monkeypatch.setattr(threads, "clock", lambda: time.time() + offset())
    monkeypatch.setattr(threads, "utcnow", lambda: utcnow() + timedelta(seconds=offset()))
    return lambda seconds: move_clock(tmp_path, seconds)


@contextlib.contextmanager
def opened(tmp_path: Path, remote: bool):
    """The bank (opened again: a new process's), in process or as a client of an owner whose
    thread clock follows the offset file."""
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    if remote:
        with owner_process(root, preamble=PREAMBLE), client_bank(root) as bank:
            yield bank
        return
    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False) as bank:
        yield bank


def agent_for(bank):
    """A new agent with a checkpointer of its own (a new process: no state of the thread)."""
    model = script(*[AIMessage(content=f"ok {i}") for i in range(4)])
    return create_agent(model, tools=[], checkpointer=InMemorySaver(),
                        middleware=[SkillbankMiddleware(bank, background=False)])


def ask(agent, text, **extra):
    agent.invoke({"messages": [{"role": "user", "content": text}], **extra}, CONFIG)


@REMOTE
def test_a_thread_id_reused_days_later_starts_a_new_goal(tmp_path, remote, clock):
    """The reviewer's thread_reused.py. Before: one record, the old task with the new run as
    its last step and outcome success; the haiku task was never recorded."""
    with opened(tmp_path, remote) as bank:
        ask(agent_for(bank), OLD)  # conversation A, no outcome given: open for good
    clock(2 * DAY)  # days later, a new process
    with opened(tmp_path, remote) as bank:
        ask(agent_for(bank), NEW, outcome="success")  # conversation B
        records = {r.task: r for r in bank.experiences.list()}
        assert set(records) == {OLD, NEW}, "the new conversation was filed under the old task"
        assert records[OLD].outcome == "unknown", "the old task got the new run's outcome"
        assert records[NEW].outcome == "success" and records[NEW].thread == "1"
        assert NEW not in " ".join(str(s.model_dump()) for s in records[OLD].steps)


@REMOTE
def test_a_thread_whose_last_turn_is_recent_is_still_picked_up(tmp_path, remote, clock):
    """The age is the last turn's, not the first's: a conversation begun two days ago whose
    latest turn was ten minutes ago goes on with its goal (hunt-threads #1 still holds)."""
    with opened(tmp_path, remote) as bank:
        agent = agent_for(bank)
        ask(agent, OLD)
        clock(2 * DAY)
        ask(agent, "also rotate key k1")  # the same process, two days on
    clock(2 * DAY + 600)
    with opened(tmp_path, remote) as bank:  # a restart ten minutes after that turn
        ask(agent_for(bank), "also rotate key k5", outcome="success")
        (record,) = bank.experiences.list()
        assert record.task == OLD and record.outcome == "success"
        texts = " ".join(str(s.model_dump()) for s in record.steps)
        assert "also rotate key k1" in texts and "also rotate key k5" in texts


@REMOTE
def test_open_thread_names_the_age_it_picks_up(tmp_path, remote, clock):
    """`open_thread` itself: the episode within the window, None past it."""
    with opened(tmp_path, remote) as bank:
        bank.experiences.record_messages([{"role": "user", "content": OLD}], thread="t")
        assert bank.experiences.open_thread("t").task == OLD
        clock(3000)
        assert bank.experiences.open_thread("t").task == OLD
        clock(3700)
        assert bank.experiences.open_thread("t") is None
