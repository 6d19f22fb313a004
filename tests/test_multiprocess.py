"""One root, many local processes: the owner serves, the others are clients, failover is safe.

Real processes throughout: `skillbank serve` over stdio driven by the MCP SDK client, the CLI,
and plain Python processes, on one embedded root (hash embedding: this is about processes, not
retrieval quality).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from conftest import REPO, write_skill
from workers.common import open_bank

BIN = Path(sys.executable).parent


def env_for(root: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SKILLBANK_") or k == "SKILLBANK_MODEL_DIR"}
    env.update(ANONYMIZED_TELEMETRY="False", SKILLBANK_ROOT=str(root), SKILLBANK_EMBEDDING="hash",
               PYTHONUNBUFFERED="1", COLUMNS="200")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "tests"), env.get("PYTHONPATH", "")]))
    env.update(extra)
    return env


def cli(root: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "skillbank"), *args], env=env_for(root), capture_output=True,
                          text=True, timeout=timeout)


def python(root: Path, code: str, timeout: float = 120) -> str:
    done = subprocess.run([sys.executable, "-c", code], env=env_for(root), capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


RECORD = """
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
bank = Skillbank.open(embedding_function=HashEmbedding(), include_bundled=False)
print(bank.experiences.record(task={task!r}, outcome="failure", steps=[{{"action": "ran the migration"}}],
                              feedback="the orders table was locked for 10 minutes"))
bank.close()
"""


def server_params(root: Path, skills: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "skillbank.mcp_server", "--skills-dir", str(skills),
                                       "--no-bundled"],
                                 env=env_for(root), cwd=str(root.parent))


async def call(client: Client, tool: str, **arguments) -> dict:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    return result.structured_content


def owner_pid(root: Path) -> int:
    return json.loads((root / ".owner.json").read_text())["pid"]


@pytest.mark.slow
async def test_an_mcp_server_the_cli_python_and_a_second_server_share_one_root(tmp_path):
    import anyio

    root = tmp_path / "root"
    skills = tmp_path / "team-skills"
    write_skill(skills, "db-migrations", "Run database schema migrations safely with rollbacks")
    task = "Migrate the orders table to the new schema"
    held: dict[str, Client] = {}
    opened, stop = anyio.Event(), anyio.Event()

    async def first_server() -> None:  # its own task: it exits while the second one runs
        async with Client(server_params(root, skills), read_timeout_seconds=120) as client:
            held["first"] = client
            opened.set()
            await stop.wait()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(first_server)
        await opened.wait()
        first = held["first"]
        found = await call(first, "find_skills", task="run a database migration")
        assert found["skills"][0]["name"] == "db-migrations"
        server_pid = owner_pid(root)

        # The CLI writes and reads while the server runs (it used to wait, then exit 6).
        learned = cli(root, "guidelines", "learn", "Never deploy on Fridays.")
        assert learned.returncode == 0, learned.stderr
        listed = cli(root, "--json", "guidelines", "list")
        assert listed.returncode == 0, listed.stderr
        assert "Fridays" in listed.stdout

        # A Python process records an experience (it used to get BusyError).
        eid = python(root, RECORD.format(task=task))
        assert eid.startswith("exp-")

        async with Client(server_params(root, skills), read_timeout_seconds=120) as second:
            found = await call(second, "find_skills", task="schema migration with rollback")
            assert found["skills"][0]["name"] == "db-migrations"
            recalled = await call(first, "recall_experiences", task=task)
            assert eid in json.dumps(recalled)

            stop.set()  # the first server (the owner) exits
            with anyio.fail_after(60):
                while server_pid == owner_pid_or_none(root) or "first" in held and _alive(server_pid):
                    await anyio.sleep(0.1)

            found = await call(second, "find_skills", task="database migration")
            assert found["skills"][0]["name"] == "db-migrations"
            recalled = await call(second, "recall_experiences", task=task)
            assert eid in json.dumps(recalled)
            guidelines = await call(second, "search_guidelines", task="deploy on a Friday")
            assert "Fridays" in json.dumps(guidelines)
            assert owner_pid(root) not in (server_pid,)  # the second server took the root over


def owner_pid_or_none(root: Path) -> int | None:
    try:
        return owner_pid(root)
    except (OSError, ValueError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_client_does_not_load_chroma_or_the_model(tmp_path):
    root = tmp_path / "root"
    owner = open_bank(root)
    try:
        owner.guidelines.add("Pin every dependency version in requirements files.")
        out = python(root, """
