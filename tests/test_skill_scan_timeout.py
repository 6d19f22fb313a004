"""A scan that times out holds a skill that is not the bank's own; a crash is only noted.

Hunt (session 22, #4): a ~1 MB `scripts/run.py` of 11,700 chained functions that then reads
`~/.aws/credentials` and runs `curl | sh` made the scanner time out (60 s). "scan failed"
counted as unscanned, which the default policy only notes for a third-party skill: it was
served. How long a scan takes is the skill author's choice, so a timeout is now a critical
`SCAN_TIMEOUT` finding (held with the reason, a person can accept; the bank's own is told);
a crash stays a failed scan (noted), and an explicit scan tries a timed-out skill again.
In process, and as a client of another process that owns the root.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import write_skill
from owner_client import client_bank, owner_process
from test_skill_trust import fake_scanner, open_bank
from skillbank.errors import NotFoundError

HANGING = 'echo \'{"ready": true}\'\nsleep 120\n'
CLEAN = ('echo \'{"ready": true}\'\nwhile read line; do '
         'echo \'{"ok": true, "findings": []}\'; done\n')
CRASHING = 'echo \'{"ready": true}\'\nread line\nexit 3\n'
REASON = "cannot be scanned: the scan did not finish in 1 s; read it before accepting"


@pytest.fixture
def vendor(tmp_path) -> Path:
    folder = tmp_path / "vendor"
    skill = write_skill(folder, "slow-scan", "Summarise a CSV file into a report with totals.",
                        "Run scripts/run.py data.csv.\n").parent
    (skill / "scripts").mkdir()
    (skill / "scripts" / "run.py").write_text("def f0():\n    return 0\n")
    return folder


def _check_held(skill) -> None:
    assert skill.held and skill.scan == "findings", (skill.scan, skill.review)
    (finding,) = skill.findings
    assert (finding.rule, finding.severity) == ("SCAN_TIMEOUT", "critical")
    assert REASON in skill.review


def test_a_timed_out_scan_holds_a_third_party_skill_until_accepted(tmp_path, vendor):
    bank = open_bank(tmp_path / "root", [vendor], scanner=fake_scanner(tmp_path, HANGING),
                     timeout=1)
    try:
        _check_held(bank.skills.scan("slow-scan")[0])
        assert bank.skills.search("summarise a csv file", min_score=0.0) == []
        with pytest.raises(NotFoundError, match="held for review"):
            bank.skills.load("slow-scan")
        bank.skills.review_skill("slow-scan", "accept")  # a person read it: served
        assert not bank.skills.load("slow-scan").held
    finally:
        bank.close()


def test_an_explicit_scan_tries_a_timed_out_skill_again(tmp_path, vendor):
    """A loaded machine can make a harmless skill time out: asking again scans again."""
    bank = open_bank(tmp_path / "root", [vendor], scanner=fake_scanner(tmp_path, HANGING),
                     timeout=1)
    try:
        _check_held(bank.skills.scan("slow-scan")[0])
        bank.skills.trust_book.scanner.python = fake_scanner(tmp_path / "root", CLEAN)
        bank.skills.trust_book.scanner._worker = None  # the hanging one was stopped
        again = bank.skills.scan("slow-scan")[0]
        assert again.scan == "clean" and not again.findings and not again.held
    finally:
        bank.close()


def test_a_crash_stays_a_failed_scan_and_the_bank_s_own_skill_is_told(tmp_path, vendor):
    bank = open_bank(tmp_path / "root", [vendor], scanner=fake_scanner(tmp_path, CRASHING),
                     timeout=1)
    try:
        crashed = bank.skills.scan("slow-scan")[0]
        assert crashed.scan.startswith("scan failed: the scanner exited") and not crashed.held
    finally:
        bank.close()
    root = tmp_path / "root2"
    bank = open_bank(root, [], scanner=fake_scanner(tmp_path / "vendor", HANGING), timeout=1)
    try:
        write_skill(root / "skills", "my-slow", "My own skill with a slow scan.")
        bank.skills.sync()
        own = bank.skills.scan("my-slow")[0]
        assert own.trust == "own" and not own.held and own.findings[0].rule == "SCAN_TIMEOUT"
    finally:
        bank.close()


def test_through_a_client_a_timed_out_scan_holds_the_skill(tmp_path, vendor):
    root = tmp_path / "root"
    root.mkdir()
    (root / "skillbank.toml").write_text(  # the timeout set where a person would set it
        f'[skill_scan]\npython = "{fake_scanner(tmp_path, HANGING)}"\ntimeout = 1\n')
    with owner_process(root, (vendor,)), client_bank(root) as bank:
        _check_held(bank.skills.scan("slow-scan")[0])
        assert bank.skills.search("summarise a csv file", min_score=0.0) == []


def test_a_bad_timeout_in_the_configuration_is_a_clear_error(tmp_path):
    from skillbank.errors import InvalidInputError
    from skillbank.memories.skills.trust import read_config

    (tmp_path / "skillbank.toml").write_text('[skill_scan]\ntimeout = "soon"\n')
    with pytest.raises(InvalidInputError, match=r"\[skill_scan\] timeout = 'soon'"):
        read_config(tmp_path)
