"""A Chroma server that lost a bank's collections while the bank is open (hunt-chroma #1,
session 29): restarted on an empty path, or the collections deleted.

The open bank kept each collection's id for its whole life, so every later call failed with
chromadb's raw "Collection [...] does not exist" until the process restarted; `sync()` saw
nothing to do and `reindex()` failed the same way. The files are the truth: the bank looks the
collection up again and rebuilds it from them, at the next call, at `sync()` and at
`reindex()`; the call that meets the loss answers (by keyword) or fails with a clear error.

In process, and through a real MCP stdio session (another process): with a Chroma server each
process opens the root itself, so there is no owner to be a client of (as in
test_chroma_outage.py).
"""

from __future__ import annotations

import sys
import time

import anyio
import pytest

from owner_client import bank_for
from skillbank.index_ownership import database_for, deployment_of
from skillbank.settings import load_settings
from test_chroma_outage import own_chroma  # noqa: F401  (a fixture: a server of our own)

KINDS = ("skills", "experiences", "guidelines")


def _on_server(tmp_path, chroma_server) -> None:
    """The root of `bank_for`, configured onto the test's Chroma server (both ways: the owner
    process reads the same file)."""
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    (root / "skillbank.toml").write_text(f'chroma_url = "{chroma_server}"\n', encoding="utf-8")


def _drop_collections(tmp_path, chroma_server) -> None:
    """What a server restarted on an empty path, or an operator, does: the root's collections
    are gone from its database (someone else's client, as in the hunt)."""
    import chromadb

    database = database_for(deployment_of(load_settings(tmp_path / "root"), shared=True))
    host, port = chroma_server.rsplit("//", 1)[1].split(":")
    other = chromadb.HttpClient(host=host, port=int(port), database=database)
    names = {c.name for c in other.list_collections()}
    assert {f"skillbank_{kind}" for kind in KINDS} <= names, names  # the bank's, as assumed
    for kind in KINDS:
        other.delete_collection(f"skillbank_{kind}")


def _fill(bank) -> tuple[str, str]:
    bank.skills.save("pg-backup", "Back up a postgres database with pg_dump.", "# Steps\n")
    experience = bank.experiences.record(task="Back up the orders postgres database",
                                         outcome="success")
    guideline = bank.guidelines.learn("Always compress database dumps with gzip.").ids()[0]
    return experience, guideline


def _found(bank) -> dict[str, list[tuple[str, str]]]:
    return {
        "skills": [(h.name, h.why) for h in bank.skills.search("postgres database backup",
                                                               k=1)],
        "experiences": [(h.id, h.why) for h in bank.experiences.recall(
            "back up the orders postgres database", k=1, count_use=False)],
        "guidelines": [(h.id, h.why) for h in bank.guidelines.search(
            "compress database dumps gzip", k=1)],
    }


def _everything(experience: str, guideline: str) -> dict[str, list[tuple[str, str]]]:
    return {"skills": [("pg-backup", "both")], "experiences": [(experience, "both")],
            "guidelines": [(guideline, "both")]}


def test_the_next_call_after_the_collections_are_gone_finds_everything_again(
        tmp_path, chroma_server):
    _on_server(tmp_path, chroma_server)
    with bank_for(tmp_path, False) as bank:
        experience, guideline = _fill(bank)
        assert _found(bank) == _everything(experience, guideline)
        _drop_collections(tmp_path, chroma_server)
        # The call that meets the loss: an answer, or the clear error; never chromadb's own.
        for kind, call in (("skills", lambda: bank.skills.search("postgres backup", k=1)),
                           ("experiences", lambda: bank.experiences.recall("orders backup")),
                           ("guidelines", lambda: bank.guidelines.search("compress dumps"))):
            try:
                call()
            except Exception as exc:  # noqa: BLE001 - which one is what is checked
                assert "NotFound" not in type(exc).__name__ and "does not exist" not in str(exc)
                assert f"skillbank_{kind}" in str(exc) and "was gone" in str(exc), exc
        # The next ones: rebuilt from the files, found by their vectors too; writes go on.
        assert _found(bank) == _everything(experience, guideline)
        later = bank.experiences.record(task="Restore the orders database from a dump",
                                        outcome="success")
        assert [h.id for h in bank.experiences.recall("restore orders database from a dump",
                                                      k=1, count_use=False)] == [later]