import sys
from skillbank import Skillbank
bank = Skillbank.open()
print(bank.is_remote, len(bank.guidelines.list(namespace="*")))
print(sorted(m for m in ("chromadb", "onnxruntime", "numpy") if m in sys.modules))
bank.close()
""")
        assert out.splitlines() == ["True 1", "[]"]
    finally:
        owner.close()


def test_a_client_gets_the_same_records_and_errors(tmp_path):
    from skillbank.errors import InvalidInputError, NotFoundError
    from skillbank.records import Guideline, Hit, Hits

    root = tmp_path / "root"
    write_skill(root / "skills", "pdf-tables", "Extract tables from PDF files")
    owner = open_bank(root)
    client = open_bank(root)  # this process already owns the root: the second open is a client
    try:
        assert client.is_remote and not owner.is_remote
        gid = owner.guidelines.add("Always write tests before fixing a bug.").guideline_id
        guideline = client.guidelines.get(gid)
        assert isinstance(guideline, Guideline) and guideline.text.startswith("Always write tests")
        hits = client.skills.search("pull the tables out of a pdf")
        assert isinstance(hits, Hits) and isinstance(hits[0], Hit)
        assert hits[0].name == "pdf-tables" and hits[0].record.description
        context = client.context_for("fix a bug", budget_tokens=500)
        assert type(context).__name__ == "MemoryContext" and gid in context.ids
        with pytest.raises(NotFoundError):
            client.guidelines.get("gl-000000000000")
        with pytest.raises(InvalidInputError):
            client.rate("nonsense", helpful=True)
        with pytest.raises(AttributeError):
            client.skills.no_such_method
    finally:
        client.close()
        owner.close()


def test_a_client_call_carries_its_own_namespace(tmp_path):
    root = tmp_path / "root"
    owner = open_bank(root)
    try:
        from skillbank import Skillbank
        from skillbank.embeddings import HashEmbedding

        alice = Skillbank.open(root, embedding_function=HashEmbedding(), namespace="alice")
        try:
            alice.experiences.record(task="alice's private task", outcome="success", steps=[])
            assert [e.task for e in alice.experiences.list()] == ["alice's private task"]
        finally:
            alice.close()
        assert owner.experiences.list() == []  # the owner's namespace is "default"
        assert len(owner.experiences.list(namespace="alice")) == 1
    finally:
        owner.close()


def test_clients_fail_over_when_the_owner_is_killed(tmp_path):
    root = tmp_path / "root"
    owner = subprocess.Popen([sys.executable, "-c", """
import time
from workers.common import open_bank
bank = open_bank(__import__('os').environ['SKILLBANK_ROOT'])
print('ready', flush=True)
time.sleep(300)
"""], env=env_for(root), stdout=subprocess.PIPE, text=True)
    try:
        assert owner.stdout.readline().strip() == "ready"
        first, second = open_bank(root), open_bank(root)
        try:
            assert first.owner_pid == owner.pid == second.owner_pid
            before = first.experiences.record(task="written before the owner died",
                                              outcome="success", steps=[])
            os.kill(owner.pid, signal.SIGKILL)
            owner.wait(timeout=30)
            after = second.experiences.record(task="written after the owner died",
                                              outcome="success", steps=[])
            assert not second.is_remote  # it took the root over …
            assert {before, after} <= {e.id for e in first.experiences.list(namespace="*")}
            assert first.is_remote and first.owner_pid == os.getpid()  # … and serves the other
        finally:
            first.close()
            second.close()
    finally:
        owner.kill()
        owner.wait()


def test_a_foreign_process_on_the_socket_is_never_trusted(tmp_path):
    """A listener that does not know the root's secret cannot pose as the owner."""
    import socket as sockets

    from skillbank.errors import BusyError
    from skillbank.sharing import owner_lock
    from skillbank.sharing.endpoint import Endpoint, ensure_root_id, socket_path, write_endpoint

    root = tmp_path / "root"
    root.mkdir()
    lock = owner_lock(root)
    lock.acquire()  # a process that holds the root …
    path = str(socket_path(root))
    impostor = sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM)
    impostor.bind(path)
    impostor.listen(8)

    def answer() -> None:  # … but answers every request without the secret's proof
        while True:
            try:
                conn, _ = impostor.accept()
            except OSError:
                return
            conn.recv(65536)
            body = b'{"proof": "0", "members": {}}'
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                         + str(len(body)).encode() + b"\r\n\r\n" + body)
            conn.close()

    import threading

    threading.Thread(target=answer, daemon=True).start()
    write_endpoint(root, Endpoint(socket=path, token="f" * 64, pid=os.getpid(), root=str(root),
                                  started=time.time(), root_id=ensure_root_id(root)))
    try:
        with pytest.raises(BusyError) as caught:
            open_bank(root, lock_timeout=1)
        assert "does not know the root's secret" in str(caught.value)
        assert f"process {os.getpid()}" in str(caught.value)
    finally:
        impostor.close()
        lock.release()


