"""The scan precheck judges a binary file by its content, not by its name, mode or place.

Review (session 22, #5): a harmless third-party skill was held as a critical
UNSCANNABLE_SCRIPT once its Python had run one time (`scripts/__pycache__/helpers.*.pyc`, a
binary file under `scripts/`), and so was a skill whose `assets/logo.png` kept the executable
bit a Windows-made zip left on it. Now data with +x or under `scripts/` is data, a pyc Python
wrote from the `.py` beside it is fine, and a binary that is code (an ELF, a hash-based pyc, a
`.sh` with a NUL) still holds.
"""

from __future__ import annotations

import os
import py_compile
import sys
from pathlib import Path

import pytest

from conftest import write_skill
from skillbank.memories.skills.scan import precheck

PNG = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + b"\0" * 64


def _skill(tmp_path: Path) -> Path:
    folder = write_skill(tmp_path / "vendor", "csv-stats", "Print row counts of a CSV file.").parent
    (folder / "scripts").mkdir()
    (folder / "scripts" / "helpers.py").write_text("def main():\n    print('rows')\n")
    return folder


def _pyc(folder: Path, source: Path, mode: str) -> Path:
    target = folder / "scripts" / "__pycache__" / f"helpers.{sys.implementation.cache_tag}.pyc"
    py_compile.compile(str(source), cfile=str(target), doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode[mode])
    return target


def test_the_pyc_python_writes_when_the_skill_runs_is_not_held(tmp_path):
    folder = _skill(tmp_path)
    _pyc(folder, folder / "scripts" / "helpers.py", "TIMESTAMP")
    assert precheck(folder) is None


@pytest.mark.parametrize("place", ["assets/logo.png", "scripts/logo.png", "assets/deck.pdf"])
def test_binary_data_with_the_executable_bit_or_under_scripts_is_data(tmp_path, place):
    folder = _skill(tmp_path)
    path = folder / place
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(PNG if place.endswith(".png") else b"%PDF-1.7\n\0\0binary")
    os.chmod(path, 0o755)
    assert precheck(folder) is None


@pytest.mark.parametrize("kind", ["elf", "hash-pyc", "orphan-pyc", "nul-sh"])
def test_binary_code_still_cannot_be_scanned(tmp_path, kind):
    folder = _skill(tmp_path)
    if kind == "elf":
        (folder / "scripts" / "tool").write_bytes(b"\x7fELF\x02\x01\x01\0" + b"\0" * 64)
        expected = "scripts/tool"
    elif kind == "nul-sh":
        (folder / "scripts" / "run.sh").write_bytes(b"#!/bin/sh\necho hi\n#\0\n")
        expected = "scripts/run.sh"
    else:
        source = folder / "scripts" / "helpers.py"
        if kind == "orphan-pyc":
            source = tmp_path / "helpers.py"
            source.write_text("def main():\n    print('PWNED')\n")
        mode = "UNCHECKED_HASH" if kind == "hash-pyc" else "TIMESTAMP"
        expected = _pyc(folder, source, mode).relative_to(folder).as_posix()
    found = precheck(folder)
    assert found is not None and found[0] == expected, found
    assert "binary file" in found[1]
