"""Body-aware ranking, metadata-only disclosure (#26, item 3).

A skill is embedded as its summary ("name: description") and up to eight sections of its body;
ranking fuses a third side, each skill's best cosine over those texts, while the fit ("does any
skill fit?"), the hits and the catalog stay on the summary. The library here is a long runbook
whose seventh section alone names the task (past the 3,000 characters the keyword side reads,
under a heading that does not name it), beside skills whose descriptions are about nearby work.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest
from mcp import Client

from conftest import write_skill
from skillbank import Skillbank
from skillbank.memories.skills import index_item
from skillbank.memories.skills import library as skill_library
from test_multiprocess import env_for

CHORES = [
    ("Disk space", "When a node's root volume passes eighty percent, clear the journald archive, "
     "prune dangling container images and remove build caches older than two weeks. Check that "
     "the monitoring alert clears within ten minutes; if it does not, page the storage owner."),
    ("Log rotation", "Application logs rotate daily and are compressed after one day. Confirm "
     "the logrotate configuration still matches every service directory, and that no service "
     "writes to a file outside the rotated paths, otherwise the disk fills again quietly."),
    ("Restore drill", "Once a month pick a random database snapshot, restore it into the staging "
     "cluster, run the smoke suite against it and record how long the whole restore took. "
     "A drill that fails is an incident of its own and gets a ticket."),
    ("Dependency upgrades", "Merge the automated dependency pull requests in small groups, one "
     "service at a time, watching error rates for an hour after each group before the next. "
     "Major versions wait for the weekly planning meeting."),
    ("On-call handover", "The outgoing engineer writes a short note: open alerts, anything "
     "silenced and why, ongoing migrations, and risky deploys planned for the coming week. "
     "The incoming engineer acknowledges it in the channel."),
    ("Cost report", "Export last month's cloud bill by team tag, compare it with the month "
     "before, and flag any service whose spend grew by more than a fifth with a one-line reason "
     "from its owners."),
]
MARKER = "Ask Okonkwo-Vasquez for the vault path."  # in the body only: never disclosed by search
QUARTER = ("Once a quarter", "Renew the TLS certificates on the public load balancer before "
           "they expire: request new ones from the certificate authority, install them on the "
           f"HTTPS listeners, and check the expiry date browsers now see. {MARKER}")
RUNBOOK = "# Platform runbook\n\nThe recurring chores of the platform team.\n\n" + "\n".join(
    f"## {heading}\n\n{text} {text} Write down what you did in the team log.\n"
    for heading, text in CHORES + [QUARTER])
SKILLS = [
    ("platform-runbook", "Recurring operational chores of the platform team.", RUNBOOK),
    ("deploy-service", "Deploy a web service to the Kubernetes cluster with Helm charts.",
     "# Steps\n\n1. Build the image.\n2. helm upgrade --install.\n"),
    ("security-review", "Review a pull request for security problems such as injection, leaked "
     "secrets and unsafe deserialisation.", "# Steps\n\n1. Read the diff.\n2. Check inputs.\n"),
    ("incident-report", "Write a post-incident report after an outage: timeline, impact, causes "
     "and follow-up actions.", "# Steps\n\n1. Timeline.\n2. Impact.\n"),
    ("dns-records", "Add or change DNS records for the company's domains.",
     "# Steps\n\n1. Open the DNS provider.\n2. Edit the zone.\n"),
] + [(name, description, "# Steps\n\nDo it.\n") for name, description in (
    ("pdf-merge", "Merge several PDF files into one and rotate pages."),
    ("slide-deck", "Turn meeting notes into a short slide deck."),
    ("sql-migration", "Write a database migration that adds or changes a table."),
    ("unit-tests", "Write unit tests for a Python module with pytest."),
    ("release-notes", "Write release notes from the merged pull requests."),
    ("csv-cleanup", "Clean a CSV file: fix dates, drop duplicate rows, trim spaces."),
    ("email-reply", "Draft a polite reply to a customer email."),
    ("git-bisect", "Find the commit that introduced a bug with git bisect."),
    ("api-docs", "Write reference documentation for a REST API."),
    ("chart-plot", "Plot a chart from a table of numbers with matplotlib."),
    ("code-review", "Review a pull request for style, naming and readability."),
    ("docker-debug", "Debug a Docker container that crashes at start."),
    ("translate-text", "Translate a document between English and German."),
    ("budget-sheet", "Build a monthly budget spreadsheet."),
    ("meeting-minutes", "Write minutes of a meeting from its recording transcript."),
)]
#: Requests only the runbook's seventh section answers (the summaries rank them elsewhere).
TASKS = ["our https certificate on the load balancer expires next week, renew it",
         "the TLS cert on our load balancer is about to expire"]
#: Texts the index holds: one summary per skill and the runbook's seven sections (its one-line
#: preamble and the other skills' two-line steps are under SECTION_MIN_WORDS).
TEXTS = len(SKILLS) + 7


@pytest.fixture(autouse=True)
def body_side_on(monkeypatch):
    """The body side is opt-in (SKILLBANK_BODY_SECTIONS=1); these tests are about it. Set in
    os.environ, so the owner and MCP server processes the tests start inherit it."""
    monkeypatch.setenv("SKILLBANK_BODY_SECTIONS", "1")


def library(tmp_path: Path) -> Path:
    folder = tmp_path / "skills"
    for skill in SKILLS:
        write_skill(folder, *skill)
    assert RUNBOOK.index("Renew the TLS") > skill_library.KEYWORD_BODY_CHARS
    return folder


def open_bank(tmp_path: Path, minilm, folder: Path) -> Skillbank:
    return Skillbank.open(tmp_path / "root", skill_roots=[folder], embedding_function=minilm,
                          include_bundled=False, sync=False)


def ranked(bank: Skillbank, task: str) -> list[str]:
    return [h.name for h in bank.skills.search(task, k=3, min_score=0)]


def test_a_skill_whose_body_alone_names_the_task_ranks_first(tmp_path, minilm):
    """Fails before: the summary's cosine and BM25 over the body's opening put dns-records or
    security-review first; the runbook's section on certificates was never embedded."""
    bank = open_bank(tmp_path, minilm, library(tmp_path))
    try:
        report = bank.skills.sync()
        for task in TASKS:
            assert ranked(bank, task)[0] == "platform-runbook", (task, ranked(bank, task))
        assert report.embedded == TEXTS and bank.index("skills")._chunks == TEXTS
        for task in TASKS:
            # The hit's dense evidence (what the fit reads) is the summary's cosine, not the
            # section's: the fit stays calibrated on name + description.
            hit = bank.skills.search(task, k=3, min_score=0)[0]
            summary, query = minilm.embed(
                ["platform runbook: Recurring operational chores of the platform team.", task])
            cosine = float(summary @ query / np.linalg.norm(summary) / np.linalg.norm(query))
            assert hit.dense == pytest.approx(cosine, abs=1e-4)
        # A request the summaries answer still goes to its skill.
        assert ranked(bank, "roll out the new version of the API to kubernetes")[0] == \
            "deploy-service"
    finally:
        bank.close()


