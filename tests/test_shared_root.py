"""A shared root that never drops a run, never hangs and never crosses roots (issue 23).

Real processes: the root's owner is another Python process (hash embedding), and this process is
its client; agents are real LangChain `create_agent` and LlamaIndex `FunctionAgent` runs driven
by scripted models.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO
from owner_client import owner_process
from test_multiprocess import env_for, soak_worker
from workers.common import open_bank


# 1. Agents beside an owner record their runs ----------------------------------------------------

def test_a_langchain_agent_beside_an_owner_process_records_its_run(tmp_path):
    pytest.importorskip("langchain.agents")
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool

    from skillbank.adapters.langchain import SkillbankMiddleware

    class Scripted(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> "Scripted":
            return self

    @tool
    def migrate(table: str) -> str:
        """Run the schema migration of a table."""
        return f"{table} migrated"

    root = tmp_path / "root"
    with owner_process(root) as owner:
        bank = open_bank(root)
        try:
            assert bank.is_remote and bank.owner_pid == owner.pid
            model = Scripted(messages=iter([
                AIMessage(content="", tool_calls=[{"name": "migrate", "args": {"table": "orders"},
                                                   "id": "c1"}]),
                AIMessage(content="The orders table is migrated.")]))
            agent = create_agent(model, [migrate], middleware=[SkillbankMiddleware(bank)])
            agent.invoke({"messages": [{"role": "user", "content": "Migrate the orders table"}]})
            assert bank.flush(timeout=60)
            [experience] = bank.experiences.list(kind="experience")
            assert experience.task == "Migrate the orders table"
            assert [(s.action, s.observation) for s in experience.steps][0] == \
                ("migrate", "orders migrated")
            assert bank.stats()["recording_failures"] == 0
        finally:
            bank.close()


async def test_a_llamaindex_agent_beside_an_owner_process_records_its_run(tmp_path):
    pytest.importorskip("llama_index.core")
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.base.llms.types import ChatMessage, ToolCallBlock
    from llama_index.core.llms.mock import MockFunctionCallingLLM
    from llama_index.core.memory import Memory
    from llama_index.core.tools import FunctionTool

    from skillbank.adapters.llamaindex import SkillbankMemoryBlock

    def migrate(table: str) -> str:
        """Run the schema migration of a table."""
        return f"{table} migrated"

    replies = iter([
        ChatMessage(role="assistant", blocks=[ToolCallBlock(tool_call_id="t1", tool_name="migrate",
                                                            tool_kwargs={"table": "users"})]),
        ChatMessage(role="assistant", content="Migrated.")])
    llm = MockFunctionCallingLLM(response_generator=lambda messages, **kw: next(replies))
    root = tmp_path / "root"
    with owner_process(root):
        bank = open_bank(root)
        try:
            assert bank.is_remote
            block = SkillbankMemoryBlock(bank)
            memory = Memory.from_defaults(session_id="s1", memory_blocks=[block])
            agent = FunctionAgent(tools=[FunctionTool.from_defaults(migrate)], llm=llm,
                                  system_prompt="You are a DBA.")
            await agent.run(user_msg="Migrate the users table", memory=memory)
            eid = await block.arecord_run(memory, outcome="success")
            assert eid and eid.startswith("exp-"), block.last_error
            experience = bank.experiences.get(eid)
            assert experience.task == "Migrate the users table"
            assert experience.steps[0].action == "migrate"
            assert experience.steps[0].observation == "users migrated"
        finally:
            bank.close()


async def test_a_recording_that_fails_is_counted_warned_once_and_flush_says_so(tmp_path, caplog):
    pytest.importorskip("llama_index.core")
    from llama_index.core.base.llms.types import ChatMessage

    from skillbank.adapters.llamaindex import SkillbankMemoryBlock

    root = tmp_path / "root"
    with owner_process(root):
        bank = open_bank(root)
        try:
            block = SkillbankMemoryBlock(bank)
            run = [ChatMessage(role="user", content="Migrate the users table"),
                   ChatMessage(role="assistant", content="Done.")]
            with caplog.at_level(logging.WARNING, logger="skillbank"):
                for _ in range(3):  # the bank refuses the outcome: three runs fail
                    assert await block.arecord_run(run, outcome="not-an-outcome") is None
            warnings = [r for r in caplog.records if r.levelno == logging.WARNING
                        and "recording" in r.getMessage()]
            assert len(warnings) == 1, [r.getMessage() for r in warnings]
            assert bank.stats()["recording_failures"] == 3
            assert bank.flush(timeout=60) is False  # flush reports the failed runs …
            assert bank.flush(timeout=60) is True   # … once
        finally:
            bank.close()


def test_framework_messages_become_plain_chat_dicts():
    pytest.importorskip("langchain_core")
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from skillbank.adapters._runs import plain_messages
    from skillbank.errors import InvalidInputError
    from skillbank.sharing import wire

    messages = [HumanMessage(content="Migrate the users table"),
                AIMessage(content="", tool_calls=[{"name": "migrate", "args": {"t": "users"},
                                                   "id": "c1"}]),
                ToolMessage(content="users migrated", tool_call_id="c1", name="migrate")]
    plain = plain_messages(messages)
    assert plain[0] == {"role": "human", "content": "Migrate the users table"}
    assert plain[1]["tool_calls"] == [{"id": "c1", "name": "migrate", "args": {"t": "users"}}]
    assert plain[2]["tool_call_id"] == "c1" and plain[2]["name"] == "migrate"
    assert wire.decode(wire.encode(plain)) == plain
    with pytest.raises(InvalidInputError, match="HumanMessage cannot be sent"):
        wire.encode(messages)  # the wire refuses framework objects at the sender
    with pytest.raises(InvalidInputError, match="not a chat message"):
        plain_messages([object()])


def test_the_wire_never_imports_a_module_a_value_names():
    """A value naming `skillbank.cli.__main__:x` is refused before anything is imported."""
    out = subprocess.run([sys.executable, "-c", """