def test_an_endpoint_file_others_can_read_is_ignored(tmp_path):
    from skillbank.sharing.endpoint import Endpoint, read_endpoint, write_endpoint

    root = tmp_path / "root"
    root.mkdir()
    write_endpoint(root, Endpoint(socket="/nowhere", token="a" * 64, pid=1, root=str(root),
                                  started=0.0))
    assert read_endpoint(root) is not None
    assert (root / ".owner.json").stat().st_mode & 0o777 == 0o600
    os.chmod(root / ".owner.json", 0o644)
    assert read_endpoint(root) is None


def test_the_wire_refuses_foreign_types():
    from skillbank.errors import InvalidInputError
    from skillbank.sharing import wire

    with pytest.raises(InvalidInputError):
        wire.decode({"$t": "model", "cls": "os:system", "fields": {}})
    with pytest.raises(InvalidInputError):
        wire.decode({"$t": "dc", "cls": "subprocess:Popen", "fields": {}})
    with pytest.raises(InvalidInputError):
        wire.encode(lambda: None)
    assert wire.decode(wire.encode({"$t": 1, "a": (1, 2)})) == {"$t": 1, "a": [1, 2]}


def test_reopening_a_root_in_one_process_after_another_process_wrote_is_fresh(tmp_path):
    """chromadb caches one system per path for the process: close must let go of it."""
    root = tmp_path / "root"
    bank = open_bank(root)
    bank.experiences.record(task="first task about invoices", outcome="success", steps=[])
    bank.context_for("invoices")
    bank.close()
    eid = python(root, RECORD.format(task="second task about invoices and refunds"))
    bank = open_bank(root)
    try:
        assert eid in bank.context_for("invoices and refunds", budget_tokens=2000).ids
        assert bank.experiences.count(namespace="*") == 2
    finally:
        bank.close()


# Soak: 4 processes, the owner SIGKILLed at random moments -------------------------------------
SOAK_SECONDS = float(os.environ.get("SKILLBANK_SOAK_SECONDS", "40"))


def soak_worker(root: Path, name: str, mode: str, seconds: float) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(REPO / "tests" / "workers" / "soak.py"),
                             str(root), name, mode, f"{seconds:.1f}"],
                            env=env_for(root), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


