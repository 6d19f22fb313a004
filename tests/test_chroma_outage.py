"""A Chroma server that stops answering: reads degrade to keyword search with a note, writes
fail with a clear error, and both come back when the server does (issue 24). Before, every
call failed with httpx's ConnectError while the server was down.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import anyio
import pytest

from conftest import free_port, stop_process
from owner_client import bank_for
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding


class ChromaServer:
    def __init__(self, folder: Path) -> None:
        self.folder, self.port, self.proc = folder, free_port(), None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        chroma = Path(sys.executable).parent / "chroma"
        self.proc = subprocess.Popen(
            [str(chroma), "run", "--path", str(self.folder), "--host", "127.0.0.1", "--port",
             str(self.port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "ANONYMIZED_TELEMETRY": "False"})
        deadline = time.time() + 300
        while time.time() < deadline:
            try:
                urllib.request.urlopen(f"{self.url}/api/v2/heartbeat", timeout=1)
                return
            except OSError:
                assert self.proc.poll() is None, "chroma run exited early"
                time.sleep(0.2)
        pytest.fail("chroma run did not start within 300 s")

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)
            self.proc = None


@contextlib.contextmanager
def alice_bank_while_chroma_is_down(root: Path, server: "ChromaServer", rule: str, task: str):
    """A bank on `server` holding alice's `rule` and a run of `task`, then the server stopped:
    every search answers by keyword only (the adapters' outage-note tests)."""
    bank = Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                          chroma_url=server.url)
    try:
        bank.guidelines.add(rule, namespace="alice")
        bank.experiences.record(task=task, outcome="success", namespace="alice")
        server.stop()
        yield bank
    finally:
        bank.close()


@pytest.fixture
def own_chroma(tmp_path):
    if not (Path(sys.executable).parent / "chroma").exists():
        pytest.skip("chroma CLI not installed")
    server = ChromaServer(tmp_path / "chroma-data")
    server.start()
    yield server
    server.stop()


def test_search_answers_by_keyword_while_chroma_is_down(tmp_path, own_chroma):
    bank = Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                          include_bundled=False, chroma_url=own_chroma.url)
    try:
        bank.skills.save("sql-tuning", "Speed up a slow SQL query by reading its query plan.",
                         "# Steps\n")
        bank.skills.save("slide-deck", "Turn meeting notes into a short slide deck.", "# Steps\n")
        assert bank.skills.search("slow sql query plan", k=1)[0].why == "both"
        own_chroma.stop()
        hits = bank.skills.search("slow sql query plan", k=1)
        assert [h.name for h in hits] == ["sql-tuning"] and hits[0].why == "keyword"
        assert bank.search_mode() == "keyword"
        assert "Chroma server does not answer" in bank.index("skills").dense_error
        from skillbank.team.server import readiness

        ready, checks = readiness(bank)  # what a team worker's /readyz answers
        assert not ready and checks["chroma"].startswith(f"Chroma at {own_chroma.url}")
        # A guideline write is kept in its record (the file) and indexed when Chroma is back;
        # meanwhile a search answers by keyword, saying why (issue 24).
        gid = bank.guidelines.learn("Never put SQL in f-strings.").ids()[0]
        down = bank.guidelines.search("sql f-strings", k=1)
        assert [h.id for h in down] == [gid] and down.note.startswith("the Chroma server")
        own_chroma.start()  # same folder and port
        hits = bank.skills.search("slow sql query plan", k=1)
        assert hits[0].name == "sql-tuning" and hits[0].why == "both"
        assert bank.search_mode() == "hybrid"
        time.sleep(2.1)  # the guideline index retries its catch-up every 2 s
        bank.guidelines.learn("Never log secrets such as tokens.")  # writes work again
        assert gid in bank.index("guidelines").ids()  # indexed now that Chroma is back
        assert bank.guidelines.search("sql f-strings", k=1)[0].why == "both"
    finally:
        bank.close()