def test_the_call_that_meets_the_loss_answers_by_keyword_from_what_the_process_holds(
        tmp_path, chroma_server):
    """hunt-chromahttp #2, session 34: the search that met a collection gone from the server
    answered [] (experiences and guidelines with a note saying "the Chroma server does not
    answer", which was false; skills silently), though exact matches were in the files: the
    index forgot what it held before the search fell back to keyword, and read the new, empty
    collection. Now it answers by keyword from what the process holds, saying the collection
    was gone; the next call is hybrid again. In process only: on a Chroma server each process
    opens the root itself, with no owner to be a client of (this module's docstring)."""
    from skillbank.index_outage import CHROMA_DOWN

    _on_server(tmp_path, chroma_server)
    with bank_for(tmp_path, False) as bank:
        experience, guideline = _fill(bank)
        assert _found(bank) == _everything(experience, guideline)
        _drop_collections(tmp_path, chroma_server)
        skills = bank.skills.search("postgres database backup", k=1)
        assert [(h.name, h.why) for h in skills] == [("pg-backup", "keyword")]
        mode = bank.keyword_reason()
        assert bank.search_mode() == "keyword" and "skillbank_skills was gone" in mode and CHROMA_DOWN not in mode, mode
        recalled = bank.experiences.recall("back up the orders postgres database", k=1,
                                           count_use=False)
        assert [(h.id, h.why) for h in recalled] == [(experience, "keyword")]
        assert "skillbank_experiences was gone" in recalled.note, recalled.note
        assert CHROMA_DOWN not in recalled.note and not recalled.dense_complete
        rules = bank.guidelines.search("compress database dumps gzip", k=1)
        assert [(h.id, h.why) for h in rules] == [(guideline, "keyword")]
        assert "skillbank_guidelines was gone" in rules.note, rules.note
        assert CHROMA_DOWN not in rules.note and not rules.dense_complete
        assert _found(bank) == _everything(experience, guideline)  # rebuilt: hybrid again
        assert bank.search_mode() == "hybrid"


def test_a_server_restarted_on_an_empty_path_gets_the_database_and_collections_again(
        tmp_path, own_chroma):  # noqa: F811
    """The hunt's first case: the server lost the deployment's database too, so looking the
    collection up again had to make the database first ("Database [...] does not exist")."""
    _on_server(tmp_path, own_chroma.url)
    with bank_for(tmp_path, False) as bank:
        experience, guideline = _fill(bank)
        own_chroma.stop()
        own_chroma.folder = tmp_path / "empty-chroma"  # same port, nothing in it
        own_chroma.start()
        for call in (lambda: bank.skills.search("postgres backup", k=1),
                     lambda: bank.experiences.recall("orders backup"),
                     lambda: bank.guidelines.search("compress dumps")):
            try:
                call()
            except Exception as exc:  # noqa: BLE001 - which one is what is checked
                assert "does not exist" not in str(exc) and "was gone" in str(exc), exc
        assert _found(bank) == _everything(experience, guideline)


@pytest.mark.parametrize("repair", ["sync", "reindex"])
def test_sync_and_reindex_rebuild_collections_the_server_lost(tmp_path, chroma_server, repair):
    _on_server(tmp_path, chroma_server)
    with bank_for(tmp_path, False) as bank:
        experience, guideline = _fill(bank)
        _drop_collections(tmp_path, chroma_server)
        report = getattr(bank, repair)()  # before any other call meets the loss
        assert report["skills"].added == ["pg-backup"], report
        assert report["guidelines"].added == [guideline], report
        assert experience in report["experiences"].added, report
        assert _found(bank) == _everything(experience, guideline)