import sys
from skillbank.errors import InvalidInputError
from skillbank.sharing import wire
refused = 0
for tag in ("model", "dc", "list"):
    for name in ("skillbank.cli.__main__:x", "skillbank.cli.__main__:main", "os:system",
                 "skillbank.records:__class__", "skillbank.records:BaseModel"):
        try:
            wire.decode({"$t": tag, "cls": name, "fields": {}, "items": []})
        except InvalidInputError:
            refused += 1
err = wire.decode_error({"cls": "skillbank.cli.__main__:Boom", "message": "m"})
print(refused, type(err).__name__, "skillbank.cli.__main__" in sys.modules,
      "skillbank.cli" in sys.modules)
"""], capture_output=True, text=True, env=env_for(Path("/nonexistent")), timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["15", "SkillbankError", "False", "False"]


# 2. Deadlines: a stopped owner gives BusyError, never a hang -----------------------------------

def run_python(root: Path, code: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env=env_for(root), capture_output=True,
                          text=True, timeout=timeout)


def test_a_stopped_owner_gives_busy_error_naming_its_pid(tmp_path):
    """Ctrl-Z on the owner: a new open and a call of an already connected client both end in
    BusyError within about lock_timeout (the kernel still accepts the connection)."""
    root = tmp_path / "root"
    with owner_process(root) as owner:
        connected = subprocess.Popen([sys.executable, "-c", """
import os, sys, time
from skillbank.errors import BusyError
from workers.common import open_bank
bank = open_bank(os.environ["SKILLBANK_ROOT"], lock_timeout=2)
print(bank.owner_pid, flush=True)
sys.stdin.readline()  # the owner is stopped now
started = time.monotonic()
try:
    bank.experiences.record(task="written while the owner is stopped", outcome="success", steps=[])
    print("NO ERROR")
except BusyError as exc:
    print(round(time.monotonic() - started, 1), exc)
"""], env=env_for(root), text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        try:
            assert connected.stdout.readline().strip() == str(owner.pid)
            os.kill(owner.pid, signal.SIGSTOP)
            started = time.monotonic()
            opened = run_python(root, """
import time
from skillbank.errors import BusyError
from workers.common import open_bank
import os
started = time.monotonic()
try:
    open_bank(os.environ["SKILLBANK_ROOT"], lock_timeout=2)
    print("NO ERROR")
except BusyError as exc:
    print(round(time.monotonic() - started, 1), exc)
""", timeout=90)
            connected.stdin.write("go\n")
            connected.stdin.flush()
            out, err = connected.communicate(timeout=90)
            for text in (opened.stdout, out):
                assert "NO ERROR" not in text, text
                assert f"process {owner.pid}" in text, (text, opened.stderr[-2000:], err[-2000:])
                assert "stopped" in text and f"kill -CONT {owner.pid}" in text, text
                assert float(text.split()[0]) < 30  # about lock_timeout, with room for a loaded box
            assert "may or may not have been applied" in out
            # a resumed owner still runs the write: check before running it again, where
            # "then try again" stored it twice (hunt-handoff #4, session 33)
            assert "whether it was applied before you run it again" in out, out
            assert "then try again" in opened.stdout, opened.stdout
            assert time.monotonic() - started < 120
        finally:
            os.kill(owner.pid, signal.SIGCONT)
            if connected.poll() is None:
                connected.kill()


# 3. Root identity: a copied root never reaches the original's owner ---------------------------

def test_a_copy_of_a_served_root_never_reaches_the_original_owner(tmp_path):
    import shutil

    from skillbank.errors import BusyError
    from skillbank.sharing import owner_lock

    original, copy = tmp_path / "original", tmp_path / "copy"
    with owner_process(original) as owner:
        bank = open_bank(original)
        try:
            bank.experiences.record(task="a task of the original root", outcome="success", steps=[])
        finally:
            bank.close()
        # Copied while its owner runs: the copy carries the original's .owner.json (and secret).
        shutil.copytree(original, copy, ignore=shutil.ignore_patterns("*.sock"))
        assert json.loads((copy / ".owner.json").read_text())["pid"] == owner.pid

        # The copy's own owner has not published yet: the copied endpoint is not used.
        lock = owner_lock(copy)
        lock.acquire()
        try:
            with pytest.raises(BusyError) as caught:
                open_bank(copy, lock_timeout=1)
            assert "has not published its endpoint" in str(caught.value)
        finally:
            lock.release()

        # Opened normally, the copy gets its own owner and its own identity.
        copied = open_bank(copy)
        try:
            assert not getattr(copied, "is_remote", False)
            copied.experiences.record(task="a task of the copy", outcome="success", steps=[])
            client = open_bank(copy)
            try:
                assert client.is_remote and client.owner_pid == os.getpid()
                assert client.experiences.count(namespace="*") == 2
            finally:
                client.close()
        finally:
            copied.close()
        bank = open_bank(original)
        try:
            assert bank.owner_pid == owner.pid
            assert [e.task for e in bank.experiences.list(namespace="*")] == \
                ["a task of the original root"]
        finally:
            bank.close()
        assert json.loads((copy / ".root-id.json").read_text())["id"] != \
            json.loads((original / ".root-id.json").read_text())["id"]


# 4. Watching per process --------------------------------------------------------------------

def write_skill_file(folder: Path, name: str, description: str) -> None:
    (folder / name).mkdir(parents=True, exist_ok=True)
    (folder / name / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\n# Steps\n\nDo it.\n")


def test_many_client_watchers_hold_no_owner_thread_and_see_changes(tmp_path):
    """Watchers follow the owner's change events; 45 of them (one owner thread each used to be
    held for good: a fresh client hung after 41) leave the owner free for a fresh client."""
    import threading

    root = tmp_path / "root"
    (root / "skills").mkdir(parents=True)
    with owner_process(root):
        bank = open_bank(root)
        seen: list[Any] = []
        got = threading.Event()
        watchers = []
        try:
            assert bank.is_remote
            for _ in range(45):
                watchers.append(bank.skills.start_watching(
                    on_sync=lambda report: (seen.append(report), got.set())))
            time.sleep(1.0)
            fresh = run_python(root, """