@pytest.mark.slow
def test_soak_owner_killed_at_random_loses_no_acknowledged_write(tmp_path):
    """2 MCP servers, a CLI loop and an agent loop on one root; every few seconds whichever
    process owns the root is SIGKILLed. Every acknowledged write survives, no client sees an
    error other than the documented retry, and files and index agree afterwards."""
    import random

    rng = random.Random(7)
    root = tmp_path / "root"
    write_skill(root / "skills", "db-migrations", "Run database schema migrations safely")
    deadline = time.monotonic() + SOAK_SECONDS
    workers = {name: (mode, soak_worker(root, name, mode, SOAK_SECONDS))
               for name, mode in (("mcp1", "mcp"), ("mcp2", "mcp"), ("cli", "cli"),
                                  ("agent", "agent"))}
    outputs: list[str] = []
    kills = 0
    restarted: list[subprocess.Popen] = []
    try:
        while time.monotonic() < deadline - 3:
            time.sleep(rng.uniform(3.0, 6.0))
            pid = owner_pid_or_none(root)
            if pid is None or not _alive(pid):
                continue
            os.kill(pid, signal.SIGKILL)
            kills += 1
            _, agent = workers["agent"]
            if agent.pid == pid:  # the agent process itself was the owner: start it again
                agent.wait(timeout=30)
                outputs.append(agent.stdout.read())
                restarted.append(agent)
                remaining = max(1.0, deadline - time.monotonic())
                workers["agent"] = ("agent", soak_worker(root, "agent", "agent", remaining))
        for name, (_, proc) in workers.items():
            out, err = proc.communicate(timeout=180)
            outputs.append(out)
            assert proc.returncode == 0, f"{name}: {err[-3000:]}"
    finally:
        for _, proc in workers.values():
            if proc.poll() is None:
                proc.kill()
    lines = [line.split(" ", 2) for out in outputs for line in out.splitlines() if line.strip()]
    acked = {parts[1]: parts[2] for parts in lines if parts[0] == "ACK"}
    errors = [" ".join(parts) for parts in lines if parts[0] == "ERR"]
    retries = sum(parts[0] == "RETRY" for parts in lines)
    print("soak lines:", {kind: sum(parts[0] == kind for parts in lines)
                          for kind in {parts[0] for parts in lines}})
    print(f"\nsoak: {SOAK_SECONDS:.0f} s, {kills} owner kills, {len(acked)} acknowledged writes, "
          f"{retries} documented retries, {len(errors)} errors")
    assert kills >= 3 and len(acked) >= 20
    assert not errors, errors[:5]

    bank = open_bank(root)
    try:
        assert not getattr(bank, "is_remote", False)
        listed = {e.id: e.task for e in bank.experiences.list(namespace="*", limit=100_000)}
        lost = {eid: task for eid, task in acked.items() if eid not in listed}
        assert not lost, f"{len(lost)} acknowledged writes lost: {list(lost.items())[:5]}"
        # Files and index agreed: rebuilding the index from the files changes which items it
        # holds in no way (ranked lists of near-identical tasks are not compared: their ties
        # fall differently in a rebuilt vector index).
        indexed = set(bank.index("experiences").ids())
        bank.reindex()
        assert set(bank.index("experiences").ids()) == indexed
        assert bank.experiences.count(namespace="*") == len(listed)
    finally:
        bank.close()


# Server mode (a Chroma server): each process sees the others' writes before its next read ----
def server_bank(root: Path, url: str, prefix: str):
    return open_bank(root, chroma_url=url, prefix=prefix)


def in_other_process(root: Path, url: str, prefix: str, body: str) -> str:
    return python(root, f"""
from workers.common import open_bank
bank = open_bank({str(root)!r}, chroma_url={url!r}, prefix={prefix!r})
try:
{body}
finally:
    bank.close()
""")


@pytest.fixture
def server_root(tmp_path, chroma_server):
    prefix = f"mp{os.getpid()}x{time.monotonic_ns() % 10**9}"
    return tmp_path / "root", chroma_server, prefix


def test_server_mode_a_process_that_opened_empty_sees_new_experiences(server_root):
    root, url, prefix = server_root
    bank = server_bank(root, url, prefix)
    try:
        assert bank.experiences.count(namespace="*") == 0
        assert bank.experiences.recall("rotate the api keys") == []
        eid = in_other_process(root, url, prefix, "    print(bank.experiences.record("
                               "task='rotate the api keys', outcome='success', steps=[]))")
        assert bank.experiences.count(namespace="*") == 1
        assert [h.id for h in bank.experiences.recall("rotate the api keys")] == [eid]
    finally:
        bank.close()


def test_server_mode_guideline_search_sees_rules_added_elsewhere(server_root):
    root, url, prefix = server_root
    bank = server_bank(root, url, prefix)
    try:
        assert bank.guidelines.search("deploying on friday") == []
        in_other_process(root, url, prefix,
                         "    bank.guidelines.add('Never deploy to production on Fridays.')")
        hits = bank.guidelines.search("deploying on friday")
        assert hits and "Fridays" in hits[0].record.text
    finally:
        bank.close()


def test_server_mode_a_skill_deleted_elsewhere_is_not_found(server_root):
    root, url, prefix = server_root
    write_skill(root / "skills", "pdf-tables", "Extract tables from PDF files")
    bank = server_bank(root, url, prefix)
    try:
        assert [h.name for h in bank.skills.search("tables in a pdf")] == ["pdf-tables"]
        in_other_process(root, url, prefix, "    bank.skills.delete('pdf-tables')")
        assert bank.skills.search("tables in a pdf") == []
    finally:
        bank.close()


