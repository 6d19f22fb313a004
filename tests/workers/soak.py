"""A soak participant: writes experiences to a shared root in a loop and reports each outcome.

    python soak.py ROOT NAME MODE SECONDS      MODE: agent | cli | mcp | langchain | llamaindex

Prints one line per write: `ACK <id> <task>` once the write was acknowledged, `RETRY <task>`
when the owner died mid-call and said so (the documented retry: the write is sent again under a
new task name), `KILLED <task>` when the process doing the write was the owner and was killed
(never acknowledged), `ERR <message>` for anything else. `agent` opens the bank in this process
(it may become the owner and be killed: the test restarts it); `cli` runs `skillbank` commands;
`mcp` runs its own `skillbank serve` and drives it over stdio, restarting it when it is killed.
`langchain` and `llamaindex` run real agents (create_agent with SkillbankMiddleware, FunctionAgent
with SkillbankMemoryBlock; scripted models) that record each run inline: `RUN <id> <task>` when
the run was recorded, `FAILED <task>` when the face reported that recording failed. Any call
slower than DEADLINE seconds prints `SLOW <seconds> <what>`.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workers.common import subprocess_env  # noqa: E402

LOST = "may or may not have been applied"
#: An owner that was stopped (SIGSTOP) for longer than the deadline: a reported failure.
STOPPED = "did not answer within"
#: No call may take longer than this (lock_timeout is 5 s in these workers; the rest is room
#: for a takeover on a loaded 2-core machine).
DEADLINE = float(os.environ.get("SKILLBANK_SOAK_DEADLINE", "45"))


def say(*parts: object) -> None:
    print(*parts, flush=True)


def agent(root: str, name: str, until: float) -> None:
    from workers.common import open_bank

    from skillbank.sharing.client import OwnerLostError, OwnerNotAnsweringError

    bank = open_bank(root, lock_timeout=5)
    try:
        for n in itertools.count():
            if time.monotonic() > until:
                return
            task = f"{name} task {n} {os.getpid()}"
            try:
                eid = timed_run(task, lambda: bank.experiences.record(
                    task=task, outcome="success", steps=[]))
            except OwnerLostError:
                say("RETRY", task)
                continue
            except OwnerNotAnsweringError:
                say("BUSY", task)
                continue
            except Exception as exc:  # noqa: BLE001 - reported, counted by the test
                say("ERR", f"{type(exc).__name__}: {exc}".replace("\n", " "))
                continue
            say("ACK", eid, task)
            bank.skills.search("schema migration", k=3)
    finally:
        bank.close()


def cli(root: str, name: str, until: float) -> None:
    env = subprocess_env(SKILLBANK_ROOT=root, SKILLBANK_EMBEDDING="hash")
    exe = str(Path(sys.executable).parent / "skillbank")
    for n in itertools.count():
        if time.monotonic() > until:
            return
        task = f"{name} task {n} {os.getpid()}"
        done = timed_run(task, lambda: subprocess.run(
            [exe, "--json", "--no-bundled", "experiences", "record", "--task", task,
             "--outcome", "success"], env=env, capture_output=True, text=True, timeout=120))
        if done.returncode == 0:
            say("ACK", json.loads(done.stdout)["id"], task)
        elif done.returncode == -9:
            say("KILLED", task)
        elif LOST in done.stderr:
            say("RETRY", task)
        elif STOPPED in done.stderr:
            say("BUSY", task)
        else:
            say("ERR", f"exit {done.returncode}: {done.stderr.strip()[-400:]}".replace("\n", " "))
        subprocess.run([exe, "--json", "--no-bundled", "guidelines", "list"], env=env,
                       capture_output=True, timeout=120)


def mcp(root: str, name: str, until: float) -> None:
    import anyio
    from mcp import Client, StdioServerParameters

    env = subprocess_env(SKILLBANK_ROOT=root, SKILLBANK_EMBEDDING="hash")
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "skillbank.mcp_server", "--no-bundled"], env=env)
    counter = itertools.count()

    async def session() -> None:
        async with Client(params, read_timeout_seconds=60) as client:
            while time.monotonic() < until:
                task = f"{name} task {next(counter)} {os.getpid()}"
                started = time.monotonic()
                try:
                    result = await client.call_tool("record_experience",
                                                    {"task": task, "outcome": "success"})
                except Exception:  # the server (this session's child) was killed
                    say("KILLED", task)
                    return
                if time.monotonic() - started > DEADLINE:
                    say("SLOW", f"{time.monotonic() - started:.1f}", task)
                text = result.content[0].text if result.content else ""
                if not result.is_error:
                    say("ACK", result.structured_content["id"], task)
                elif LOST in text:
                    say("RETRY", task)
                elif STOPPED in text:
                    say("BUSY", task)
                else:
                    say("ERR", text.replace("\n", " ")[:400])
                await client.call_tool("find_skills", {"task": "schema migration"})

    while time.monotonic() < until:
        try:
            anyio.run(session)
        except BaseException as exc:  # noqa: BLE001 - a killed server: start a new one
            say("RESTART", type(exc).__name__)


def timed_run(what: str, run: Any) -> Any:
    started = time.monotonic()
    try:
        return run()
    finally:
        took = time.monotonic() - started
        if took > DEADLINE:
            say("SLOW", f"{took:.1f}", what)


def langchain_agent(root: str, name: str, until: float) -> None:
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from workers.common import open_bank

    from skillbank.adapters.langchain import SkillbankMiddleware

    class Scripted(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> "Scripted":
            return self

    bank = open_bank(root, lock_timeout=5)
    try:
        for n in itertools.count():
            if time.monotonic() > until:
                return
            task = f"{name} run {n} {os.getpid()}"
            middleware = SkillbankMiddleware(bank, background=False)
            agent = create_agent(Scripted(messages=iter([AIMessage(content=f"done: {task}")])),
                                 [], middleware=[middleware])
            try:
                state = timed_run(task, lambda: agent.invoke(
                    {"messages": [{"role": "user", "content": task}]}))
            except Exception as exc:  # noqa: BLE001 - the agent itself failed: reported
                say("FAILED", task, f"{type(exc).__name__}: {exc}"[:200].replace("\n", " "))
                continue
            eid = state.get("skillbank_experience_id")
            if eid:
                say("RUN", eid, task)
            else:
                say("FAILED", task, repr(middleware.last_error)[:200].replace("\n", " "))
    finally:
        bank.close()


def llamaindex_agent(root: str, name: str, until: float) -> None:
    import asyncio

    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.base.llms.types import ChatMessage
    from llama_index.core.llms.mock import MockFunctionCallingLLM
    from llama_index.core.memory import Memory
    from workers.common import open_bank

    from skillbank.adapters.llamaindex import SkillbankMemoryBlock

    bank = open_bank(root, lock_timeout=5)

    async def one(task: str) -> tuple[str | None, Any]:
        llm = MockFunctionCallingLLM(response_generator=lambda messages, **kw: ChatMessage(
            role="assistant", content=f"done: {task}"))
        block = SkillbankMemoryBlock(bank, background=False)
        memory = Memory.from_defaults(session_id=task, memory_blocks=[block])
        agent = FunctionAgent(tools=[], llm=llm, system_prompt="You are a DBA.")
        await agent.run(user_msg=task, memory=memory)
        return await block.arecord_run(memory, outcome="success"), block.last_error

    try:
        for n in itertools.count():
            if time.monotonic() > until:
                return
            task = f"{name} run {n} {os.getpid()}"
            try:
                eid, error = timed_run(task, lambda: asyncio.run(one(task)))
            except Exception as exc:  # noqa: BLE001
                say("FAILED", task, f"{type(exc).__name__}: {exc}"[:200].replace("\n", " "))
                continue
            if eid:
                say("RUN", eid, task)
            else:
                say("FAILED", task, repr(error)[:200].replace("\n", " "))
    finally:
        bank.close()


if __name__ == "__main__":
    root, name, mode, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    {"agent": agent, "cli": cli, "mcp": mcp, "langchain": langchain_agent,
     "llamaindex": llamaindex_agent}[mode](root, name, time.monotonic() + seconds)
    say("DONE")
