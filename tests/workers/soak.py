"""A soak participant: writes experiences to a shared root in a loop and reports each outcome.

    python soak.py ROOT NAME MODE SECONDS      MODE: agent | cli | mcp

Prints one line per write: `ACK <id> <task>` once the write was acknowledged, `RETRY <task>`
when the owner died mid-call and said so (the documented retry: the write is sent again under a
new task name), `KILLED <task>` when the process doing the write was the owner and was killed
(never acknowledged), `ERR <message>` for anything else. `agent` opens the bank in this process
(it may become the owner and be killed: the test restarts it); `cli` runs `skillbank` commands;
`mcp` runs its own `skillbank serve` and drives it over stdio, restarting it when it is killed.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workers.common import subprocess_env  # noqa: E402

LOST = "may or may not have been applied"


def say(*parts: object) -> None:
    print(*parts, flush=True)


def agent(root: str, name: str, until: float) -> None:
    from workers.common import open_bank

    from skillbank.sharing.client import OwnerLostError

    bank = open_bank(root)
    try:
        for n in itertools.count():
            if time.monotonic() > until:
                return
            task = f"{name} task {n} {os.getpid()}"
            try:
                eid = bank.experiences.record(task=task, outcome="success", steps=[])
            except OwnerLostError:
                say("RETRY", task)
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
        done = subprocess.run([exe, "--json", "--no-bundled", "experiences", "record", "--task",
                               task, "--outcome", "success"], env=env, capture_output=True,
                              text=True, timeout=120)
        if done.returncode == 0:
            say("ACK", json.loads(done.stdout)["id"], task)
        elif done.returncode == -9:
            say("KILLED", task)
        elif LOST in done.stderr:
            say("RETRY", task)
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
                try:
                    result = await client.call_tool("record_experience",
                                                    {"task": task, "outcome": "success"})
                except Exception:  # the server (this session's child) was killed
                    say("KILLED", task)
                    return
                text = result.content[0].text if result.content else ""
                if not result.is_error:
                    say("ACK", result.structured_content["id"], task)
                elif LOST in text:
                    say("RETRY", task)
                else:
                    say("ERR", text.replace("\n", " ")[:400])
                await client.call_tool("find_skills", {"task": "schema migration"})

    while time.monotonic() < until:
        try:
            anyio.run(session)
        except BaseException as exc:  # noqa: BLE001 - a killed server: start a new one
            say("RESTART", type(exc).__name__)


if __name__ == "__main__":
    root, name, mode, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    {"agent": agent, "cli": cli, "mcp": mcp}[mode](root, name, time.monotonic() + seconds)
    say("DONE")
