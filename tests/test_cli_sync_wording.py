"""What `skills sync` says of a skill left out for a same-named one (hunt-corpus #8, session 30).

Both copies of 92 duplicate names sat in the one skills folder of the corpus, the winner chosen
by path order, yet the summary said "shadowed by a same-named skill in an earlier root"."""

from __future__ import annotations

from conftest import write_skill
from test_cli import Run


def test_a_duplicate_in_the_same_root_is_not_said_to_be_in_an_earlier_root(cli_root):
    """Fails before: the line named "an earlier root" though there is one root."""
    skills = cli_root / "skills"
    write_skill(skills / "aaa-collection", "pdf", "Fill in PDF forms and merge PDF files.")
    write_skill(skills / "zzz-collection", "pdf", "Another copy of the PDF skill.")
    out = " ".join(Run()("--no-bundled", "skills", "sync").stdout.split())
    assert "same-named skill in an earlier root" not in out, out
    assert ("1 skills shadowed by a same-named skill that comes first (in an earlier root, or "
            "at an earlier path of the same root; not served;") in out, out
    report = Run().json("--no-bundled", "skills", "sync")
    [finding] = [f for f in report["findings"] if f["code"] == "shadowed"]
    assert "zzz-collection" in finding["path"] and "aaa-collection" in finding["message"]
