"""A SKILL.md that cannot be read is named so, and never served from the cache (hunt-disk #5, #7,
session 29).

#5: with `skills/secret-skill/SKILL.md` owned by another user, mode 0600, `skills list` left it
out without a word, `skills show/update/delete` said "no skill named 'secret-skill'" and `skills
new` "already exists; change it with update". Now each names the file and "permission denied"
(UnreadableError, exit 5), and `skills list` names it on stderr.

#7: a SKILL.md made unreadable after it was indexed (`chmod 000`, which moves only the ctime)
was "unchanged" to `skills sync`, still ranked first by search, and its body served from the
last good copy. Now the sync reads it again (the stat key holds the ctime), reports it
unreadable and takes it out of the index; `load` refuses rather than serve the copy.

Root reads any file whatever its mode: run as root, each test runs again in a child pytest
without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (`setpriv`), so file modes stop it and the
owner process it starts, as they stop any other user.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from owner_client import bank_for
from skillbank.errors import NotFoundError, UnreadableError

SECRET = "secret-skill"
BISECT = "git-bisect"
BISECT_TASK = "find the commit that introduced a regression with git bisect"
WITHOUT_ROOT_POWERS = "TEST_FILE_MODES_APPLY"  # not SKILLBANK_: cli_root clears those
DROP = "-dac_override,-dac_read_search"


def file_modes_apply(request) -> bool:
    """True: file modes stop this process, so the test runs here. Run as root, the test runs
    again in a child pytest whose capabilities lack DAC override (the assertion is its result),
    and this returns False; without `setpriv`, the test is skipped (nothing else can make a
    file unreadable to root)."""
    if os.geteuid() != 0 or os.environ.get(WITHOUT_ROOT_POWERS):
        return True
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("runs as root, whom file modes do not stop, and setpriv (util-linux) is "
                    "not installed to drop that power")
    child = subprocess.run(
        [setpriv, f"--inh-caps={DROP}", f"--bounding-set={DROP}", sys.executable, "-m",
         "pytest", "-q", "-p", "no:cacheprovider", request.node.nodeid],
        cwd=request.config.rootpath, env={**os.environ, WITHOUT_ROOT_POWERS: "1"},
        capture_output=True, text=True, timeout=600)
    assert child.returncode == 0 and "1 passed" in child.stdout, \
        child.stdout[-6000:] + child.stderr[-3000:]
    return False


def _unreadable_secret(root: Path) -> Path:
    folder = root / "skills" / SECRET
    folder.mkdir(parents=True)
    path = folder / "SKILL.md"
    path.write_text(f"---\nname: {SECRET}\ndescription: Rotate the production database "
                    "password. Use when asked to rotate credentials.\n---\n\n# Steps\nRotate it.\n")
    path.chmod(0)
    with pytest.raises(PermissionError):  # the premise: this process cannot read it
        path.read_bytes()
    return path


def _create_bisect(bank) -> None:
    bank.skills.create(BISECT, "Find the commit that introduced a bug with git bisect. Use "
                       "when a regression appeared between two versions.",
                       "Run git bisect start, mark good and bad.")


def _named(caught: pytest.ExceptionInfo, path: Path) -> None:
    assert str(path) in str(caught.value) and "permission denied" in str(caught.value)


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_an_unreadable_skill_is_named_as_unreadable(tmp_path, remote, request):
    if not file_modes_apply(request):
        return
    with bank_for(tmp_path, remote) as bank:
        bank.skills.create("pdf-tables", "Extract tables from PDF files into CSV. Use when the "
                           "user asks to pull tabular data out of a PDF.", "Use pdfplumber.")
        path = _unreadable_secret(bank.root)
        report = bank.skills.sync()
        assert str(path) in report.skipped
        for call in (lambda: bank.skills.load(SECRET),
                     lambda: bank.skills.update(SECRET, body="new body"),
                     lambda: bank.skills.delete(SECRET),
                     lambda: bank.skills.create(SECRET, "Something else. Use when testing.",
                                                "mine"),
                     lambda: bank.skills.save(SECRET, "Something else. Use when testing.",
                                              "mine")):
            with pytest.raises(UnreadableError) as caught:  # not "no skill named", not
                call()  # "already exists; change it with update"
            _named(caught, path)
        assert [(f.path, f.code) for f in bank.skills.unreadable_files()] == [
            (str(path), "unreadable")]
        with pytest.raises(NotFoundError) as unknown:  # an unknown name stays unknown
            bank.skills.load("no-such-skill")
        assert not isinstance(unknown.value, UnreadableError)
        path.chmod(0o644)  # nothing was written over it: readable again, it is a skill
        assert bank.skills.unreadable_files() == []
        assert SECRET in bank.skills.sync().added
        assert "Rotate it." in bank.skills.load(SECRET).body


def test_the_cli_names_an_unreadable_skill(cli_root, monkeypatch, request):
    if not file_modes_apply(request):
        return
    from skillbank.cli import app

    monkeypatch.setenv("SKILLBANK_CLI_OWNER", "0")
    runner = CliRunner()
    assert runner.invoke(app, ["--no-bundled", "skills", "new", "pdf-tables", "-d", "Extract "
                               "tables from PDF files. Use when asked for tables.", "-b",
                               "Use pdfplumber."]).exit_code == 0
    path = _unreadable_secret(cli_root)
    listed = runner.invoke(app, ["--no-bundled", "skills", "list"])
    assert listed.exit_code == 0 and "pdf-tables" in listed.stdout
    assert str(path) in listed.stderr and "permission denied" in listed.stderr
    for args in (["skills", "show", SECRET], ["skills", "update", SECRET, "-b", "new"],
                 ["skills", "delete", SECRET],
                 ["skills", "new", SECRET, "-d", "Something else. Use when testing.", "-b", "x"]):
        result = runner.invoke(app, ["--json", "--no-bundled", *args])
        error = json.loads(result.stderr.strip().splitlines()[-1])
        assert result.exit_code == 5, (args, result.output)
        assert str(path) in error["error"] and "cannot be read (permission denied)" in \
            error["error"], args


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_skill_made_unreadable_after_indexing_is_not_served(tmp_path, remote, request):
    if not file_modes_apply(request):
        return
    with bank_for(tmp_path, remote) as bank:
        _create_bisect(bank)
        assert BISECT in [h.name for h in bank.skills.search(BISECT_TASK)]
        path = bank.root / "skills" / BISECT / "SKILL.md"
        time.sleep(0.05)  # past the file system's timestamp tick: the chmod gets its own ctime
        path.chmod(0)
        with pytest.raises(UnreadableError) as caught:  # not the cached last good copy
            bank.skills.load(BISECT)
        _named(caught, path)
        report = bank.skills.sync()  # "0 changed, 2 unchanged" before: the mtime did not move
        assert any(f.code == "unreadable" and f.path == str(path) for f in report.findings)
        assert BISECT not in bank.skills.names()
        assert BISECT not in [h.name for h in bank.skills.search(BISECT_TASK)]
        with pytest.raises(UnreadableError):
            bank.skills.load(BISECT)
        path.chmod(0o644)
        bank.skills.sync()
        assert "git bisect start" in bank.skills.load(BISECT).body


def test_a_ctime_change_alone_is_read_once_then_remembered(tmp_path, monkeypatch):
    """Review (session 29): since the stat key holds the ctime, a change of the ctime alone
    (a chmod to the same mode, a chown, a hard link, a backup restoring modes, and every file
    once after the upgrade) made every later sync read every SKILL.md again, for good: the new
    key of a file whose content was the same was never written back. Fails before: 1 read at
    each of the syncs after the chmod, not 1 then 0."""
    from conftest import write_skill
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    folder = tmp_path / "skills"
    path = write_skill(folder, "knit-sweater", "Knit a wool sweater and rib the cuffs.")
    reads: list[str] = []
    real = Path.read_bytes

    def counted(self):
        if self.name == "SKILL.md":
            reads.append(str(self))
        return real(self)

    with Skillbank.open(tmp_path / "root", skill_roots=[folder], embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        time.sleep(0.05)  # past the racy window of the file's own write
        monkeypatch.setattr(Path, "read_bytes", counted)
        os.chmod(path, os.stat(path).st_mode)  # the same mode: only the ctime moves
        first = bank.skills.sync()
        after_first = len(reads)
        second = bank.skills.sync()
        assert first.unchanged == second.unchanged == 1
        assert after_first == 1 and len(reads) == 1, reads
        assert [h.name for h in bank.skills.search("knit a wool sweater")][:1] == ["knit-sweater"]


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_vendor_skill_that_cannot_be_read_is_not_taken_over(tmp_path, remote, request):
    """Review (session 29): `save` of a name a read-only root holds checks that the caller may
    change that skill; an indexed vendor skill whose SKILL.md turned unreadable raised
    UnreadableError in that check, which `save` took as "its file is gone: nothing to take
    over" and wrote the caller's copy, which then served everyone under the vendor's name.
    Fails before: the save returned the caller's skill."""
    if not file_modes_apply(request):
        return
    from conftest import write_skill
    from test_skill_trust import vendor_bank

    vendor = tmp_path / "vendor"
    path = write_skill(vendor, "csv-report", "Summarise a CSV file into a short report.",
                       "# Steps\nSum each column.\n")
    with vendor_bank(tmp_path / "root", vendor, remote) as bank:
        assert "Sum each column." in bank.skills.load("csv-report").body
        time.sleep(0.05)
        path.chmod(0)
        with pytest.raises(UnreadableError) as caught:
            bank.skills.save("csv-report", "Summarise a CSV.", "# Steps\nMine.\n")
        _named(caught, path)
        assert not (bank.root / "skills" / "csv-report").exists()  # nothing written
        path.chmod(0o644)
        assert "Sum each column." in bank.skills.load("csv-report").body


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_folder_that_cannot_be_looked_in_is_named(tmp_path, remote, request):
    """Left from hunt-disk (session 29): a skills folder of mode 0700 owned by another user hid
    its skills without a word: `skills list` and `skills sync` said nothing of it, and a skill
    indexed before was "removed". Now both name the folder and why. Fails before: no finding."""
    if not file_modes_apply(request):
        return
    with bank_for(tmp_path, remote) as bank:
        _create_bisect(bank)
        team = bank.root / "skills" / "team"
        team.mkdir()
        write = team / "deploy-app"
        write.mkdir()
        (write / "SKILL.md").write_text("---\nname: deploy-app\ndescription: Deploy the web app "
                                        "to Fly.io. Use when asked to deploy.\n---\n\nfly deploy\n")
        assert "deploy-app" in bank.skills.sync().added
        team.chmod(0)
        try:
            report = bank.skills.sync()
            named = [(f.path, f.code) for f in report.findings]
            assert (str(team), "unreadable") in named, named
            assert any("cannot be looked in (permission denied)" in f.message
                       for f in report.findings)
            assert [(f.path, f.code) for f in bank.skills.unreadable_files()] == [
                (str(team), "unreadable")]
            assert BISECT in bank.skills.names()  # the rest is served as before
        finally:
            team.chmod(0o755)
        assert "deploy-app" in bank.skills.sync().added