def test_the_body_side_scores_every_skill_not_only_those_among_the_nearest_texts(
        tmp_path, minilm, monkeypatch):
    """Fails before: the body side took each skill's best text among the Z_CANDIDATES nearest
    texts and gave every other skill the floor. On the 1,748-skill corpus (14,726 texts) the
    1,000 nearest texts covered only part of the skills, which skewed the side's z-scores
    (top-1 0.685 with the side at 0.75; 0.722 with every skill scored). Z_CANDIDATES is made
    smaller than this library's texts to see it."""
    from skillbank import index as index_module

    bodies: list[dict[str, float]] = []
    fuse = index_module._z_fuse

    def spy(*args, **kwargs):
        bodies.append(dict(kwargs.get("body") or {}))
        return fuse(*args, **kwargs)

    monkeypatch.setattr(index_module, "_z_fuse", spy)
    monkeypatch.setattr(index_module, "Z_CANDIDATES", 5)
    bank = open_bank(tmp_path, minilm, library(tmp_path))
    try:
        bank.skills.sync()
        assert ranked(bank, TASKS[0])[0] == "platform-runbook"
        assert bodies and set(bodies[-1]) == {name for name, _, _ in SKILLS}
    finally:
        bank.close()


OWNER = """
import os, sys
from skillbank import Skillbank
from skillbank.embeddings import MiniLMEmbedding
bank = Skillbank.open(os.environ['SKILLBANK_ROOT'], include_bundled=False, sync=False,
                      embedding_function=MiniLMEmbedding(model_dir=os.environ['SKILLBANK_MODEL_DIR']),
                      skill_roots=[os.environ['OWNER_SKILL_ROOT']])
print('ready', bank.skills.sync().embedded, flush=True)
for line in sys.stdin:
    pass
bank.close()
"""


