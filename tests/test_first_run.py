"""Progressive first run: keyword search while vectors fill in, resumable, keyword-only mode."""

from __future__ import annotations

import logging
import shutil
import threading
from pathlib import Path

import pytest

from conftest import write_skill
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding, MiniLMEmbedding

TOPICS = [
    ("pdf-merge", "Merge, split and rotate PDF files"),
    ("git-cleanup", "Delete stale git branches and worktrees safely"),
    ("csv-report", "Summarise a CSV spreadsheet into a report with charts"),
    ("docker-debug", "Debug a Docker container that exits at start"),
    ("sql-tuning", "Speed up slow SQL queries with indexes and query plans"),
]


def library(folder: Path, extra: int = 0) -> Path:
    for name, description in TOPICS:
        write_skill(folder, name, description)
    for n in range(extra):
        write_skill(folder, f"filler-{n:03d}", f"Filler skill number {n} about topic {n % 7}")
    return folder


def open_bank(root: Path, skills: Path, embedding) -> Skillbank:
    return Skillbank.open(root, skill_roots=[skills], embedding_function=embedding,
                          include_bundled=False, sync=False)


def test_keyword_answers_before_any_vector_and_hybrid_takes_over(tmp_path):
    skills = library(tmp_path / "skills")
    embedding = HashEmbedding()
    bank = open_bank(tmp_path / "root", skills, embedding)
    try:
        report = bank.skills.sync(embed=False)
        assert len(report.added) == 5 and report.embedded == 0 and embedding.calls == 0
        hits = bank.skills.search("merge pdf files")
        assert hits and hits[0].name == "pdf-merge"
        assert hits[0].why == "keyword" and hits[0].dense is None
        assert hits.dense_complete is False and hits.pending == 5
        assert not bank.skills.dense_complete and bank.search_mode() == "keyword"

        # Half filled: the embedded skills are hybrid, the others still keyword-only.
        stop = threading.Event()
        assert bank.skills.index.fill(batch=2, progress=lambda done, total: stop.set(),
                                      stop=stop) == 2
        mid = bank.skills.search("merge pdf files", k=5)
        assert mid.dense_complete is False and 0 < mid.pending < 5

        assert bank.skills.fill_dense() > 0
        done = bank.skills.search("merge pdf files")
        assert done.dense_complete is True and done.pending == 0
        assert bank.search_mode() == "hybrid"
        assert done[0].name == "pdf-merge" and done[0].why == "both"
    finally:
        bank.close()


def test_interrupted_first_index_resumes_without_embedding_twice(tmp_path):
    skills = library(tmp_path / "skills", extra=45)  # 50 skills
    first = HashEmbedding()
    bank = open_bank(tmp_path / "root", skills, first)
    stop = threading.Event()
    bank.skills.sync(embed=False)
    # Interrupted after the first batch of 16 (as a killed server or Ctrl-C would).
    bank.skills.index.fill(batch=16, progress=lambda done, total: stop.set(), stop=stop)
    assert first.calls == 16 and bank.skills.index.pending == 34
    bank.close()

    second = HashEmbedding()
    bank = open_bank(tmp_path / "root", skills, second)
    try:
        report = bank.skills.sync()
        assert report.embedded == 34 and second.calls == 34  # only what was never embedded
        assert len(report.added) == 34 and report.unchanged == 16
        assert bank.skills.dense_complete
        hits = bank.skills.search("stale git branches")
        assert hits[0].name == "git-cleanup" and hits[0].why == "both"
        again = bank.skills.sync()
        assert again.embedded == 0 and not again.changed_anything
    finally:
        bank.close()


def test_progress_reports_every_batch(tmp_path):
    skills = library(tmp_path / "skills", extra=95)  # 100 skills
    bank = open_bank(tmp_path / "root", skills, HashEmbedding())
    try:
        seen: list[tuple[int, int]] = []
        report = bank.skills.sync(progress=lambda done, total: seen.append((done, total)))
        assert report.embedded == 100
        assert seen[-1] == (100, 100) and len(seen) == 2  # batches of 64
        assert all(total == 100 for _, total in seen)
    finally:
        bank.close()


def test_a_file_changed_while_staged_is_embedded_in_its_new_version(tmp_path):
    skills = library(tmp_path / "skills")
    embedding = HashEmbedding()
    bank = open_bank(tmp_path / "root", skills, embedding)
    try:
        bank.skills.sync(embed=False)
        write_skill(skills, "pdf-merge", "Convert scanned receipts into expense entries")
        bank.skills.sync()
        assert embedding.calls == 5 and bank.skills.dense_complete
        hits = bank.skills.search("scanned receipts expense entries")
        assert hits[0].name == "pdf-merge" and hits[0].why == "both"
    finally:
        bank.close()


def test_keyword_only_mode_without_a_model_and_dense_resumes(tmp_path, monkeypatch, caplog,
                                                             model_dir):
    """No model anywhere (a model dir that does not exist, no env, no cache): the bank opens,
    searches answer by keyword and say so, one warning; the model arrives, dense resumes."""
    import skillbank.embeddings as embeddings
    import skillbank.index as index

    monkeypatch.delenv("SKILLBANK_MODEL_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no Chroma model cache either
    monkeypatch.setattr("skillbank.index_fill._warned_keyword_only", False)
    missing = tmp_path / "no-model-here"
    skills = library(tmp_path / "skills")
    embedding = MiniLMEmbedding(model_dir=str(missing))
    caplog.set_level(logging.WARNING, logger="skillbank.index")
    bank = open_bank(tmp_path / "root", skills, embedding)
    try:
        report = bank.skills.sync()
        assert len(report.added) == 5 and report.embedded == 0
        first = bank.skills.search("merge pdf files")
        second = bank.skills.search("debug docker container")
        assert first[0].name == "pdf-merge" and first[0].why == "keyword"
        assert second[0].name == "docker-debug"
        assert first.dense_complete is False and first.pending == 5
        assert str(missing) in (bank.skills.index.dense_error or "")
        assert bank.search_mode() == "keyword"
        warnings = [r for r in caplog.records if "keyword only" in r.getMessage()]
        assert len(warnings) == 1 and str(missing) in warnings[0].getMessage()

        # The model shows up where it was expected: the next attempt loads it.
        shutil.copytree(model_dir / "onnx", missing / "onnx")
        monkeypatch.setattr(embeddings, "MODEL_RETRY_SECONDS", 0.0)
        assert bank.skills.fill_dense() == 5
        hits = bank.skills.search("merge pdf files")
        assert hits.dense_complete is True and hits[0].why == "both"
        assert hits[0].name == "pdf-merge" and bank.search_mode() == "hybrid"
    finally:
        bank.close()


def test_keyword_only_mode_serves_guidelines_and_context(tmp_path, monkeypatch, minilm):
    """Without a model, guideline search and the memory block answer by keyword too (they
    used to fail with the model-unavailable error)."""
    import skillbank.index as index

    root = tmp_path / "root"
    with open_bank(root, library(tmp_path / "skills"), minilm) as bank:
        bank.guidelines.add("Never deploy to production on Fridays.")
    monkeypatch.delenv("SKILLBANK_MODEL_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr("skillbank.index_fill._warned_keyword_only", False)
    missing = MiniLMEmbedding(model_dir=str(tmp_path / "no-model-here"))
    with open_bank(root, library(tmp_path / "skills"), missing) as bank:
        hits = bank.guidelines.search("can we deploy to production on friday")
        assert hits and "Fridays" in hits[0].record.text and hits[0].why == "keyword"
        context = bank.context_for("deploy the release to production on friday")
        assert hits[0].id in context.ids