def test_keyword_reason_names_the_chroma_server_not_the_model(tmp_path, own_chroma):
    """While the Chroma server does not answer, `keyword_reason()` says so; the MCP hint
    blamed a missing embedding model for it (session 24). In process: with a Chroma server,
    each process opens the root itself (no owner to be a client of); the MCP test below is
    another process."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "skillbank.toml").write_text(f'chroma_url = "{own_chroma.url}"\n')
    with bank_for(tmp_path, False) as bank:
        bank.skills.save("sql-tuning", "Speed up a slow SQL query by reading its query plan.",
                         "# Steps\n")
        assert bank.skills.search("slow sql query plan", k=1)[0].why == "both"
        assert bank.search_mode() == "hybrid" and bank.keyword_reason() == ""
        own_chroma.stop()
        assert bank.skills.search("slow sql query plan", k=1)[0].why == "keyword"
        reason = bank.keyword_reason()
        assert bank.search_mode() == "keyword"
        assert "Chroma server does not answer" in reason and "model" not in reason, reason
        own_chroma.start()  # same folder and port: hybrid again once a search reaches it
        deadline = time.monotonic() + 120
        while bank.skills.search("slow sql query plan", k=1)[0].why != "both":
            assert time.monotonic() < deadline, bank.keyword_reason()
            time.sleep(0.5)
        assert bank.search_mode() == "hybrid" and bank.keyword_reason() == ""


@pytest.mark.slow  # a stdio subprocess
async def test_the_mcp_hint_names_the_chroma_server_not_the_model(tmp_path, own_chroma):
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from conftest import write_skill
    from test_mcp_transports import base_env

    skills = tmp_path / "skills"
    write_skill(skills, "pdf-merge", "Merge several PDF files into one document")
    root = tmp_path / "root"
    root.mkdir()
    (root / "skillbank.toml").write_text(f'chroma_url = "{own_chroma.url}"\n')
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "skillbank.mcp_server", "--root", str(root), "--no-bundled",
              "--skills-dir", str(skills)], env=base_env(), cwd=str(tmp_path))
    async with Client(stdio_client(params), read_timeout_seconds=120) as client:
        deadline = time.monotonic() + 120
        while True:  # the first index embeds behind keyword search (or a snapshot answers
            found = (await client.call_tool("find_skills", {"task": "merge pdf files"})
                     ).structured_content  # before the bank is open, loader.py)
            if found["search_mode"] == "hybrid":
                break
            assert "Chroma" not in found["hint"], found["hint"]  # it is up: never blamed
            assert time.monotonic() < deadline, found
            await anyio.sleep(0.5)
        # Now or after one more search, the vectors are held in this process and ranked there
        # (dense_live): the server is not asked again until a skill changes. One does.
        await client.call_tool("find_skills", {"task": "merge pdf files"})
        own_chroma.stop()
        write_skill(skills, "pdf-merge", "Merge several PDF files into one PDF document")
        found = (await client.call_tool("find_skills", {"task": "merge pdf files"})
                 ).structured_content
        assert found["skills"][0]["name"] == "pdf-merge" and found["search_mode"] == "keyword"
        assert "Chroma server does not answer" in found["hint"], found["hint"]
        assert "embedding model" not in found["hint"], found["hint"]


def test_experience_recall_and_the_block_answer_by_keyword_while_chroma_is_down(
        tmp_path, own_chroma):
    """Session 16: outside team mode, recall asked Chroma for its dense side unguarded and
    raised httpx's ConnectError while the server was down, and with it the whole memory block
    (skills and guidelines already answered by keyword)."""
    bank = Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                          include_bundled=False, chroma_url=own_chroma.url)
    try:
        for task in ["Rotate the kubernetes secrets of the billing cluster",
                     "Write the quarterly revenue report", "Fix the flaky login test",
                     "Migrate the users table to the new schema"]:
            bank.experiences.record(task=task, outcome="success")
        bank.guidelines.learn("Never rotate secrets on a Friday.")
        own_chroma.stop()
        hits = bank.experiences.recall("rotate the kubernetes secrets", count_use=False)
        assert [h.record.task for h in hits][:1] == [
            "Rotate the kubernetes secrets of the billing cluster"]
        assert not hits.dense_complete and "does not answer" in hits.note
        block = bank.context_for("Rotate the kubernetes secrets")
        assert any(i.startswith("exp-") for i in block.ids)
        assert any(i.startswith("gl-") for i in block.ids)
    finally:
        bank.close()


def test_a_bank_opened_while_chroma_is_down_answers_by_keyword_from_its_files(
        tmp_path, own_chroma):
    """A server's bank opened on a `chroma run` server that was down could not open at all
    (its sync read the index from Chroma), so nothing answered; a bank opened before the
    outage answered by keyword. The skill files are the truth: it opens, answers by keyword from them, says
    why, refuses a skill write clearly, and once the server is back indexes what it read and
    searches hybrid again."""
    from skillbank.index_outage import ChromaUnavailableError

    skill = tmp_path / "root" / "skills" / "sql-tuning"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: sql-tuning\ndescription: Speed up a slow SQL "
                                    "query by reading its query plan.\n---\n# Steps\n")
    own_chroma.stop()
    bank = Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                          include_bundled=False, chroma_url=own_chroma.url,
                          start_without_chroma=True)  # what `skillbank serve` opens with
    try:
        hits = bank.skills.search("slow sql query plan", k=1)
        assert [(h.name, h.why) for h in hits] == [("sql-tuning", "keyword")]
        assert not hits.dense_complete and bank.search_mode() == "keyword"
        assert bank.index("skills").dense_error.startswith("the Chroma server does not answer")
        assert "skill:sql-tuning" in bank.context_for("slow sql query plan").ids
        bank.experiences.record(task="Tune the slow orders query", outcome="success")
        with pytest.raises(ChromaUnavailableError, match="check that it is running"):
            bank.skills.save("slide-deck", "Turn meeting notes into a slide deck.", "# Steps\n")
        own_chroma.start()
        deadline = time.monotonic() + 60
        while bank.skills.search("slow sql query plan", k=1)[0].why != "both" or \
                bank.search_mode() != "hybrid":
            index = bank.index("skills")
            assert time.monotonic() < deadline, (index.dense_error, index.pending)
            time.sleep(0.5)
        assert "sql-tuning" in bank.index("skills").ids()
        bank.skills.save("slide-deck", "Turn meeting notes into a slide deck.", "# Steps\n")
        assert bank.skills.search("meeting notes slide deck", k=1)[0].name == "slide-deck"
    finally:
        bank.close()


def _skill(root: Path, name: str, description: str) -> None:
    folder = root / "skills" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n# Steps\n")


def _three_skills_then_detached(root: Path, server: ChromaServer) -> Skillbank:
    """Three skills embedded in Chroma, then a bank opened while the server is down."""
    _skill(root, "sql-tuning", "Speed up a slow SQL query by reading its query plan.")
    _skill(root, "csv-clean", "Clean a messy CSV file before analysis.")
    _skill(root, "pdf-tables", "Extract tables from PDF documents.")
    opts = dict(embedding_function=HashEmbedding(), include_bundled=False, chroma_url=server.url)
    with Skillbank.open(root, **opts) as bank:  # all three embedded in Chroma
        deadline = time.monotonic() + 120
        while bank.index("skills").pending:
            assert time.monotonic() < deadline, "the skills were never embedded"
            time.sleep(0.2)
        assert sorted(bank.index("skills").ids()) == ["csv-clean", "pdf-tables", "sql-tuning"]
    server.stop()
    bank = Skillbank.open(root, start_without_chroma=True, **opts)
    assert bank.search_mode() == "keyword"
    return bank


def _until_attached(bank: Skillbank) -> None:
    deadline = time.monotonic() + 60
    while bank.search_mode() != "hybrid" or bank.index("skills").pending:
        bank.skills.search("tables in a pdf", k=1)  # a search reaches the server again
        assert time.monotonic() < deadline, bank.index("skills").dense_error
        time.sleep(0.5)


def test_a_skill_removed_while_chroma_is_down_leaves_at_once_and_from_chroma_later(
        tmp_path, own_chroma):
    """Session 20 left: a worker serving by keyword (started while its Chroma server was down)
    raised the Chroma error from the sync after a skill folder was removed, where a changed
    skill was staged and served. Now the removal leaves keyword search at once and reaches
    Chroma when the server answers: also for a skill edited first (review: it came back after
    attach); a skill removed and written anew meanwhile stays."""
    import shutil

    root = tmp_path / "root"
    bank = _three_skills_then_detached(root, own_chroma)
    try:
        _skill(root, "sql-tuning", "Speed up a slow SQL query by reading EXPLAIN ANALYZE.")
        assert bank.skills.sync().changed == ["sql-tuning"]  # staged, never in Chroma
        shutil.rmtree(root / "skills" / "sql-tuning")
        shutil.rmtree(root / "skills" / "pdf-tables")
        report = bank.skills.sync()  # raised the Chroma error before
        assert sorted(report.removed) == ["pdf-tables", "sql-tuning"]
        _skill(root, "pdf-tables", "Pull every table out of a PDF report into CSV files.")
        assert bank.skills.sync().added == ["pdf-tables"]
        assert "sql-tuning" not in bank.skills.names()
        assert [h.name for h in bank.skills.search("slow sql query plan")] != ["sql-tuning"]
        own_chroma.start()
        _until_attached(bank)
        held = bank.index("skills")._collection.get(ids=["sql-tuning", "pdf-tables"])["ids"]
        assert held == ["pdf-tables"]  # the removed one is gone from Chroma, the new one kept
        assert "Pull every table" in bank.skills.load("pdf-tables").description
        assert "sql-tuning" not in bank.skills.names()
    finally:
        bank.close()


def test_a_removal_that_fails_again_at_attach_waits_for_the_next_one(tmp_path, own_chroma):
    """Review: the server answering and then failing on the removal made a search raise, lost
    the removal (Chroma kept the skill for good) and skipped embedding what was staged."""
    import shutil

    from skillbank.index_outage import ChromaUnavailableError

    root = tmp_path / "root"
    bank = _three_skills_then_detached(root, own_chroma)
    try:
        shutil.rmtree(root / "skills" / "sql-tuning")
        assert bank.skills.sync().removed == ["sql-tuning"]
        index, failed = bank.index("skills"), []
        real_delete = index.delete

        def delete_once_failing(ids):
            if not failed:
                failed.append(list(ids))
                raise ChromaUnavailableError("the Chroma server does not answer (test)")
            return real_delete(ids)

        index.delete = delete_once_failing
        own_chroma.start()
        index._attach_after = 0.0
        hits = bank.skills.search("clean a messy csv file", k=1)  # raised before
        assert failed == [["sql-tuning"]] and hits[0].name == "csv-clean"
        assert index._detached and index._doomed == {"sql-tuning"}
        index._attach_after = 0.0
        _until_attached(bank)
        assert index._collection.get(ids=["sql-tuning"])["ids"] == []
    finally:
        bank.close()


def test_a_reindex_whose_server_died_after_the_skills_fails_instead_of_saying_added(
        tmp_path, own_chroma):
    """hunt-chroma #4, session 29: a server that died once the skills were rebuilt made the
    guideline and experience syncs' failures warnings, and `skillbank reindex` exited 0 with
    "86 added" for memories it had not written. The server is stopped for real, right after the
    skills phase (the memory's own sync is where the test steps in, so the timing is sure)."""
    from skillbank.index_outage import ChromaUnavailableError

    bank = Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                          include_bundled=False, chroma_url=own_chroma.url)
    try:
        bank.skills.save("sql-tuning", "Speed up a slow SQL query by reading its query plan.",
                         "# Steps\n")
        bank.guidelines.learn("Never put SQL in f-strings.")
        bank.experiences.record(task="Tune the slow orders query", outcome="success")
        guidelines = bank.guidelines
        real_sync = guidelines.sync

        def server_dies_first():
            own_chroma.stop()
            return real_sync()

        guidelines.sync = server_dies_first
        with pytest.raises(ChromaUnavailableError) as failed:
            bank.reindex()
        assert "reindex did not rebuild the guidelines index" in str(failed.value)
        assert "does not answer" in str(failed.value)
        guidelines.sync = real_sync
        own_chroma.start()  # same folder and port: a reindex now rebuilds everything
        report = bank.reindex()
        assert report["guidelines"].added and report["experiences"].added, report
    finally:
        bank.close()