@contextlib.contextmanager
def owner_process(root: Path, folder: Path) -> Iterator[int]:
    """Another process owning `root` with the real model; yields how many texts it embedded
    when it opened the root (and synced it)."""
    env = env_for(root, OWNER_SKILL_ROOT=str(folder), SKILLBANK_BODY_SECTIONS="1")
    proc = subprocess.Popen([sys.executable, "-c", OWNER], env=env, text=True,
                            cwd=root.parent, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        line = proc.stdout.readline().split()
        assert line and line[0] == "ready", "the owner process did not start"
        yield int(line[1])
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_a_reopen_ranks_by_the_body_without_embedding_again(tmp_path, minilm):
    """Fails before (the ranking). The section vectors live in Chroma beside the summary (the
    skill's `<name>#<k>` entries): a process that opens the root again, in process or as the
    owner another process asks, embeds nothing and ranks by them."""
    if not os.environ.get("SKILLBANK_MODEL_DIR"):
        pytest.skip("the owner process finds the model through SKILLBANK_MODEL_DIR")
    folder = library(tmp_path)
    bank = open_bank(tmp_path, minilm, folder)
    assert bank.skills.sync().embedded == TEXTS
    bank.close()
    bank = open_bank(tmp_path, minilm, folder)
    try:
        report = bank.skills.sync()
        assert report.embedded == 0 and report.unchanged == len(SKILLS)
        assert ranked(bank, TASKS[0])[0] == "platform-runbook"
    finally:
        bank.close()
    root = tmp_path / "root"
    with owner_process(root, folder) as embedded_by_owner:
        assert embedded_by_owner == 0
        client = open_bank(tmp_path, minilm, folder)
        try:
            assert client.is_remote
            for task in TASKS:
                assert ranked(client, task)[0] == "platform-runbook", task
        finally:
            client.close()


def test_a_finished_skill_is_not_embedded_again_when_read_back_from_chroma(tmp_path, minilm):
    """Fails before: a skill written by its summary first is marked partial, and Chroma's upsert
    merges metadata, so the finished skill (its sections written after) kept `partial` in
    Chroma. A process that reads the index back from Chroma (no keyword snapshot: a crash, a
    kill, a copied root) took every such skill as half-embedded and embedded it whole again:
    on the 1,739-skill corpus, every reopen re-embedded ~14,800 texts. In process and as the
    owner another process asks."""
    import shutil

    from skillbank.index import PARTIAL

    if not os.environ.get("SKILLBANK_MODEL_DIR"):
        pytest.skip("the owner process finds the model through SKILLBANK_MODEL_DIR")
    folder = library(tmp_path)
    root = tmp_path / "root"
    bank = open_bank(tmp_path, minilm, folder)
    assert bank.skills.sync().embedded == TEXTS
    bank.close()
    shutil.rmtree(root / ".cache" / "index")  # the keyword snapshot gone: read from Chroma
    bank = open_bank(tmp_path, minilm, folder)
    try:
        stored = bank.index("skills")._collection.get(ids=["platform-runbook"])["metadatas"][0]
        assert not stored.get(PARTIAL), stored
        report = bank.skills.sync()
        assert report.embedded == 0 and report.unchanged == len(SKILLS), report
    finally:
        bank.close()
    shutil.rmtree(root / ".cache" / "index")
    with owner_process(root, folder) as embedded_by_owner:
        assert embedded_by_owner == 0
        client = open_bank(tmp_path, minilm, folder)
        try:
            assert client.is_remote
            assert ranked(client, TASKS[0])[0] == "platform-runbook"
        finally:
            client.close()


def test_an_index_written_before_the_body_side_is_embedded_again_once(tmp_path, minilm,
                                                                      monkeypatch):
    """A library indexed with one text per skill (before #26) gains its body sections at the
    next sync, and the sync after that embeds nothing. Fails before: nothing was re-embedded."""
    folder = library(tmp_path)
    with monkeypatch.context() as old:
        old.setattr(index_item, "section_texts", lambda title, sections: [])
        old.setattr(index_item, "DENSE_TEXTS", "summary")
        old.setattr(skill_library, "DENSE_TEXTS", "summary")
        bank = open_bank(tmp_path, minilm, folder)
        assert bank.skills.sync().embedded == len(SKILLS)
        bank.close()
    bank = open_bank(tmp_path, minilm, folder)
    try:
        report = bank.skills.sync()  # the summaries' vectors are kept: the sections alone
        assert report.embedded == TEXTS - len(SKILLS)
        assert sorted(report.changed) == sorted(s[0] for s in SKILLS)
        assert bank.skills.sync().embedded == 0
        assert ranked(bank, TASKS[0])[0] == "platform-runbook"
    finally:
        bank.close()


async def test_search_catalog_and_find_skills_never_carry_the_body(tmp_path, minilm):
    """Ranking reads the body; disclosure does not: hits, the catalog, the skill list and MCP
    `find_skills` carry name and description only. The body comes with `load` (step two).
    A guard: it passes before the body side too, and must keep passing."""
    from skillbank.mcp_server import build_server

    task = "the platform team's recurring chores: renew the TLS certificates on the load balancer"
    bank = open_bank(tmp_path, minilm, library(tmp_path))
    try:
        bank.skills.sync()
        hits = bank.skills.search(task, k=5)
        assert hits and hits[0].name == "platform-runbook"
        seen = [json.dumps([h.model_dump(mode="json") for h in hits]),
                bank.skills.catalog(task=task).text, bank.skills.catalog().text,
                json.dumps([s.model_dump(mode="json") for s in bank.skills.list()])]
        async with Client(build_server(bank, trusted=True)) as client:
            found = await client.call_tool("find_skills", {"task": task, "k": 5})
            assert not found.is_error
            assert found.structured_content["skills"][0]["name"] == "platform-runbook"
            seen.append(json.dumps(found.structured_content))
            seen += [c.text for c in found.content if hasattr(c, "text")]
        for text in seen:
            assert "Okonkwo" not in text and "Renew the TLS" not in text, text[:300]
        assert MARKER in bank.skills.load("platform-runbook").body  # disclosed on load only
    finally:
        bank.close()


def test_summaries_are_embedded_before_sections_and_a_stopped_fill_resumes(tmp_path, minilm):
    """Every summary is in before any body section (ranking by summary and keyword is complete
    as soon as it was without the body side); a fill stopped between the two leaves skills
    marked partial, whose sections the next sync embeds (their summaries' vectors are kept)."""
    import threading

    from skillbank.index import PARTIAL

    folder = library(tmp_path)
    bank = open_bank(tmp_path, minilm, folder)
    stop = threading.Event()

    def progress(done: int, total: int) -> None:
        if done == total:  # every summary is in: stop before the sections
            stop.set()

    try:
        bank.skills.sync(embed=False)
        assert bank.skills.fill_dense(progress=progress, stop=stop) == len(SKILLS)
        index = bank.index("skills")
        assert bank.skills.dense_complete and index._chunks == len(SKILLS)
        assert [name for name, _, _ in SKILLS if index.metadata(name).get(PARTIAL)] == \
            ["platform-runbook"]  # the others have no section to wait for: written whole
        # ranked by summary and keyword meanwhile (the body side has only the summaries)
        assert ranked(bank, "roll out the new version of the API to kubernetes")[0] == \
            "deploy-service"
    finally:
        bank.close()
    bank = open_bank(tmp_path, minilm, folder)
    try:
        report = bank.skills.sync()
        # its summary's vector is kept: the sections alone are embedded
        assert report.changed == ["platform-runbook"] and report.embedded == 7
        assert not any(bank.index("skills").metadata(name).get(PARTIAL) for name, _, _ in SKILLS)
        assert ranked(bank, TASKS[0])[0] == "platform-runbook"
        assert bank.skills.sync().embedded == 0
    finally:
        bank.close()


def old_format_item(*args, **kwargs):
    """A skill as the code before the body side indexed it: its summary alone, no "texts"."""
    item = _INDEX_ITEM_FOR(*args, **kwargs)
    item.metadata.pop("texts")
    return dataclasses.replace(item, embed_texts=item.embed_texts[:1])


_INDEX_ITEM_FOR = skill_library.index_item_for


def embedded_texts(monkeypatch) -> list[str]:
    """Every text the skill index sends to the model from now on."""
    import skillbank.index_fill as index_module  # where the index's fill calls the model

    seen: list[str] = []
    real = index_module.embed_texts

    def counting(function, texts):
        seen.extend(texts)
        return real(function, texts)

    monkeypatch.setattr(index_module, "embed_texts", counting)
    return seen


def test_an_upgrade_embeds_the_sections_only_and_keeps_the_summaries(tmp_path, minilm,
                                                                     monkeypatch):
    """An index written by the previous code (one text per skill, no "texts" metadata) keeps
    its summary vectors: the sync after the upgrade embeds the body sections alone, and the
    ranking then equals a fresh index's. Fails before: every summary was embedded again."""
    folder = library(tmp_path)
    with monkeypatch.context() as old:
        old.setattr(skill_library, "index_item_for", old_format_item)
        bank = open_bank(tmp_path, minilm, folder)
        assert bank.skills.sync().embedded == len(SKILLS)
        assert bank.index("skills").metadata("platform-runbook").get("texts") is None
        bank.close()
    bank = open_bank(tmp_path, minilm, folder)
    try:
        seen = embedded_texts(monkeypatch)
        report = bank.skills.sync()
        summaries = {f"{skill_library._humanise(n)}: {d}" for n, d, _ in SKILLS}
        assert len(seen) == report.embedded == TEXTS - len(SKILLS)
        assert not summaries & set(seen), "a summary was embedded again"
        assert all(text.lower().startswith("platform runbook") for text in seen), seen[:2]
        assert bank.skills.sync().embedded == 0
        index = bank.index("skills")
        assert index._chunks == TEXTS
        assert index.metadata("deploy-service")["texts"] == skill_library.DENSE_TEXTS
        assert [ranked(bank, task)[0] for task in TASKS] == ["platform-runbook"] * 2
        # the kept summary vector is the one a fresh embedding gives
        got = index._collection.get(ids=["deploy-service"], include=["embeddings"])
        fresh = minilm([f"{skill_library._humanise('deploy-service')}: {SKILLS[1][1]}"])[0]
        assert np.allclose(np.asarray(got["embeddings"][0]), np.asarray(fresh), atol=1e-5)
    finally:
        bank.close()


def test_body_sections_off_embeds_summaries_and_keeps_an_old_index(tmp_path, minilm,
                                                                  monkeypatch):
    """SKILLBANK_BODY_SECTIONS=0: an index from the previous code is not embedded again, a new
    skill is embedded as its summary alone, and switching the body side on later embeds the
    sections only. Fails before: the old index was embedded again whole."""
    folder = library(tmp_path)
    with monkeypatch.context() as old:
        old.setattr(skill_library, "index_item_for", old_format_item)
        bank = open_bank(tmp_path, minilm, folder)
        bank.skills.sync()
        bank.close()
    monkeypatch.setenv("SKILLBANK_BODY_SECTIONS", "0")
    write_skill(folder, "pager-rota", "Set up the on-call pager rotation for a new team.",
                "# Steps\n\n" + "Add every engineer to the rotation in the paging tool. " * 4)
    bank = open_bank(tmp_path, minilm, folder)
    try:
        seen = embedded_texts(monkeypatch)
        report = bank.skills.sync()
        assert report.added == ["pager-rota"] and not report.changed
        assert seen == [f"{skill_library._humanise('pager-rota')}: Set up the on-call pager "
                        "rotation for a new team."]
        assert bank.index("skills")._chunks == len(SKILLS) + 1
        assert ranked(bank, "roll out the new version of the API to kubernetes")[0] == \
            "deploy-service"
    finally:
        bank.close()
    monkeypatch.setenv("SKILLBANK_BODY_SECTIONS", "1")
    bank = open_bank(tmp_path, minilm, folder)
    try:
        seen = embedded_texts(monkeypatch)
        report = bank.skills.sync()
        assert len(seen) == report.embedded == TEXTS - len(SKILLS) + 1  # pager-rota's section
        assert ranked(bank, TASKS[0])[0] == "platform-runbook"
    finally:
        bank.close()


def test_the_mcp_loader_marks_the_summaries_before_the_sections(tmp_path, minilm):
    """`skills_summaries` is noted once every summary is in and before any section is
    embedded; `skills_dense` once the sections are. Fails before: one mark, after the
    sections, so stats and benchmarks/first_run.py could not tell the two apart."""
    from skillbank.mcp_server.loader import BankHandle

    bank = open_bank(tmp_path, minilm, library(tmp_path))
    try:
        bank.skills.sync(embed=False)
        handle = BankHandle.ready(bank)
        index = bank.index("skills")
        texts_at: dict[str, int] = {}
        note = handle.note

        def noting(step: str) -> None:
            texts_at[step] = index._chunks
            note(step)

        handle.note = noting  # type: ignore[method-assign]
        handle._fill_skills(bank)
        assert texts_at.get("skills_summaries") == len(SKILLS)  # no section yet
        assert index._chunks == TEXTS
        assert handle.timings["skills_summaries"] <= handle.timings["skills_dense"]
    finally:
        bank.close()


async def test_stats_over_stdio_report_summaries_and_sections(tmp_path):
    """A real stdio server's `skillbank://stats` carries both marks (first_run.py reads them)."""
    import anyio
    from mcp import StdioServerParameters

    from test_mcp_transports import base_env

    root, folder = tmp_path / "root", library(tmp_path)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "skillbank.mcp_server", "--root", str(root), "--skills-dir", str(folder),
              "--no-bundled"], env=base_env(SKILLBANK_BODY_SECTIONS="1"), cwd=str(tmp_path))
    async with Client(params, read_timeout_seconds=180) as client:
        found = await client.call_tool("find_skills", {"task": TASKS[0], "k": 3})
        assert not found.is_error
        with anyio.fail_after(150):
            while True:
                stats = json.loads(
                    (await client.read_resource("skillbank://stats")).contents[0].text)
                stages = stats["server"]["startup_seconds"]
                if "skills_dense" in stages:
                    break
                await anyio.sleep(0.5)
    assert 0 < stages["skills_summaries"] <= stages["skills_dense"]