import os
from workers.common import open_bank
bank = open_bank(os.environ["SKILLBANK_ROOT"], lock_timeout=20)
print(bank.is_remote, len(bank.skills.list()))
bank.close()
""", timeout=120)
            assert fresh.returncode == 0, fresh.stderr[-2000:]
            assert fresh.stdout.split() == ["True", "0"]
            write_skill_file(root / "skills", "pdf-tables", "Extract tables from PDF files")
            assert got.wait(60), "no watcher saw the new skill"
            deadline = time.monotonic() + 30
            while len(seen) < 45 and time.monotonic() < deadline:
                time.sleep(0.1)
            assert len(seen) == 45 and all("pdf-tables" in r.added for r in seen)
        finally:
            for thread, stop in watchers:
                stop.set()
            for thread, _ in watchers:
                thread.join(10)
            bank.close()


def test_a_watch_on_a_stopped_owner_gives_up_within_lock_timeout_naming_its_pid(tmp_path):
    """Ctrl-Z on the owner while a client watches: the watch ends in BusyError naming the pid
    after lock_timeout of silence. Before, it reconnected and waited as long again (~2x)."""
    import threading

    from skillbank.errors import BusyError

    root = tmp_path / "root"
    (root / "skills").mkdir(parents=True)
    lock_timeout = 4.0
    with owner_process(root) as owner:
        bank = open_bank(root, lock_timeout=lock_timeout)
        ended: dict[str, Any] = {}

        def watch() -> None:
            try:
                bank.skills.watch(stop_event=stop)
                ended["error"] = None
            except BusyError as exc:
                ended["error"] = exc
            ended["at"] = time.monotonic()

        stop = threading.Event()
        thread = threading.Thread(target=watch, daemon=True)
        try:
            assert bank.is_remote
            thread.start()
            time.sleep(1.0)  # the watch's long poll is under way
            os.kill(owner.pid, signal.SIGSTOP)
            stopped = time.monotonic()
            thread.join(60)
            assert not thread.is_alive(), "the watch never gave up"
            error = ended["error"]
            assert error is not None and f"process {owner.pid}" in str(error), error
            assert f"kill -CONT {owner.pid}" in str(error) and "skills.watch" in str(error)
            # lock_timeout of silence, with room for a loaded machine (2x took >= 8 s).
            assert ended["at"] - stopped < 1.75 * lock_timeout, ended["at"] - stopped
        finally:
            stop.set()
            os.kill(owner.pid, signal.SIGCONT)
            bank.close()


def test_the_cli_watches_a_served_root(tmp_path):
    root = tmp_path / "root"
    (root / "skills").mkdir(parents=True)
    with owner_process(root):
        watch = subprocess.Popen([str(Path(sys.executable).parent / "skillbank"), "--json",
                                  "skills", "watch", "--timeout", "40"],
                                 env=env_for(root), text=True, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
        try:
            start = json.loads(watch.stdout.readline() or "{}")
            assert start.get("event") == "start", watch.stderr.read()[-2000:] if watch.poll() \
                is not None else start
            write_skill_file(root / "skills", "pdf-tables", "Extract tables from PDF files")
            event = json.loads(watch.stdout.readline() or "{}")
            assert event.get("event") == "sync" and event["report"]["added"] == ["pdf-tables"]
        finally:
            watch.kill()
            watch.wait()


# 5 and 10. What a root serves survives a takeover; the takeover is announced and timed ----------

def hash_bank(root: Path, skill_roots: tuple[Path, ...] = ()):
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    return Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                          skill_roots=[str(p) for p in skill_roots])


def test_a_takeover_serves_what_the_root_served_and_is_announced(tmp_path):
    root, team = tmp_path / "root", tmp_path / "team-skills"
    write_skill_file(team, "pdf-tables", "Extract tables from PDF files")
    with owner_process(root, skill_roots=(team,)) as owner:
        asked_team = hash_bank(root, (team,))
        plain = hash_bank(root)  # asks for no extra folder: nothing to tell
        try:
            assert asked_team.is_remote and asked_team.note is None and plain.note is None
            assert [h.name for h in asked_team.skills.search("tables in a pdf")] == ["pdf-tables"]
            os.kill(owner.pid, signal.SIGKILL)
            owner.wait(timeout=30)
            plain.experiences.count(namespace="*")  # the first call after the owner died …
            assert not plain.is_remote  # … took the root over, serving the team's folder
            assert [h.name for h in asked_team.skills.search("tables in a pdf")] == ["pdf-tables"]
            notes = plain.take_notes()
            assert any(f"from process {owner.pid}" in n and "took over" in n for n in notes), notes
            assert plain.take_notes() == []  # told once
            assert plain.takeover["from_pid"] == owner.pid and plain.takeover["seconds"] > 0
            assert plain.stats()["takeover"]["seconds"] == plain.takeover["seconds"]

            other = tmp_path / "other-skills"
            write_skill_file(other, "slide-deck", "Turn notes into slides")
            wants_more = hash_bank(root, (other,))  # asks for a folder the root does not serve
            try:
                assert wants_more.is_remote
                assert wants_more.note and str(other.resolve()) in wants_more.note
                hits = wants_more.skills.search("tables in a pdf")
                assert getattr(hits, "note", None) == wants_more.note
                assert wants_more.stats()["served_note"] == wants_more.note
            finally:
                wants_more.close()
        finally:
            asked_team.close()
            plain.close()


PREPARING_CLIENT = """
import json, os, sys, time
from workers.common import open_bank
bank = open_bank(os.environ["SKILLBANK_ROOT"])
bank.experiences.count(namespace="*")
from skillbank.sharing import prepare
at_first = prepare.prepared.is_set() or "uvicorn" in sys.modules
if os.environ.get("SKILLBANK_PREPARE_TAKEOVER") == "0":
    time.sleep(prepare.PREPARE_IDLE + 1.5)
    ready = prepare.prepared.is_set()
