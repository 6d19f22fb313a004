"""The Claude Code plugin and the client configs: manifests checked the way `claude plugin
validate` checks them, and the launcher run as on a fresh machine (empty HOME, a bare python3,
no network) until an MCP client lists the tools."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from conftest import REPO

PLUGIN = REPO / "plugins" / "claude-code"
LAUNCHER = PLUGIN / "bin" / "skillbank-mcp"
CONFIGS = REPO / "plugins" / "configs"
KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
SEMVER = re.compile(r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")
PLACEHOLDER = "/path/to/skillbank"


def load(path: Path) -> Any:
    return json.loads(path.read_text())


def pyproject_version() -> str:
    match = re.search(r'^version = "([^"]+)"', (REPO / "pyproject.toml").read_text(), re.M)
    assert match
    return match.group(1)


# Manifests ---------------------------------------------------------------------------------------
def test_plugin_manifest_has_what_claude_code_requires():
    manifest = load(PLUGIN / ".claude-plugin" / "plugin.json")
    assert KEBAB.match(manifest["name"]), manifest["name"]
    assert SEMVER.match(manifest["version"]) and manifest["version"] == pyproject_version()
    assert manifest["description"].strip() and manifest["author"]["name"].strip()
    assert set(manifest) <= {"name", "version", "description", "author", "homepage", "repository",
                             "license", "keywords", "commands", "agents", "hooks", "mcpServers",
                             "skills", "outputStyles", "lspServers"}


def test_marketplace_lists_the_plugin_with_the_same_name_and_version():
    market = load(REPO / ".claude-plugin" / "marketplace.json")
    assert KEBAB.match(market["name"]) and market["owner"]["name"].strip()
    manifest = load(PLUGIN / ".claude-plugin" / "plugin.json")
    entries = {p["name"]: p for p in market["plugins"]}
    entry = entries[manifest["name"]]
    assert (REPO / entry["source"]).resolve() == PLUGIN.resolve()
    assert entry.get("version", manifest["version"]) == manifest["version"]


def test_mcp_config_runs_the_launcher_inside_the_plugin():
    servers = load(PLUGIN / ".mcp.json")["mcpServers"]
    server = servers["skillbank"]
    words = [server["command"], *server.get("args", [])]
    paths = [w.replace("${CLAUDE_PLUGIN_ROOT}", str(PLUGIN)) for w in words
             if "${CLAUDE_PLUGIN_ROOT}" in w]
    assert paths, "the command must live in the plugin (${CLAUDE_PLUGIN_ROOT}), not on PATH"
    for path in paths:
        assert Path(path).is_file(), path
    assert server["command"] == "sh" and Path(paths[0]) == LAUNCHER


def test_launcher_is_a_posix_sh_script_and_no_python_file_ships_in_plugins():
    assert LAUNCHER.read_text().startswith("#!/bin/sh\n")
    assert os.access(LAUNCHER, os.X_OK)
    shell = shutil.which("dash") or shutil.which("sh")
    assert shell
    checked = subprocess.run([shell, "-n", str(LAUNCHER)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    python_files = [p for p in (REPO / "plugins").rglob("*") if p.suffix == ".py"
                    and not p.is_symlink() and "skills" not in p.relative_to(REPO / "plugins").parts]
    assert python_files == []
    skills = PLUGIN / "skills"
    assert skills.is_dir() and any(skills.glob("*/SKILL.md"))


def test_client_configs_start_the_same_launcher():
    expected = {"claude_desktop_config.json": "mcpServers", "cursor-mcp.json": "mcpServers",
                "vscode-mcp.json": "servers"}
    for name, key in expected.items():
        server = load(CONFIGS / name)[key]["skillbank"]
        assert server["command"] == "sh"
        launcher = server["args"][0].replace(PLACEHOLDER, str(REPO))
        assert Path(launcher) == LAUNCHER, name
    assert load(CONFIGS / "vscode-mcp.json")["servers"]["skillbank"]["type"] == "stdio"


# The launcher on a fresh machine -----------------------------------------------------------------
def build_wheel(tmp: Path) -> Path:
    """A skillbank wheel built offline from a copy of the sources (the repository's own build/
    folder is shared and left alone)."""
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, src / name)
    for name in ("skillbank", "adapters", "mcp_server", "skills"):
        shutil.copytree(REPO / name, src / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    wheels = tmp / "wheels"
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-index",
                           "--no-build-isolation", "-q", "-w", str(wheels), str(src)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    (wheel,) = wheels.glob("skillbank-*.whl")
    return wheel


def installed_dependencies(tmp: Path) -> Path:
    """The test environment's packages minus skillbank, as one folder for PYTHONPATH: the new
    virtualenv finds skillbank's dependencies installed, so pip needs no network."""
    import sysconfig

    site = Path(sysconfig.get_paths()["purelib"])
    deps = tmp / "deps"
    deps.mkdir()
    for entry in site.iterdir():
        if "skillbank" in entry.name.lower():
            continue
        (deps / entry.name).symlink_to(entry)
    return deps


@pytest.mark.slow
async def test_launcher_sets_up_a_fresh_machine_and_serves(tmp_path):
    plugin = tmp_path / "plugin"
    shutil.copytree(PLUGIN, plugin, symlinks=True)
    (plugin / "wheels").mkdir()
    shutil.copy2(build_wheel(tmp_path), plugin / "wheels")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    base = Path(getattr(sys, "_base_executable", sys.executable)).resolve()
    (bin_dir / "python3").symlink_to(base)  # a bare interpreter, outside any virtualenv
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
           "PYTHONPATH": str(installed_dependencies(tmp_path)), "PIP_NO_INDEX": "1",
           "ANONYMIZED_TELEMETRY": "False"}

    first = subprocess.run(["sh", str(plugin / "bin" / "skillbank-mcp"), "--setup"], env=env,
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=900)
    assert first.returncode == 0, first.stderr[-4000:]
    assert first.stdout == ""  # stdout is the MCP wire: the launcher never writes to it
    assert "creating a private virtualenv" in first.stderr
    assert "installing skillbank from the wheel shipped with the plugin" in first.stderr
    venv = home / ".local" / "share" / "skillbank" / "claude-plugin" / "venv"
    assert (venv / "bin" / "skillbank").is_file()

    again = subprocess.run(["sh", str(plugin / "bin" / "skillbank-mcp"), "--setup"], env=env,
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and "creating" not in again.stderr  # reused

    assert (venv / "bin" / "skillbank-mcp-server").is_file()
    # Clients start MCP servers in the user's project: nothing there may shadow a module the
    # server imports (`python -m` would put this folder first on sys.path).
    project = tmp_path / "project"
    (project / "skillbank").mkdir(parents=True)
    (project / "skillbank" / "__init__.py").write_text("raise SystemExit('shadowed skillbank')\n")
    (project / "anyio.py").write_text("raise SystemExit('shadowed anyio')\n")
    params = StdioServerParameters(command="sh", args=[str(plugin / "bin" / "skillbank-mcp"),
                                                       "--no-bundled"], env=env, cwd=str(project))
    async with Client(params, read_timeout_seconds=300) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
    assert {"find_skills", "memory_context", "forget"} <= tools