def test_cli_sync_says_it_embeds_body_sections_and_that_ctrl_c_is_safe(tmp_path):
    """`skills sync` in a real process: after the summaries its progress says it is embedding
    body sections and that Ctrl-C is safe (the stopped-fill test above shows the next sync
    finishes them). Fails before: the sections were embedded silently after "N/N (100%)"."""
    folder = library(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLBANK_")}
    env.update(SKILLBANK_EMBEDDING="hash", SKILLBANK_ROOT=str(tmp_path / "root"),
               SKILLBANK_MODEL_DIR=os.environ.get("SKILLBANK_MODEL_DIR", ""),
               ANONYMIZED_TELEMETRY="False", SKILLBANK_BODY_SECTIONS="1")
    done = subprocess.run(
        [sys.executable, "-m", "skillbank.cli", "--no-bundled", "--skills-dir", str(folder),
         "skills", "sync"], env=env, capture_output=True, text=True, timeout=300,
        cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    summaries = [i for i, line in enumerate(lines) if "embedding skills" in line]
    sections = [i for i, line in enumerate(lines) if "embedding body sections" in line]
    assert summaries and sections and max(summaries) < min(sections), done.stderr
    assert "Ctrl-C is safe" in lines[sections[-1]] and "1/1 (100%)" in lines[sections[-1]]