else:
    ready = prepare.prepared.wait(90)
print(json.dumps({"remote": bank.is_remote, "at_first": at_first, "ready": ready,
                  "loaded": [m for m in ("chromadb", "onnxruntime", "uvicorn") if m in sys.modules]}),
      flush=True)
sys.stdin.readline()  # the owner is gone now
bank.experiences.count(namespace="*")
print(json.dumps({"remote": bank.is_remote, "takeover": bank.takeover}), flush=True)
bank.close()
"""


def test_an_idle_long_lived_client_prepares_a_takeover_and_a_one_shot_does_not(tmp_path):
    """Most of a takeover was `import chromadb` in the client that becomes the owner. A client
    idle for PREPARE_IDLE s imports what an owner needs in the background; its first call does
    not wait for that, and the switch is off with SKILLBANK_PREPARE_TAKEOVER=0."""
    root = tmp_path / "root"
    with owner_process(root) as owner:
        kept_lean = subprocess.run([sys.executable, "-c", PREPARING_CLIENT], input="\n",
                                   env=env_for(root, SKILLBANK_PREPARE_TAKEOVER="0"),
                                   capture_output=True, text=True, timeout=120)
        lean = json.loads(kept_lean.stdout.splitlines()[0]) if kept_lean.stdout else {}
        assert lean.get("remote") and not lean["ready"], (lean, kept_lean.stderr[-2000:])
        assert "uvicorn" not in lean["loaded"] and "onnxruntime" not in lean["loaded"]
        client = subprocess.Popen([sys.executable, "-c", PREPARING_CLIENT], env=env_for(root),
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            first = json.loads(client.stdout.readline() or "{}")
            assert first.get("remote") and first["ready"] and not first["at_first"], first
            assert set(first["loaded"]) == {"chromadb", "onnxruntime", "uvicorn"}
            os.kill(owner.pid, signal.SIGKILL)
            owner.wait(timeout=30)
            client.stdin.write("go\n")
            client.stdin.flush()
            after = json.loads(client.stdout.readline() or "{}")
            assert after.get("remote") is False and after["takeover"]["prepared"] is True, after
            assert after["takeover"]["from_pid"] == owner.pid
        finally:
            if client.poll() is None:
                client.stdin.close()
                client.wait(timeout=60)


# 12. Arrows point one way -------------------------------------------------------------------

def test_the_facade_does_not_import_the_sharing_layer():
    import ast

    tree = ast.parse((REPO / "skillbank" / "bank.py").read_text())
    imported = {node.module for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.module}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                 for alias in node.names}
    assert not {m for m in imported if m.startswith("skillbank.sharing")}, imported
    from skillbank import Skillbank
    from skillbank.opening import open_bank

    assert Skillbank.open.__doc__ and callable(open_bank)


# 6. Paths are resolved by the caller --------------------------------------------------------

def test_relative_paths_resolve_in_the_callers_folder(tmp_path):
    root, work = tmp_path / "root", tmp_path / "work"
    work.mkdir()
    skillbank_cli = str(Path(sys.executable).parent / "skillbank")
    with owner_process(root):  # its working folder is tmp_path
        bank = open_bank(root)
        try:
            bank.experiences.record(task="rotate the api keys", outcome="success", steps=[])
        finally:
            bank.close()
        done = subprocess.run([skillbank_cli, "experiences", "export", "backup.jsonl"], cwd=work,
                              env=env_for(root), capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        assert (work / "backup.jsonl").exists() and not (tmp_path / "backup.jsonl").exists()
        assert "rotate the api keys" in (work / "backup.jsonl").read_text()

        (work / "mine.jsonl").write_text(json.dumps(
            {"task": "renew the tls certificate", "outcome": "success", "steps": []}) + "\n")
        (tmp_path / "mine.jsonl").write_text(json.dumps(
            {"task": "the owner's own file, not this one", "outcome": "success",
             "steps": []}) + "\n")
        done = subprocess.run([skillbank_cli, "experiences", "import", "mine.jsonl"], cwd=work,
                              env=env_for(root), capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        bank = open_bank(root)
        try:
            tasks = {e.task for e in bank.experiences.list(namespace="*")}
        finally:
            bank.close()
        assert tasks == {"rotate the api keys", "renew the tls certificate"}


# 7. The private socket folder ---------------------------------------------------------------

def test_a_squatted_socket_folder_does_not_stop_a_long_root_from_opening(tmp_path):
    """Another user (here: a symlink to a folder of theirs) took `skillbank-<uid>` in the temp
    folder: a root whose socket path is too long for the root itself still opens and serves."""
    import shutil
    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix="sb23-", dir="/tmp"))  # short: sockets live under it
    elsewhere = tmp_path / "theirs"
    elsewhere.mkdir(mode=0o777)
    (tmp / f"skillbank-{os.getuid()}").symlink_to(elsewhere)
    root = tmp_path / ("a-root-with-a-long-name-" * 5) / "root"
    out = subprocess.run([sys.executable, "-c", """