def test_sync_after_a_search_met_the_loss_rebuilds_the_collection(tmp_path, chroma_server):
    """Review 2 #1, session 34: after a search met the collection gone (it keeps the old
    mirror to answer by keyword), `bank.sync()` cleared the index's `gone` mark without
    forgetting that mirror, compared the files with it and embedded nothing: the server's
    collection stayed empty, and every later search was keyword-only with no note while
    `search_mode()` said hybrid, until the process restarted. Now the sync rebuilds it. In
    process only (this module's docstring: no owner to be a client of on a Chroma server)."""
    import chromadb

    _on_server(tmp_path, chroma_server)
    with bank_for(tmp_path, False) as bank:
        experience, guideline = _fill(bank)
        _drop_collections(tmp_path, chroma_server)
        rules = bank.guidelines.search("compress database dumps gzip", k=1)
        assert [(h.id, h.why) for h in rules] == [(guideline, "keyword")]  # met the loss
        report = bank.sync()
        assert report["guidelines"].added == [guideline], report
        assert _found(bank) == _everything(experience, guideline)
        database = database_for(deployment_of(load_settings(tmp_path / "root"), shared=True))
        host, port = chroma_server.rsplit("//", 1)[1].split(":")
        other = chromadb.HttpClient(host=host, port=int(port), database=database)
        assert other.get_collection("skillbank_guidelines").count() > 0



def test_a_sync_while_the_server_is_down_keeps_what_keyword_search_answers_from(
        tmp_path, own_chroma):  # noqa: F811
    """Review 3, session 34: a search met the collection gone (it keeps the old mirror to
    answer by keyword), then the server stopped and `bank.sync()` ran: the mirror was dropped
    though nothing could be rebuilt, and the rule was found by no search until the server was
    back. Now it is dropped only once the server answers; the rebuild follows then."""
    _on_server(tmp_path, own_chroma.url)
    (tmp_path / "root" / "skillbank.toml").write_text(
        f'chroma_url = "{own_chroma.url}"\nchroma_timeout = 2\n', encoding="utf-8")
    with bank_for(tmp_path, False) as bank:
        experience, guideline = _fill(bank)
        _drop_collections(tmp_path, own_chroma.url)
        rules = bank.guidelines.search("compress database dumps gzip", k=1)
        assert [(h.id, h.why) for h in rules] == [(guideline, "keyword")]  # met the loss
        own_chroma.stop()
        report = bank.sync()  # review 4: said "unchanged" and nothing else
        assert any(f.code == "index-unavailable" and "was not rebuilt" in f.message
                   for f in report["guidelines"].findings), report["guidelines"].findings
        rules = bank.guidelines.search("compress database dumps gzip", k=1)
        assert [(h.id, h.why) for h in rules] == [(guideline, "keyword")]  # was: []
        own_chroma.start()
        deadline = time.monotonic() + 60
        while _found(bank) != _everything(experience, guideline):  # back: rebuilt, hybrid
            assert time.monotonic() < deadline, _found(bank)
            time.sleep(0.5)


