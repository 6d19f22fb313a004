"""Bytecode a script runs is part of a non-own skill's version; bytecode Python wrote is not.

Review (session 22, #1): `__pycache__/` was left out of the whole-folder version, so a vendor
update adding one unchecked-hash `helpers.cpython-311.pyc` (PEP 552: run without looking at
`helpers.py`) changed what an accepted third-party skill's `scripts/run.py` ran, while the skill
kept its version, scan and accept. Now only a timestamp pyc whose header matches the `.py` next
to it (what Python writes when the skill's code runs) is left out; a hash-based, orphan or
mismatched pyc makes a new version, sent back to review.
"""

from __future__ import annotations

import os
import py_compile
import sys
from pathlib import Path

import pytest

from conftest import write_skill
from test_skill_trust import open_bank

EVIL = "def main():\n    print('PWNED')\n"


def _skill(vendor: Path) -> Path:
    folder = write_skill(vendor, "csv-stats", "Print row counts of a CSV file.",
                         "python scripts/run.py FILE\n").parent
    (folder / "scripts").mkdir()
    (folder / "scripts" / "run.py").write_text("import helpers\nhelpers.main()\n")
    (folder / "scripts" / "helpers.py").write_text("def main():\n    print('rows')\n")
    return folder


def _pyc(folder: Path, source: Path, mode: py_compile.PycInvalidationMode) -> None:
    cache = folder / "scripts" / "__pycache__"
    cache.mkdir(exist_ok=True)
    py_compile.compile(str(source), cfile=str(cache / f"helpers.{sys.implementation.cache_tag}.pyc"),
                       invalidation_mode=mode, doraise=True)


def _accepted_then(tmp_path: Path, change) -> tuple[bool, str]:
    vendor = tmp_path / "vendor"
    folder = _skill(vendor)
    bank = open_bank(tmp_path / "root", [vendor], scanner="")
    try:
        bank.skills.review_skill("csv-stats", "accept")
        assert not bank.skills.load("csv-stats").held
        change(tmp_path, folder)
        skill = bank.skills.load("csv-stats", include_held=True)
        return skill.held, skill.review
    finally:
        bank.close()


def _evil_source(tmp_path: Path) -> Path:
    evil = tmp_path / "helpers.py"
    evil.write_text(EVIL)
    return evil


@pytest.mark.parametrize("mode", ["UNCHECKED_HASH", "CHECKED_HASH"])
def test_a_hash_based_pyc_added_by_an_update_sends_the_skill_back(tmp_path, mode):
    held, review = _accepted_then(tmp_path, lambda tmp, folder: _pyc(
        folder, _evil_source(tmp), py_compile.PycInvalidationMode[mode]))
    assert held and review.startswith("pending: changed since accepted"), review


def test_an_orphan_or_mismatched_pyc_sends_the_skill_back(tmp_path):
    def orphan(tmp: Path, folder: Path) -> None:
        _pyc(folder, _evil_source(tmp), py_compile.PycInvalidationMode.TIMESTAMP)
        # its header names evil's mtime and size, not those of scripts/helpers.py
    held, review = _accepted_then(tmp_path, orphan)
    assert held, review


def test_the_pyc_python_writes_when_the_skill_runs_keeps_the_version(tmp_path):
    def run_once(tmp: Path, folder: Path) -> None:
        source = folder / "scripts" / "helpers.py"
        _pyc(folder, source, py_compile.PycInvalidationMode.TIMESTAMP)
        os.utime(folder / "scripts" / "__pycache__", None)
    held, review = _accepted_then(tmp_path, run_once)
    assert not held and review == "accepted", review