import os, sys
from workers.common import open_bank
from skillbank.sharing.endpoint import read_endpoint, private_dir
root = sys.argv[1]
owner = open_bank(root)
owner._server.ready.wait(30)
client = open_bank(root)
endpoint = read_endpoint(owner.root)
folder = os.path.dirname(endpoint.socket)
print(client.is_remote, client.experiences.count(namespace="*"))
print(folder.startswith(sys.argv[2]), oct(os.stat(folder).st_mode & 0o777), os.listdir(sys.argv[3]))
client.close()
owner.close()
""", str(root), str(tmp), str(elsewhere)], env={**env_for(root), "TMPDIR": str(tmp),
                                               "XDG_RUNTIME_DIR": ""},
        capture_output=True, text=True, timeout=120)
    shutil.rmtree(tmp, ignore_errors=True)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["True", "0", "True", "0o700", "[]"]


# 9. Wire parity: the same outcome in-process and through a client -----------------------------

@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """An in-process bank and a client of another bank (owned by this process, over its socket)."""
    local = open_bank(tmp_path_factory.mktemp("local") / "root")
    served = tmp_path_factory.mktemp("served") / "root"
    owner = open_bank(served)
    client = open_bank(served)
    assert client.is_remote
    yield local, client
    client.close()
    owner.close()
    local.close()


def outcome(call: Any) -> str:
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - the class is the outcome compared
        return type(exc).__name__
    return "ok"


@pytest.mark.parametrize("call", [
    lambda b: b.skills.search("migrate a table", k=2**70),
    lambda b: b.skills.search("migrate a table", k=float("nan")),
    lambda b: b.skills.search("migrate a table", k=-2**80),
    lambda b: b.experiences.record(task="t", outcome="success", score=float("nan")),
    lambda b: b.experiences.record(task="t", outcome="success", score=float("inf")),
    lambda b: b.experiences.record(task="t", outcome="success", score=-float("inf")),
    lambda b: b.experiences.record(task="lone \ud800 surrogate", outcome="success"),
    lambda b: b.experiences.record(task="t", outcome="success", tags={"\udfff": 1}),
    lambda b: b.guidelines.add("Always write tests first.", topic=2**70),
    lambda b: b.rate("gl-" + "0" * 12, helpful=float("nan")),
])
def test_bad_numbers_and_text_give_the_same_error_both_ways(both, call):
    local, client = both
    in_process = outcome(lambda: call(local))
    assert in_process == outcome(lambda: call(client))
    assert in_process != "TypeError"


def test_the_api_fuzz_corpus_has_the_same_outcomes_through_a_client(both):
    """The strategies of tests/test_properties.py (hostile text, any JSON value, NaN, huge
    integers, bytes) against record, learn and add: in-process and remote agree on
    InvalidInputError vs stored, every time."""
    hypothesis = pytest.importorskip("hypothesis")
    from hypothesis import HealthCheck, given, settings

    import test_properties as corpus

    local, client = both
    targets = {
        "record": lambda b, kw: b.experiences.record(**kw),
        "learn": lambda b, kw: b.guidelines.learn(**kw),
        "add": lambda b, kw: b.guidelines.add(**kw),
    }
    strategies = {"record": corpus.record_kwargs(), "learn": corpus.learn_kwargs,
                  "add": corpus.add_kwargs}
    mismatches: list[str] = []
    for name, strategy in strategies.items():
        @settings(max_examples=40, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(kwargs=strategy)
        def check(kwargs: dict[str, Any]) -> None:
            here = outcome(lambda: targets[name](local, kwargs))
            there = outcome(lambda: targets[name](client, kwargs))
            if here != there:
                mismatches.append(f"{name}({kwargs!r:.300}): {here} in-process, {there} remote")

        check()
    assert not mismatches, mismatches[:5]
    del hypothesis


# 11. The MCP server serves several calls at once -------------------------------------------------

def test_concurrent_searches_share_chroma_queries_and_return_what_sequential_ones_do(
        tmp_path, monkeypatch):
    """The owner answers concurrent searches of one index together (skillbank.index_batch):
    one Chroma query for their vectors, and every search gets exactly the hits it gets alone.
    Before, each asked Chroma on its own (six clients, six queries in a row)."""
    import threading

    # Chroma answers every search, as for a collection too large to hold in memory
    # (skillbank.dense_live answers a small one from memory after its first search).
    monkeypatch.setattr("skillbank.dense_live.MAX_TEXTS", 0)

    from skillbank.embeddings import HashEmbedding
    from skillbank.index import HybridIndex, IndexItem, make_client

    index = HybridIndex(make_client(path=str(tmp_path / "chroma")), "t_batch", HashEmbedding())
    words = ["deploy", "service", "unit", "tests", "review", "pull", "request", "pdf", "tables",
             "changelog", "commits", "slides"]
    index.upsert([IndexItem(id=f"it-{i}", embed_texts=[" ".join(words[i % 12:i % 12 + 3])],
                            keyword_text=" ".join(words[(i * 5) % 12:(i * 5) % 12 + 4]),
                            metadata={"hash": str(i), "ns": "b" if i % 3 == 0 else "a"})
                  for i in range(40)])
    asks = [("deploy the service", {"fusion": "z"}), ("write unit tests", {"fusion": "z"}),
            ("review a pull request", {"fusion": "z"}), ("deploy the service", {"fusion": "z"}),
            ("tables from a pdf", {"where": {"ns": "b"}}), ("service tests", {"where": {"ns": "b"}}),
            ("changelog from commits", {})]

    def seen(hits: Any) -> tuple:
        return ([(h.id, h.score, h.dense, h.keyword, h.why) for h in hits], hits.best_dense,
                hits.best_keyword, hits.dense_complete, hits.pending)

    sequential = [seen(index.search(q, k=6, **kw)) for q, kw in asks]

    class Counting:
        """The real collection; counts queries and holds the first until the rest wait."""

        def __init__(self, real: Any) -> None:
            self.real, self.calls = real, []
            self.first = threading.Event()

        def __getattr__(self, name: str) -> Any:
            return getattr(self.real, name)

        def query(self, **kwargs: Any) -> Any:
            self.calls.append(len(kwargs["query_embeddings"]))
            if len(self.calls) == 1:  # the first search holds the lock: the others queue up
                self.first.set()
                deadline = time.monotonic() + 120  # a ceiling for a loaded machine
                while len(index._combiner._waiting) < len(asks) - 1:
                    assert time.monotonic() < deadline, "the other searches never queued"
                    time.sleep(0.005)
            return self.real.query(**kwargs)

    index._coll = counting = Counting(index._coll)  # (the collection behind `_collection`)
    results: dict[int, Any] = {}

    def ask(n: int) -> None:
        try:
            results[n] = seen(index.search(asks[n][0], k=6, **asks[n][1]))
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            results[n] = exc

    # The first search alone, then the others while it holds the index lock (in its query):
    # started together, a loaded machine let several register before the first took the
    # lock, its batch was then more than one search, the hold above waited for a count it
    # could not reach, and its failure (swallowed by the batched query: each asked alone)
    # made 7 queries.
    threads = [threading.Thread(target=ask, args=(n,)) for n in range(len(asks))]
    threads[0].start()
    assert counting.first.wait(120), "the first search never asked Chroma"
    for thread in threads[1:]:
        thread.start()
    for thread in threads:
        thread.join(180)
    assert [results.get(n) for n in range(len(asks))] == sequential
    # The first alone, then one query per (n, where) group: z, rrf in ns b, rrf everywhere.
    assert len(counting.calls) <= 4 < len(asks), counting.calls
    assert max(counting.calls) >= 2

async def test_an_mcp_read_is_not_held_up_by_a_write_waiting_for_a_lock(tmp_path):
    """A write waits for the root's write lock (held by another process); a read on the same
    MCP server answers meanwhile (one call at a time made it wait for the write)."""
    import anyio
    from mcp import Client

    from skillbank.mcp_server import build_server

    root = tmp_path / "root"
    write_skill_file(root / "skills", "pdf-tables", "Extract tables from PDF files")
    bank = open_bank(root)
    holder = subprocess.Popen([sys.executable, "-c", """
