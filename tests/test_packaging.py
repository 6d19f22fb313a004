"""The fixed layout installs under one name, in editable mode and as a built wheel."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
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