def test_threads_meeting_a_lost_collection_rebuild_it_once_and_all_answer(
        tmp_path, chroma_server, monkeypatch):
    """Review 4, session 34: six threads calling a memory whose collection was lost each
    forgot and rebuilt its index, five of them in the middle of another's rebuild. Now one
    rebuilds it; the others wait for it and answer from it. In process only (as above)."""
    import threading

    import skillbank.index_gone as gone

    _on_server(tmp_path, chroma_server)
    with bank_for(tmp_path, False) as bank:
        _, guideline = _fill(bank)
        _drop_collections(tmp_path, chroma_server)
        bank.guidelines.search("compress database dumps gzip", k=1)  # meets the loss
        memory, syncs = bank._memories["guidelines"], []
        real_sync = memory.sync
        monkeypatch.setattr(memory, "sync", lambda *a, **k: syncs.append(1) or real_sync(*a, **k))
        forgets, real_forget = [], gone._forget
        monkeypatch.setattr(gone, "_forget", lambda index: forgets.append(1) or real_forget(index))
        start, answers = threading.Barrier(6), []

        def search() -> None:
            start.wait()
            answers.append([h.id for h in bank.guidelines.search("compress database dumps gzip",
                                                                   k=1)])

        threads = [threading.Thread(target=search) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert len(syncs) == 1 and len(forgets) == 1, (syncs, forgets)  # was: 6 and 6
        assert answers == [[guideline]] * 6, answers

def test_a_journal_recall_that_meets_the_loss_says_the_collection_was_gone(
        tmp_path, chroma_server, monkeypatch):
    """Review 2 #5, session 34: team mode's experience recall on a collection gone from a
    server that answers (the PostgreSQL journal's full-text branch) noted "the Chroma server
    does not answer", which was false; guideline search already said the collection was gone.
    The journal's search is stood in for (files mode has none). In process only (as above)."""
    import skillbank.memories.experiences.memory as experiences
    from skillbank.index_outage import CHROMA_DOWN
    from skillbank.records import Hits

    monkeypatch.setattr(experiences, "recall_by_journal_text",
                        lambda memory, task, *a, **k: Hits())
    _on_server(tmp_path, chroma_server)
    with bank_for(tmp_path, False) as bank:
        _fill(bank)
        _drop_collections(tmp_path, chroma_server)
        hits = bank.experiences.recall("back up the orders postgres database", k=1,
                                       count_use=False)
        assert "skillbank_experiences was gone" in hits.note, hits.note
        assert "journal's own full-text search" in hits.note and CHROMA_DOWN not in hits.note


@pytest.mark.slow  # a stdio subprocess
async def test_an_mcp_server_whose_chroma_lost_the_collections_recovers_without_a_restart(
        tmp_path, chroma_server):
    """Over MCP the tools answered a bare "Error executing tool" until the server restarted."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from test_mcp_transports import base_env

    _on_server(tmp_path, chroma_server)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "skillbank.mcp_server", "--root", str(tmp_path / "root"), "--no-bundled"],
        env=base_env(), cwd=str(tmp_path))
    task = "Back up the orders postgres database"
    async with Client(stdio_client(params), read_timeout_seconds=120) as client:
        recorded = (await client.call_tool("record_experience", {
            "task": task, "outcome": "success"})).structured_content["id"]
        await client.call_tool("learn_from_critique", {
            "critique": "Always compress database dumps with gzip."})
        _drop_collections(tmp_path, chroma_server)
        for tool, arguments in (("recall_experiences", {"task": task}),
                                ("memory_context", {"task": task})):
            answer = await client.call_tool(tool, arguments)
            shown = str(answer.content)
            assert "does not exist" not in shown and (
                not answer.is_error or "was gone" in shown), shown
        deadline = time.monotonic() + 120  # the next call rebuilds; generous under load
        while True:
            found = (await client.call_tool("recall_experiences", {"task": task})
                     ).structured_content
            if [e["id"] for e in found["experiences"]] == [recorded] \
                    and found["search_mode"] == "hybrid":
                break
            assert time.monotonic() < deadline, found
            await anyio.sleep(0.5)
        block = (await client.call_tool("memory_context", {"task": task})).structured_content
        assert recorded in block["ids"], block


def test_a_sync_asks_a_silent_server_about_a_lost_collection_once(monkeypatch):
    """Last read of session 34: when the lookup of a lost collection's server failed,
    `recheck_all` asked it again at once, two `chroma_timeout`s of a frozen server in a sync.
    Now once; the kind is reported as not rebuilt. (The lookup is stood in for: what is counted
    is how often it is made.)"""
    import threading
    from types import SimpleNamespace

    import skillbank.index_gone as gone

    asked: list[str] = []
    monkeypatch.setattr(gone, "recheck", lambda index: asked.append(index.name) or False)
    index = SimpleNamespace(name="skillbank_guidelines", shared=True, gone=True,
                            _lock=threading.RLock(), _quiet=lambda: False)
    bank = SimpleNamespace(_guard=threading.RLock(), _indexes={"guidelines": index})
    assert gone.recheck_all(bank) == ["guidelines"]
    assert asked == ["skillbank_guidelines"] and index.gone  # was: asked twice