import sys
from filelock import FileLock
lock = FileLock(sys.argv[1])
lock.acquire()
print("held", flush=True)
sys.stdin.readline()
lock.release()
""", str(root / ".write.lock")], text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == "held"
        server = build_server(bank, trusted=True)
        async with Client(server) as client:
            async with anyio.create_task_group() as tasks:
                written: list[Any] = []

                async def write() -> None:
                    written.append(await client.call_tool("record_experience", {
                        "task": "migrate the orders table", "outcome": "success"}))

                tasks.start_soon(write)
                await anyio.sleep(1.0)  # the write is waiting for the lock now
                with anyio.fail_after(30):
                    found = await client.call_tool("find_skills", {"task": "tables in a pdf"})
                assert not found.is_error
                assert not written  # the read answered while the write still waited
                holder.stdin.write("release\n")
                holder.stdin.flush()
            assert written and not written[0].is_error
    finally:
        if holder.poll() is None:
            holder.kill()
        bank.close()


# 10. An MCP server that takes a root over says so -------------------------------------------

async def test_an_mcp_server_that_takes_the_root_over_sends_a_log_message(tmp_path):
    from mcp import Client, StdioServerParameters

    root = tmp_path / "root"
    write_skill_file(root / "skills", "pdf-tables", "Extract tables from PDF files")
    logged: list[str] = []

    async def on_log(params: Any) -> None:
        logged.append(str(params.data))

    with owner_process(root) as owner:
        params = StdioServerParameters(command=sys.executable,
                                       args=["-m", "skillbank.mcp_server", "--no-bundled"],
                                       env=env_for(root), cwd=str(tmp_path))
        async with Client(params, read_timeout_seconds=120, logging_callback=on_log,
                          log_level="info") as client:
            found = await client.call_tool("find_skills", {"task": "tables in a pdf"})
            assert not found.is_error
            assert not any("took over" in line for line in logged)
            os.kill(owner.pid, signal.SIGKILL)
            owner.wait(timeout=30)
            found = await client.call_tool("find_skills", {"task": "tables in a pdf"})
            assert not found.is_error, found.content[0].text
            assert any("took over" in line and f"from process {owner.pid}" in line
                       for line in logged), logged


# Soak: two MCP servers, a LangChain agent, a LlamaIndex agent and a CLI loop on one root -------
SOAK_SECONDS = float(os.environ.get("SKILLBANK_SOAK_SECONDS", "60"))


@pytest.mark.slow
@pytest.mark.soak
def test_soak_owner_killed_stopped_and_continued_at_random(tmp_path):
    """While the root's owner is SIGKILLed or SIGSTOPped/SIGCONTed at random: every agent run
    is recorded exactly once or reported as failed, no call passes its deadline, no
    acknowledged write is lost, and rebuilding the index from the files changes nothing."""
    import random

    pytest.importorskip("langchain.agents")
    pytest.importorskip("llama_index.core")
    rng = random.Random(23)
    root = tmp_path / "root"
    write_skill_file(root / "skills", "db-migrations", "Run database schema migrations safely")
    deadline = time.monotonic() + SOAK_SECONDS
    modes = {"mcp1": "mcp", "mcp2": "mcp", "cli": "cli", "langchain": "langchain",
             "llamaindex": "llamaindex"}
    workers = {name: soak_worker(root, name, mode, SOAK_SECONDS) for name, mode in modes.items()}
    outputs: list[str] = []
    kills = stops = 0
    try:
        while time.monotonic() < deadline - 8:
            time.sleep(rng.uniform(3.0, 6.0))
            pid = owner_pid_or_none(root)
            if pid is None or not alive(pid):
                continue
            if rng.random() < 0.5:
                os.kill(pid, signal.SIGSTOP)
                stops += 1
                time.sleep(rng.uniform(1.0, 6.0))
                os.kill(pid, signal.SIGCONT)
                continue
            os.kill(pid, signal.SIGKILL)
            kills += 1
            for name, proc in list(workers.items()):
                if proc.pid == pid:  # a Python worker was the owner itself: start it again
                    proc.wait(timeout=30)
                    outputs.append(proc.stdout.read())
                    remaining = max(1.0, deadline - time.monotonic())
                    workers[name] = soak_worker(root, name, modes[name], remaining)
        for name, proc in workers.items():
            out, err = proc.communicate(timeout=240)
            outputs.append(out)
            assert proc.returncode == 0, f"{name}: {err[-3000:]}"
    finally:
        for proc in workers.values():
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGCONT)
                proc.kill()
    lines = [line.split(" ", 2) for out in outputs for line in out.splitlines() if line.strip()]
    acked = {parts[1]: parts[2] for parts in lines if parts[0] in ("ACK", "RUN")}
    runs = {parts[2]: parts[1] for parts in lines if parts[0] == "RUN"}
    failed = [parts for parts in lines if parts[0] in ("FAILED", "BUSY", "RETRY", "KILLED")]
    errors = [" ".join(parts) for parts in lines if parts[0] == "ERR"]
    slow = [" ".join(parts) for parts in lines if parts[0] == "SLOW"]
    print(f"\nsoak: {SOAK_SECONDS:.0f} s, {kills} owner kills, {stops} stops, {len(acked)} "
          f"acknowledged writes ({len(runs)} agent runs), {len(failed)} reported failures, "
          f"{len(errors)} errors, {len(slow)} calls past the deadline")
    assert kills + stops >= 4 and len(runs) >= 10
    assert not errors, errors[:5]
    assert not slow, slow[:5]

    bank = open_bank(root)
    try:
        listed = [(e.id, e.task) for e in bank.experiences.list(namespace="*", limit=100_000)]
        ids = {eid for eid, _ in listed}
        lost = {eid: task for eid, task in acked.items() if eid not in ids}
        assert not lost, f"{len(lost)} acknowledged writes lost: {list(lost.items())[:5]}"
        tasks = [task for _, task in listed]
        twice = [task for task in runs if tasks.count(task) != 1]
        assert not twice, f"agent runs not recorded exactly once: {twice[:5]}"
        indexed = set(bank.index("experiences").ids())
        recalled = {q: {h.id for h in bank.experiences.recall(q, k=5)}
                    for q in ("langchain run 3", "llamaindex run 5", "cli task 2")}
        bank.reindex()
        assert set(bank.index("experiences").ids()) == indexed
        for query, before in recalled.items():  # a recall's ids stay the stored ones
            assert {h.id for h in bank.experiences.recall(query, k=5)} <= ids, query
            assert before <= ids
    finally:
        bank.close()


def owner_pid_or_none(root: Path) -> int | None:
    try:
        return json.loads((root / ".owner.json").read_text())["pid"]
    except (OSError, ValueError, KeyError):
        return None


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True



# 8. Server mode: votes and usage counts reach the other processes -------------------------------

def test_server_mode_votes_and_usage_reach_other_processes(tmp_path, chroma_server):
    prefix = f"sr{os.getpid()}x{time.monotonic_ns() % 10**9}"
    root = tmp_path / "root"
    write_skill_file(root / "skills", "pdf-tables", "Extract tables from PDF files")
    bank = open_bank(root, chroma_url=chroma_server, prefix=prefix)
    try:
        gid = bank.guidelines.add("Always pin dependency versions.").guideline_id
        eid = bank.experiences.record(task="rotate the api keys", outcome="success", steps=[])
        bank.rate("skill:pdf-tables", helpful=False)  # this process's own vote counts once
        assert bank.skills.load("pdf-tables").usage.failures == 1
        done = run_python(root, f"""