def test_server_mode_concurrent_updates_are_not_lost(server_root):
    """update() reads the skill under the write lock: two processes updating different
    frontmatter keys of one skill at the same time both land, every time."""
    root, url, prefix = server_root
    write_skill(root / "skills", "release-notes", "Write release notes from merged PRs")
    bank = server_bank(root, url, prefix)
    other = subprocess.Popen([sys.executable, "-c", f"""
from workers.common import open_bank
bank = open_bank({str(root)!r}, chroma_url={url!r}, prefix={prefix!r})
print("ready", flush=True)
for n in range(15):
    bank.skills.update("release-notes", frontmatter={{"theirs-" + str(n): n}})
bank.close()
"""], env=env_for(root), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert other.stdout.readline().strip() == "ready", other.stderr.read()[-3000:]
        for n in range(15):
            bank.skills.update("release-notes", frontmatter={"ours-" + str(n): n})
        assert other.wait(timeout=120) == 0, other.stderr.read()[-3000:]
        frontmatter = bank.skills.load("release-notes").frontmatter
        missing = [f"{who}-{n}" for who in ("ours", "theirs") for n in range(15)
                   if f"{who}-{n}" not in frontmatter]
        assert not missing, missing
    finally:
        other.kill()
        bank.close()


def test_a_clients_own_distiller_reads_the_critique(tmp_path):
    """A process opened with its own distiller (e.g. a chat model) that turns out to be a client
    still has its critiques read by that distiller; the owner stores the rules it found."""
    from skillbank import Skillbank
    from skillbank.distill.base import CandidateRule
    from skillbank.embeddings import HashEmbedding

    class Scripted:
        def __init__(self) -> None:
            self.seen: list[str] = []

        def rules_from_critique(self, critique, *, task=None, response=None, score=None):
            self.seen.append(critique)
            return [CandidateRule(text="Use British spelling in user-facing text.",
                                  topic="style", when_to_use="writing for users")]

    root = tmp_path / "root"
    owner = open_bank(root)
    distiller = Scripted()
    client = Skillbank.open(root, embedding_function=HashEmbedding(), distiller=distiller)
    try:
        assert client.is_remote
        report = client.guidelines.learn("colour, not color, please", task="write the docs")
        assert distiller.seen == ["colour, not color, please"]
        added = [e for e in report.entries if e.action == "added"]
        assert added and added[0].text == "Use British spelling in user-facing text."
        assert owner.guidelines.get(added[0].guideline_id).text.startswith("Use British spelling")
    finally:
        client.close()
        owner.close()


def test_a_held_root_that_never_answers_gets_a_clear_busy_error(tmp_path):
    from skillbank.errors import BusyError
    from skillbank.sharing import owner_lock

    root = tmp_path / "root"
    root.mkdir()
    lock = owner_lock(root)
    lock.acquire()  # held, but nobody serves it
    try:
        started = time.monotonic()
        with pytest.raises(BusyError) as caught:
            open_bank(root, lock_timeout=1)
        assert time.monotonic() - started < 30
        message = str(caught.value)
        assert str(root) in message and "has not published its endpoint" in message
        # Nothing published: a process holding it with share=False, or an owner still starting
        # (no .owner.json to remove: e5d1116 stopped naming a missing file).
        assert "share=False" in message and "try again" in message
    finally:
        lock.release()


def test_a_client_has_its_own_background_writer(tmp_path):
    """The agent faces hand writes to `bank.background`; on a client they run in this process
    (as calls to the owner) and `flush()` / `close()` make them durable."""
    root = tmp_path / "root"
    owner = open_bank(root)
    client = open_bank(root)
    try:
        future = client.background.submit(client.experiences.record, task="written off the turn",
                                          outcome="success", steps=[], what="recording a run")
        assert client.flush(timeout=60)
        assert owner.experiences.get(future.result()).task == "written off the turn"
        late = client.background.submit(client.experiences.record, task="written at close",
                                        outcome="success", steps=[])
        client.close()
        assert owner.experiences.get(late.result()).task == "written at close"
    finally:
        client.close()
        owner.close()