def test_an_experience_recorded_while_chroma_is_down_is_recalled_by_keyword(tmp_path,
                                                                            own_chroma):
    """A bank that had reached its server, then recorded an experience while it was down:
    the record was journaled, but no recall found it until the server came back, however long
    that took (the next search detached the index with a keyword side read before the write;
    session 29's note, reproduced in session 31). Now the write detaches the index and stages
    the record: recalled by keyword at once, and by the hybrid search once the server answers.
    In process only: on a Chroma server no process owns the root for others (each opens the
    index itself), so there is no client of an owner to route the call through."""
    bank = Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                          include_bundled=False, chroma_url=own_chroma.url)
    try:
        bank.experiences.record(task="Rotate the nginx TLS certificate", outcome="success")
        own_chroma.stop()
        eid = bank.experiences.record(task="Defragment the zookeeper snapshot volume",
                                      outcome="success", feedback="Stop zookeeper first.")
        hits = bank.experiences.recall("zookeeper snapshot defragment", count_use=False)
        assert [h.id for h in hits][:1] == [eid] and not hits.dense_complete, hits
        own_chroma.start()
        deadline = time.monotonic() + 300  # bounded only against a hang: nothing is timed
        while getattr(hits := bank.experiences.recall("zookeeper snapshot defragment",
                                                      count_use=False), "note", None):
            assert time.monotonic() < deadline, hits.note
            time.sleep(0.5)
        assert [h.id for h in hits][:1] == [eid], hits
    finally:
        bank.close()


