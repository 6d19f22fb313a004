"""`[skill_scan] python` in skillbank.toml is a path like the file's others (s17's left item):
a relative one is read from the root, not from the folder a command runs in; `~` is expanded;
a bare interpreter name stays a PATH lookup."""

from __future__ import annotations

import os

from skillbank.memories.skills.trust import read_config


def _config(root, value: str) -> str | None:
    (root / "skillbank.toml").write_text(f'[skill_scan]\npython = "{value}"\n')
    return read_config(root)[2]


def test_a_relative_scanner_python_is_the_roots(tmp_path, monkeypatch):
    root = tmp_path / "root"
    root.mkdir()
    monkeypatch.chdir(tmp_path)  # a command typed elsewhere
    assert _config(root, ".scanner/bin/python") == str(root / ".scanner/bin/python")


def test_home_and_bare_names(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert _config(tmp_path, "~/.skill-scanner/bin/python") == os.path.join(
        str(tmp_path / "home"), ".skill-scanner/bin/python")
    assert _config(tmp_path, "python3.11") == "python3.11"
    assert _config(tmp_path, "/opt/scan/bin/python") == "/opt/scan/bin/python"
