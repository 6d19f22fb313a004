"""The skill library end to end: roots, precedence, CRUD, traversal, sync, watch, routing."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from conftest import write_skill
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.errors import (AlreadyExistsError, InvalidInputError, NotFoundError,
                              ReadOnlyError)
from skillbank.fsutil import UnsafePathError
from skillbank.index import EmbeddingMismatchError


def open_bank(root: Path, roots=(), embedding=None, **kw) -> Skillbank:
    return Skillbank.open(root, skill_roots=list(roots), embedding_function=embedding or HashEmbedding(),
                          include_bundled=False, sync=False, **kw)


@pytest.fixture
def ro_roots(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    write_skill(first, "pdf-report", "Build PDF reports with tables and charts. Use for PDF output.")
    write_skill(second, "pdf-report", "A second copy that must lose to the first root.")
    write_skill(second, "sql-tuning", "Tune slow SQL queries with indexes and EXPLAIN plans.")
    return first, second


def test_sync_precedence_and_shadow_warning(tmp_path, ro_roots):
    bank = open_bank(tmp_path / "bank", ro_roots)
    report = bank.skills.sync()
    assert sorted(report.added) == ["pdf-report", "sql-tuning"]
    shadow = [f for f in report.findings if f.code == "shadowed"]
    assert shadow and str(ro_roots[0] / "pdf-report" / "SKILL.md") in shadow[0].message
    assert bank.skills.load("pdf-report").path == str(ro_roots[0] / "pdf-report" / "SKILL.md")
    bank.close()


def test_no_change_resync_embeds_nothing_and_one_change_embeds_one_skill(tmp_path, ro_roots):
    embedding = HashEmbedding()
    bank = open_bank(tmp_path / "bank", ro_roots, embedding)
    bank.skills.sync()
    before = embedding.calls
    again = bank.skills.sync()
    assert embedding.calls == before and again.embedded == 0 and again.unchanged == 2
    write_skill(ro_roots[1], "sql-tuning", "Tune slow SQL with EXPLAIN ANALYZE.", body="Short.\n")
    changed = bank.skills.sync()
    assert changed.changed == ["sql-tuning"] and changed.added == [] and changed.embedded >= 1
    assert embedding.calls - before == changed.embedded
    bank.close()


def test_deleted_skill_is_removed_and_the_shadowed_one_takes_over(tmp_path, ro_roots):
    bank = open_bank(tmp_path / "bank", ro_roots)
    bank.skills.sync()
    (ro_roots[0] / "pdf-report" / "SKILL.md").unlink()
    report = bank.skills.sync()
    assert report.changed == ["pdf-report"]
    assert "second copy" in bank.skills.load("pdf-report").description
    for path in (ro_roots[1] / "pdf-report", ro_roots[1] / "sql-tuning"):
        (path / "SKILL.md").unlink()
    assert sorted(bank.skills.sync().removed) == ["pdf-report", "sql-tuning"]
    assert bank.skills.names() == []
    bank.close()


def test_scan_skips_hidden_vendored_and_symlink_loops(tmp_path):
    root = tmp_path / "skills"
    write_skill(root, "visible", "A visible skill for testing scans.")
    write_skill(root / ".hidden", "secret", "Should never be found.")
    write_skill(root / "node_modules", "vendored", "Should never be found.")
    write_skill(root / "group", "nested", "Skills may sit one folder down.")
    (root / "group" / "loop").symlink_to(root, target_is_directory=True)
    bank = open_bank(tmp_path / "bank", [root])
    report = bank.skills.sync()
    assert sorted(report.added) == ["nested", "visible"]
    bank.close()


def test_invalid_files_are_reported_not_fatal(tmp_path):
    root = tmp_path / "skills"
    write_skill(root, "good", "A good skill.")
    (root / "broken").mkdir()
    (root / "broken" / "SKILL.md").write_text("---\nname: broken\ndescription: [unclosed\n---\nx")
    (root / "nodesc").mkdir()
    (root / "nodesc" / "SKILL.md").write_text("---\nname: nodesc\n---\nbody")
    (root / "binary").mkdir()
    (root / "binary" / "SKILL.md").write_bytes(b"---\nname: binary\x00\n---\n")
    (root / "huge").mkdir()
    (root / "huge" / "SKILL.md").write_text("---\nname: huge\ndescription: big\n---\n" + "x" * (1 << 20))
    bank = open_bank(tmp_path / "bank", [root])
    report = bank.skills.sync()
    assert report.added == ["good"]
    errors = {f.code for f in report.findings if f.severity == "error"}
    assert {"too-large"} <= errors and len(report.skipped) == 4  # the huge file too
    bank.close()


def test_crud_in_the_writable_root(tmp_path, ro_roots):
    bank = open_bank(tmp_path / "bank", ro_roots)
    bank.skills.sync()
    skill = bank.skills.create("deploy-app", "Deploy the app to staging. Use before a release.",
                               "# Deploy\n\nRun `make deploy`.\n",
                               frontmatter={"license": "MIT", "x-team": "infra"},
                               resources={"scripts/deploy.sh": "#!/bin/sh\necho deploy\n"})
    assert skill.writable and skill.frontmatter["x-team"] == "infra"
    assert [r.path for r in skill.resources] == ["scripts/deploy.sh"]
    assert bank.skills.read_resource("deploy-app", "scripts/deploy.sh").startswith("#!/bin/sh")
    with pytest.raises(AlreadyExistsError):
        bank.skills.create("deploy-app", "again")
    updated = bank.skills.update("deploy-app", description="Deploy the app to staging or prod.")
    assert updated.frontmatter["x-team"] == "infra" and "prod" in updated.description
    assert bank.skills.search("deploy to prod", k=1)[0].name == "deploy-app"
    renamed = bank.skills.rename("deploy-app", "ship-app")
    assert renamed.name == "ship-app" and "deploy-app" not in bank.skills
    assert bank.skills.sync().changed_anything is False  # index already matches the files
    trash = bank.skills.delete("ship-app")
    assert trash.is_dir() and "ship-app" not in bank.skills
    with pytest.raises(ReadOnlyError):
        bank.skills.update("sql-tuning", description="nope")
    with pytest.raises(ReadOnlyError):
        bank.skills.delete("sql-tuning")
    with pytest.raises(NotFoundError):
        bank.skills.load("missing")
    bank.close()


def test_create_validates_before_writing(hash_bank):
    with pytest.raises(InvalidInputError):
        hash_bank.skills.create("ok-name", "")  # empty description
    with pytest.raises(InvalidInputError):
        hash_bank.skills.create("ok-name", "x" * 1025)
    assert not (hash_bank.root / "skills" / "ok-name" / "SKILL.md").exists()
    assert not list((hash_bank.root / "skills").rglob("*.tmp"))


@pytest.mark.parametrize("name", ["../escape", "/etc/passwd", "a/b", "..", "a\\b", "CON", "Upper",
                                  "-lead", "trail-", "double--hyphen", "x" * 65, "%2e%2e", ""])
def test_traversal_and_bad_names_are_refused(hash_bank, name):
    with pytest.raises(InvalidInputError):
        hash_bank.skills.create(name, "A description.")
    assert sorted(p.name for p in (hash_bank.root / "skills").iterdir()) == []


@pytest.mark.parametrize("path", ["../SKILL.md", "/etc/passwd", "..%2f..%2fetc", "a/../../x",
                                  "C:\\windows", "scripts\\x", "", "./x"])
def test_resource_path_tricks_are_refused(hash_bank, path):
    hash_bank.skills.create("tool", "A tool skill.", resources={"notes.md": "hi"})
    with pytest.raises(InvalidInputError):
        hash_bank.skills.read_resource("tool", path)
    with pytest.raises(InvalidInputError):
        hash_bank.skills.update("tool", resources={path: "evil"})


def test_symlink_out_of_the_skill_is_refused(hash_bank, tmp_path):
    hash_bank.skills.create("tool", "A tool skill.")
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    (hash_bank.root / "skills" / "tool" / "leak.txt").symlink_to(secret)
    with pytest.raises(InvalidInputError):
        hash_bank.skills.read_resource("tool", "leak.txt")
    assert "leak.txt" not in [r.path for r in hash_bank.skills.load("tool").resources]


def test_binary_and_huge_resources_are_refused(hash_bank):
    hash_bank.skills.create("tool", "A tool skill.",
                            resources={"assets/logo.png": b"\x89PNG\x00\x00", "big.txt": "ok"})
    folder = hash_bank.root / "skills" / "tool"
    (folder / "big.txt").write_text("x" * ((1 << 20) + 1))
    with pytest.raises(InvalidInputError, match="binary"):
        hash_bank.skills.read_resource("tool", "assets/logo.png")
    with pytest.raises(InvalidInputError, match="bytes"):
        hash_bank.skills.read_resource("tool", "big.txt")
    with pytest.raises(NotFoundError):
        hash_bank.skills.read_resource("tool", "nope.txt")


def test_atomic_write_keeps_the_old_file_when_rendering_fails(hash_bank, monkeypatch):
    hash_bank.skills.create("tool", "A tool skill.", "Body one.\n")
    import skillbank.fsutil as fsutil

    def exploding_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(fsutil.os, "replace", exploding_replace)
    with pytest.raises(OSError):
        hash_bank.skills.update("tool", body="Body two.\n")
    monkeypatch.undo()
    assert "Body one." in (hash_bank.root / "skills" / "tool" / "SKILL.md").read_text()
    assert not [p for p in (hash_bank.root / "skills" / "tool").iterdir() if p.suffix == ".tmp"]


def test_catalog_respects_budget_and_orders_by_relevance(hash_bank):
    from skillbank.tokens import count_tokens

    for i in range(20):
        hash_bank.skills.create(f"skill-{i}", f"Skill number {i} about topic {i} " + "word " * 20)
    hash_bank.skills.create("kafka-ops", "Operate Kafka clusters: partitions, consumer lag.")
    catalog = hash_bank.skills.catalog(budget_tokens=120)
    assert catalog.tokens <= 120 and count_tokens(catalog.text) <= 120 and catalog.omitted > 0
    ranked = hash_bank.skills.catalog(budget_tokens=60, task="kafka consumer lag")
    assert ranked.entries[0].name == "kafka-ops"


def test_record_use_feeds_the_ranking(hash_bank):
    hash_bank.skills.create("alpha-tool", "Convert files between formats quickly.")
    hash_bank.skills.create("beta-tool", "Convert files between formats quickly.")
    first = hash_bank.skills.search("convert files between formats", k=2)
    loser = first[1].name
    for _ in range(5):
        hash_bank.skills.record_use(loser, success=True)
        hash_bank.skills.record_use(first[0].name, success=False)
    assert hash_bank.skills.search("convert files between formats", k=2)[0].name == loser
    assert hash_bank.skills.load(loser).usage.successes == 5
    with pytest.raises(NotFoundError):
        hash_bank.skills.record_use("ghost")


def test_embedding_mismatch_is_a_clear_error(tmp_path):
    bank = open_bank(tmp_path / "bank", embedding=HashEmbedding(dim=384))
    bank.skills.create("tool", "A tool.")
    bank.close()
    with pytest.raises(EmbeddingMismatchError, match="reindex"):
        open_bank(tmp_path / "bank", embedding=HashEmbedding(dim=128)).skills


def test_second_process_in_embedded_mode_is_served_by_the_first(tmp_path):
    """Embedded mode: a second process is a client of the first (it used to get BusyError);
    asking for the root exclusively (share=False) still waits, then BusyError."""
    import subprocess
    import sys

    write_skill(tmp_path / "bank" / "skills", "pdf-tables", "Extract tables from PDF files")
    bank = open_bank(tmp_path / "bank")
    bank.skills.sync()
    code = ("from skillbank import Skillbank\nfrom skillbank.embeddings import HashEmbedding\n"
            "from skillbank.errors import BusyError\n"
            f"root = {str(tmp_path / 'bank')!r}\n"
            "client = Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False)\n"
            "print('CLIENT', client.is_remote, client.skills.names())\n"
            "client.close()\n"
            "try:\n"
            "    Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,"
            " share=False, lock_timeout=0.5)\n"
            "except BusyError as e:\n    print('BUSY', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, env={**os.environ, "PYTHONPATH": str(Path(__file__).parent)})
    assert "CLIENT True ['pdf-tables']" in out.stdout, out.stderr[-3000:]
    assert "BUSY" in out.stdout and "Skillbank.open" in out.stdout
    bank.close()


def test_watch_picks_up_new_and_edited_files(tmp_path):
    root = tmp_path / "skills"
    write_skill(root, "first-skill", "The first skill.")
    bank = open_bank(tmp_path / "bank", [root])
    bank.skills.sync()
    seen = threading.Event()
    thread, stop = bank.skills.start_watching(on_sync=lambda report: seen.set())
    try:
        # No sleep for the watcher to start: write (again) until it reports a re-sync, within
        # a generous ceiling; a write before it started is simply not seen.
        deadline = time.monotonic() + 300
        version = 0
        while not seen.is_set():
            assert time.monotonic() < deadline, "watch did not re-sync"
            version += 1
            write_skill(root, "second-skill", f"Appears while watching (version {version}).")
            seen.wait(5)
        deadline = time.monotonic() + 300
        while "second-skill" not in bank.skills and time.monotonic() < deadline:
            time.sleep(0.1)
        assert "second-skill" in bank.skills
    finally:
        stop.set()
        thread.join(5)
    bank.close()


def test_reopen_keeps_index_and_reindex_restores_it(tmp_path, ro_roots):
    bank = open_bank(tmp_path / "bank", ro_roots)
    bank.skills.sync()
    before = [(h.name, h.score) for h in bank.skills.search("slow sql query", k=3)]
    bank.close()
    bank = open_bank(tmp_path / "bank", ro_roots)
    assert bank.skills.sync().embedded == 0  # reopened: the persisted index is current
    bank.index("skills").reset()  # what `reindex` does first (deleting chroma/: test_durability)
    assert bank.skills.names() == []
    bank.skills.sync()
    assert [(h.name, h.score) for h in bank.skills.search("slow sql query", k=3)] == before
    bank.close()


def test_http_client_against_a_real_chroma_server(tmp_path, ro_roots, chroma_server):
    bank = open_bank(tmp_path / "bank", ro_roots, chroma_url=chroma_server,
                     collection_prefix="t" + str(os.getpid()), deployment=f"d{os.getpid()}")
    report = bank.skills.sync()
    assert sorted(report.added) == ["pdf-report", "sql-tuning"]
    assert bank.skills.search("speed up a slow SQL query", k=1)[0].name == "sql-tuning"
    bank.close()
    # A second bank of the same deployment (the same root at another path, same server and
    # prefix) sees the same index: no re-embedding. (Another deployment gets its own database:
    # test_index_ownership; another root folder is refused: test_deployment_one_root.)
    (tmp_path / "bank2").symlink_to(tmp_path / "bank")
    embedding = HashEmbedding()
    other = open_bank(tmp_path / "bank2", ro_roots, embedding, chroma_url=chroma_server,
                      collection_prefix="t" + str(os.getpid()), deployment=f"d{os.getpid()}")
    assert other.skills.sync().embedded == 0 and embedding.calls == 0
    other.close()


@pytest.mark.slow
def test_routing_with_the_real_model(tmp_path, minilm):
    from skillbank.bank import bundled_skills_dir

    bank = Skillbank.open(tmp_path / "bank", embedding_function=minilm, include_bundled=True, sync=False)
    bank.skills.sync()
    assert len(bank.skills.names()) >= 5
    cases = {
        "The user just told me my last answer was wrong and explained why; how do I keep "
        "that from happening again?": "learn-from-feedback",
        "I've done this same multi-step release procedure three times now, let me package "
        "it up so I can reuse it": "write-a-skill",
    }
    for task, expected in cases.items():
        assert bank.skills.search(task, k=3)[0].name == expected, task
    assert bank.skills.search("What is the capital of Mongolia and its population?", k=3) == []
    assert bundled_skills_dir() is not None
    bank.close()