def test_a_skill_create_refused_while_chroma_is_down_says_the_skill_was_not_saved(
        tmp_path, own_chroma):
    """hunt-chromahttp #3, session 34: a skill create refused while the server was down failed
    with "... so this memory's index could not be read (skillbank_skills) ...", a failed read
    that named neither the skill nor that it was not saved (docs/team.md §5: the message says
    what was not written); and an experience recall's note said "the Chroma server does not
    answer" twice, one wording nested in the other. In process only: on a Chroma server each
    process opens the root itself, with no owner to be a client of."""
    from skillbank.index_outage import ChromaUnavailableError

    bank = Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                          include_bundled=False, chroma_url=own_chroma.url)
    try:
        bank.skills.save("pg-backup", "Back up a postgres database with pg_dump.", "# Steps\n")
        bank.experiences.record(task="Back up the orders postgres database", outcome="success")
        assert [h.name for h in bank.skills.search("postgres backup", k=1)] == ["pg-backup"]
        own_chroma.stop()
        with pytest.raises(ChromaUnavailableError) as refused:
            bank.skills.create("slide-deck", "Turn meeting notes into a slide deck.", "# S\n")
        message = str(refused.value)
        assert message.startswith("skill 'slide-deck' was not saved (nothing was written)"), \
            message
        assert "check that it is running" in message
        assert not (tmp_path / "root" / "skills" / "slide-deck").exists()
        bank.experiences.record(task="Restore the orders database", outcome="success")  # kept
        hits = bank.experiences.recall("back up the orders postgres database", count_use=False)
        assert not hits.dense_complete and hits.note.count("does not answer") == 1, hits.note
    finally:
        bank.close()


