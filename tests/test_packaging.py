"""The fixed layout installs under one name, in editable mode and as a built wheel."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import tarfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

CHECK = """
import importlib, json, sys
import skillbank
from skillbank.bank import bundled_skills_dir
mods = {m: importlib.import_module(m).__file__ for m in
        ("skillbank.memories.skills.skill_file", "skillbank.adapters", "skillbank.mcp_server",
         "skillbank.distill.llm")}
bare = []
for name in ("adapters", "plugins", "mcp_server", "skills"):
    try:
        importlib.import_module(name)
        bare.append(name)
    except ImportError:
        pass
folder = bundled_skills_dir()
print(json.dumps({"mods": mods, "bare": bare, "skills": str(folder),
                  "count": len(list(folder.glob("*/SKILL.md"))) if folder else 0,
                  "tiktoken": str(next(iter(__import__("pathlib").Path(skillbank.__file__).parent.glob("_tiktoken_cache/*")), ""))}))
"""


def run_check(cwd: Path, env: dict[str, str]) -> dict:
    import json

    out = subprocess.run([sys.executable, "-c", CHECK], cwd=cwd, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_editable_install_imports_the_layout(tmp_path):
    result = run_check(tmp_path, dict(os.environ))
    assert result["bare"] == []
    assert result["mods"]["skillbank.adapters"].startswith(str(REPO / "adapters"))
    assert result["count"] >= 5 and result["tiktoken"]


@pytest.mark.slow
def test_built_wheel_imports_the_layout_and_ships_skills(tmp_path):
    dist = tmp_path / "dist"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "--no-build-isolation",
         "-w", str(dist)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr[-2000:]
    wheel = next(dist.glob("skillbank-*.whl"))
    target = tmp_path / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--target", str(target), str(wheel)],
        capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stderr[-2000:]
    # Only the wheel's copy of skillbank may be importable: put it first, drop the editable hook.
    site = sysconfig.get_paths()["purelib"]
    env = {**os.environ, "PYTHONPATH": str(target), "PYTHONNOUSERSITE": "1"}
    result = run_check(tmp_path, env)
    for path in result["mods"].values():
        assert path.startswith(str(target)), (path, site)
    assert result["bare"] == []
    assert result["skills"].startswith(str(target)) and result["count"] >= 5
    assert result["tiktoken"].startswith(str(target))
    # The licence text and the metadata that names it; tomli where tomllib is missing
    # (hunt-wheel #4, session 38).
    info = next(target.glob("skillbank-*.dist-info"))
    assert (info / "licenses" / "LICENSE").read_text() == (REPO / "LICENSE").read_text()
    metadata = (info / "METADATA").read_text()
    assert "License-Expression: Apache-2.0" in metadata and "License-File: LICENSE" in metadata
    assert re.search(r"^Requires-Dist: tomli.*python_version < \"3\.11\"$", metadata, re.M)


@pytest.mark.slow
def test_the_sdist_carries_the_licence_and_no_partial_test_suite(tmp_path):
    """The sdist had no licence text (Apache-2.0 §4(a) asks redistributors to include it) and
    setuptools' default share of tests/: the test files without conftest.py, the helpers or
    tests/data, so most could not run. Now LICENSE ships and tests/ stays in the repository,
    where .ci/run runs it (hunt-wheel #4, session 38)."""
    build = subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--no-isolation", "--skip-dependency-check",
         "-o", str(tmp_path), str(REPO)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr[-2000:]
    with tarfile.open(next(tmp_path.glob("skillbank-*.tar.gz"))) as sdist:
        top = sdist.getnames()[0].split("/")[0]
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
        licence = sdist.extractfile(f"{top}/LICENSE").read().decode()
        pkg_info = sdist.extractfile(f"{top}/PKG-INFO").read().decode()
    assert licence == (REPO / "LICENSE").read_text()
    assert "Apache License" in licence and "Version 2.0, January 2004" in licence
    assert "License-Expression: Apache-2.0" in pkg_info and "License-File: LICENSE" in pkg_info
    assert sorted(name for name in names if name.split("/")[0] == "tests") == []
    assert "skillbank/tokens.py" in names and "adapters/langchain.py" in names