from workers.common import open_bank
bank = open_bank({str(root)!r}, chroma_url={chroma_server!r}, prefix={prefix!r})
bank.rate({gid!r}, helpful=True)
bank.rate("skill:pdf-tables", helpful=True)
bank.rate({eid!r}, helpful=True)
bank.close()
""")
        assert done.returncode == 0, done.stderr[-2000:]
        time.sleep(0.3)  # reads look for other processes' usage events at most every 0.2 s
        assert bank.guidelines.get(gid).helpful == 1
        usage = bank.skills.load("pdf-tables").usage
        assert (usage.successes, usage.failures) == (1, 1)
        assert bank.experiences.get(eid).usage.successes == 1
    finally:
        bank.close()


# Preparing a takeover: threads, forks, exit, several clients (review findings) -----------------

SLOW_MODULE = """
import os, time
open(os.environ["SLOW_FLAG"], "w").close()
time.sleep(float(os.environ.get("SLOW_SECONDS", "2")))
open(os.environ["SLOW_FLAG"] + ".done", "w").close()
VALUE = 1
"""

PREPARE_SCENARIO = """
import json, os, sys, threading, time
sys.path.insert(0, os.environ["SLOW_DIR"])
from skillbank.sharing import prepare
prepare.PREPARE_IDLE = 0.1
prepare.MODULES = ("slowmod",)
flag = os.environ["SLOW_FLAG"]
idle = lambda: time.monotonic() - 10
def started():
    while not os.path.exists(flag):
        time.sleep(0.01)