def test_a_skill_save_or_update_while_chroma_is_down_says_what_was_written(tmp_path, own_chroma):
    """Review 2 #2, session 34: `skills.save` (the MCP `save_skill` and adapters' save tool)
    of a new skill while the server was down still failed with the bare "... so this memory's
    index could not be read (skillbank_skills) ...": it read the index before the code the
    create fix wrapped. And `update` (and `save` of a skill the bank has), which write the file
    before indexing it, said "the change was not written to the index", as if it were lost.
    Now save says "was not saved (nothing was written)" as create does, and an update says the
    file was written but not indexed; the next sync indexes it. In process only (as above)."""
    from skillbank.index_outage import ChromaUnavailableError

    bank = Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                          include_bundled=False, chroma_url=own_chroma.url)
    try:
        bank.skills.save("pg-backup", "Back up a postgres database with pg_dump.", "# Steps\n")
        own_chroma.stop()
        with pytest.raises(ChromaUnavailableError) as refused:
            bank.skills.save("slide-deck", "Turn meeting notes into a slide deck.", "# S\n")
        message = str(refused.value)
        assert message.startswith("skill 'slide-deck' was not saved (nothing was written)"), \
            message
        assert not (tmp_path / "root" / "skills" / "slide-deck").exists()
        for change in (lambda: bank.skills.update("pg-backup", body="# Use zstd compression\n"),
                       lambda: bank.skills.save("pg-backup", "Back up postgres with pg_dump.",
                                                "# Use zstd compression\n")):
            with pytest.raises(ChromaUnavailableError) as unindexed:
                change()
            message = str(unindexed.value)
            path = tmp_path / "root" / "skills" / "pg-backup" / "SKILL.md"
            assert message.startswith(f"skill 'pg-backup' was written to {path} but not "
                                      "indexed"), message
            assert "next sync" in message and "zstd" in path.read_text(encoding="utf-8")
        own_chroma.start()
        bank.sync()
        assert [h.name for h in bank.skills.search("zstd compression", k=1)] == ["pg-backup"]
    finally:
        bank.close()
