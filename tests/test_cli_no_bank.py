"""Commands that need no bank never open one (#27): help, a name check, validate answer without
importing Chroma or the model (they took 5.7-19.5 s on a loaded machine). And one way to make a
read-only skill the bank's own, named by both `skills new` and `skills update`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import write_skill
from test_cli import Run

PROBE = """
import sys
from skillbank.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exit:
    code = exit.code
heavy = sorted(m for m in ("chromadb", "onnxruntime", "skillbank.bank") if m in sys.modules)
print("HEAVY=" + ",".join(heavy), file=sys.stderr)
"""


@pytest.mark.parametrize("argv", [["--help"], ["skills", "--help"],
                                  ["skills", "new", "Bad_Name", "-d", "Does a thing"],
                                  ["skills", "validate", "{folder}"]])
def test_commands_that_need_no_bank_do_not_open_one(tmp_path, argv, cli_root):
    folder = tmp_path / "library"
    write_skill(folder, "pdf-merge", "Merge PDF files into one")
    args = [a.replace("{folder}", str(folder)) for a in argv]
    done = subprocess.run([sys.executable, "-c", PROBE, "--root", str(cli_root), *args],
                          capture_output=True, text=True, timeout=120)
    assert "HEAVY=\n" in done.stderr, done.stderr[-2000:]
    if "Bad_Name" in args:
        assert "invalid skill name 'Bad_Name'" in done.stderr
    assert not cli_root.exists()  # nothing was created for a command that needs no bank


def test_one_way_to_make_a_read_only_skill_the_banks_own(cli_root, tmp_path):
    run = Run()
    shared = tmp_path / "shared"
    write_skill(shared, "brand-guidelines", "Apply the brand guidelines to documents")
    (shared / "brand-guidelines" / "assets").mkdir()
    (shared / "brand-guidelines" / "assets" / "logo.txt").write_text("LOGO")
    base = ["--no-bundled", "--skills-dir", shared]
    new = run(*base, "skills", "new", "brand-guidelines", "-d", "Mine", code=4)
    update = run(*base, "skills", "update", "brand-guidelines", "-d", "Mine", code=5)
    advice = "make it the bank's own with `skillbank skills copy brand-guidelines`"
    for result in (new, update):
        assert advice in " ".join(result.stderr.split()), result.stderr
    copied = json.loads(run(*base, "--json", "skills", "copy", "brand-guidelines").stdout)
    assert copied["writable"] is True and str(cli_root) in copied["path"]
    assert any(r["path"] == "assets/logo.txt" for r in copied["resources"]), copied["resources"]
    changed = json.loads(run(*base, "--json", "skills", "update", "brand-guidelines",
                             "-d", "Our own brand guidelines").stdout)
    assert changed["description"] == "Our own brand guidelines"
    assert (shared / "brand-guidelines" / "SKILL.md").read_text().count("Our own") == 0