scenario = os.environ["SCENARIO"]
if scenario == "fork":
    prepare.start(idle, lambda: False)
    started()
    pid = os.fork()
    if pid == 0:
        import slowmod
        os._exit(0 if slowmod.VALUE == 1 else 3)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            print(json.dumps({"child": os.waitstatus_to_exitcode(status)}))
            sys.exit(0)
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    print(json.dumps({"child": "hung"}))
elif scenario == "exit":
    prepare.start(idle, lambda: False)
    started()
    print(json.dumps({"exiting": True}), flush=True)
elif scenario == "two-clients":
    first_closed = threading.Event()
    prepare.start(lambda: None, first_closed.is_set)  # a call under way, then it closes
    prepare.start(idle, lambda: False)
    time.sleep(0.3)
    first_closed.set()
    print(json.dumps({"prepared": prepare.prepared.wait(20)}))
elif scenario == "takeover":
    from pathlib import Path
    from skillbank.settings import Settings
    from skillbank.sharing.client import BankClient
    seen = {}
    class Local:
        def embedding_function(self, texts): return [[0.0]]
        def close(self): pass
    def become_owner(lock):
        seen["module_done"] = getattr(sys.modules.get("slowmod"), "VALUE", None) == 1
        return Local()
    client = BankClient(Settings(root=Path(os.environ["SKILLBANK_ROOT"])),
                        become_owner=become_owner, try_lock=lambda: None, sync=False)
    prepare.start(idle, lambda: False)
    started()
    client._promote(object())
    print(json.dumps(seen))
"""


def _prepare_scenario(tmp_path: Path, scenario: str, seconds: float = 2.0) -> tuple[dict, Path]:
    slow = tmp_path / "slow"
    slow.mkdir(exist_ok=True)
    (slow / "slowmod.py").write_text(SLOW_MODULE)
    flag = tmp_path / "slow-started"
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    env = env_for(root, SCENARIO=scenario, SLOW_DIR=str(slow), SLOW_FLAG=str(flag),
                  SLOW_SECONDS=str(seconds))
    done = subprocess.run([sys.executable, "-c", PREPARE_SCENARIO], env=env, text=True,
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1]), flag


def test_a_fork_during_the_background_imports_leaves_a_child_that_can_import(tmp_path):
    """A fork while the background imports a module: the child used to inherit that module's
    import lock held by a thread it does not have, and hung importing it."""
    got, _ = _prepare_scenario(tmp_path, "fork")
    assert got == {"child": 0}, got


def test_exit_does_not_wait_for_the_background_imports(tmp_path):
    """The process exits while the background imports a slow module (up to 30 s waited)."""
    got, flag = _prepare_scenario(tmp_path, "exit", seconds=8.0)
    assert got == {"exiting": True}
    assert not Path(str(flag) + ".done").exists(), "the exit waited for the import to finish"


def test_a_process_keeps_preparing_when_its_first_client_closes(tmp_path):
    """The preparation belongs to the process: the first client closing left the others
    unprepared for good."""
    got, _ = _prepare_scenario(tmp_path, "two-clients", seconds=0.0)
    assert got == {"prepared": True}, got


def test_a_takeover_waits_for_the_background_imports_under_way(tmp_path):
    """A takeover during the background imports waits for them instead of importing the same
    modules on a second thread at once."""
    got, _ = _prepare_scenario(tmp_path, "takeover")
    assert got == {"module_done": True}, got


def test_a_client_watch_retries_connect_timeouts_and_a_watch_thread_that_ends_says_why(
        tmp_path, monkeypatch, caplog):
    """A connect or pool timeout (a loaded machine) is not a silent owner: the watch retries.
    It used to raise OwnerNotAnsweringError in start_watching's thread, which died silently."""
    import threading

    import httpx

    from skillbank.sharing import client as client_module

    real_changes = client_module._Connection.changes
    failures = {"connect": 1}

    def flaky_changes(self, since, wait):
        if failures["connect"]:
            failures["connect"] -= 1
            raise httpx.ConnectTimeout("connect timed out (a loaded machine)")
        if failures.get("broken"):
            raise ValueError("the watch broke")
        return real_changes(self, since, wait)

    monkeypatch.setattr(client_module._Connection, "changes", flaky_changes)
    root = tmp_path / "root"
    (root / "skills").mkdir(parents=True)
    with owner_process(root):
        bank = open_bank(root)
        got = threading.Event()
        try:
            assert bank.is_remote
            thread, stop = bank.skills.start_watching(on_sync=lambda report: got.set())
            deadline = time.monotonic() + 30
            while failures["connect"] and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(1.0)
            write_skill_file(root / "skills", "pdf-tables", "Extract tables from PDF files")
            assert got.wait(60), "the watch gave up on a connect timeout"
            with caplog.at_level(logging.WARNING, logger="skillbank.sharing"):
                failures["broken"] = True
                thread.join(30)
                assert not thread.is_alive()
            assert any("watching the skills" in r.getMessage() and r.exc_info
                       for r in caplog.records), caplog.text
            stop.set()
        finally:
            bank.close()
