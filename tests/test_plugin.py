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
import textwrap
import time
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
def copy_sources(to: Path) -> Path:
    """What a skillbank build reads (pyproject.toml, README.md, LICENSE, MANIFEST.in, the
    package folders), copied."""
    to.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in"):
        shutil.copy2(REPO / name, to / name)
    for name in ("skillbank", "adapters", "mcp_server", "skills"):
        shutil.copytree(REPO / name, to / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return to


def build_wheel(tmp: Path) -> Path:
    """A skillbank wheel built offline from a copy of the sources (the repository's own build/
    folder is shared and left alone)."""
    src = copy_sources(tmp / "src")
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


class Machine:
    """A fresh machine for the launcher: an empty HOME, a bare python3 on PATH, skillbank's
    dependencies visible through PYTHONPATH and no package index (pip needs no network)."""

    def __init__(self, tmp: Path, plugin: Path) -> None:
        self.tmp = tmp
        self.plugin = plugin
        self.launcher = plugin / "bin" / "skillbank-mcp"
        self.bin = tmp / "bin"
        self.bin.mkdir(exist_ok=True)
        base = Path(getattr(sys, "_base_executable", sys.executable)).resolve()
        if not (self.bin / "python3").exists():
            (self.bin / "python3").symlink_to(base)  # a bare interpreter, outside any venv
        self.home = tmp / "home"
        self.home.mkdir(exist_ok=True)
        deps = tmp / "deps"
        self.env = {"PATH": f"{self.bin}:/usr/bin:/bin", "HOME": str(self.home),
                    "LANG": "C.UTF-8", "PIP_NO_INDEX": "1", "ANONYMIZED_TELEMETRY": "False",
                    "PYTHONPATH": str(deps if deps.exists() else installed_dependencies(tmp)),
                    "SKILLBANK_EMBEDDING": "hash"}
        self.plugin_home = self.home / ".local" / "share" / "skillbank" / "plugin"

    def run(self, *args: str, timeout: float = 900, **env: str) -> subprocess.CompletedProcess:
        return subprocess.run(["sh", str(self.launcher), *args], env={**self.env, **env},
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout)

    def start(self, *args: str, **env: str) -> "RawClient":
        return RawClient(subprocess.Popen(
            ["sh", str(self.launcher), *args], env={**self.env, **env}, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1))


class RawClient:
    """JSON-RPC lines to and from a launcher; stderr collected on a thread."""

    def __init__(self, proc: subprocess.Popen) -> None:
        import threading

        self.proc = proc
        self.stderr: list[str] = []
        self._next = 0
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)

    def request(self, method: str, params: dict[str, Any] | None = None,
                timeout: float = 120) -> dict[str, Any]:
        import select

        self._next += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next, "method": method}
        if params is not None:
            message["params"] = params
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        while True:
            ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
            assert ready, f"no answer to {method} in {timeout} s; stderr: {''.join(self.stderr)[-3000:]}"
            line = self.proc.stdout.readline()
            assert line, f"the launcher closed the wire; stderr: {''.join(self.stderr)[-3000:]}"
            reply = json.loads(line)
            if reply.get("id") == self._next:
                return reply

    def notify(self, method: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}) + "\n")
        self.proc.stdin.flush()

    def handshake(self) -> dict[str, Any]:
        reply = self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                            "clientInfo": {"name": "test", "version": "1"}})
        self.notify("notifications/initialized")
        return reply["result"]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(30)


def lock_is_free(lock: Path, within: float = 30.0) -> bool:
    """Whether the install lock can be taken (waiting for killed holders to be gone: SIGKILL
    is delivered, the process ends and the kernel drops its locks a moment later)."""
    import fcntl

    deadline = time.monotonic() + within
    while True:
        fd = os.open(lock, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False
        finally:
            os.close(fd)
        time.sleep(0.1)


def kill_setups(home: Path) -> None:
    """SIGKILL the processes this test's launcher started (found by the HOME in their command
    line or environment), pip included: the launcher and its setup, as a crash would."""
    import signal

    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            seen = (proc / "cmdline").read_bytes() + (proc / "environ").read_bytes()
        except OSError:
            continue
        if str(home).encode() in seen:
            try:
                os.kill(int(proc.name), signal.SIGKILL)
            except OSError:
                pass


@pytest.mark.slow
def test_launcher_survives_sigkill_mid_install_and_serves(tmp_path):
    """(#27) A first start answers initialize and tools/list at once and tool calls say "not
    ready yet, retry"; SIGKILL of the launcher and its setup mid-install leaves no lock behind
    (an OS file lock, not a folder); the next start removes the half-built virtualenv, installs
    again and serves; `--setup` in a terminal and a Claude Code start use one home."""
    plugin = tmp_path / "plugin"
    shutil.copytree(PLUGIN, plugin, symlinks=True)
    (plugin / "wheels").mkdir()
    shutil.copy2(build_wheel(tmp_path), plugin / "wheels")
    machine = Machine(tmp_path, plugin)

    # pip's install waits here until killed, so the SIGKILL lands mid-install on any machine
    # (a quiet one finished the install from the local wheel within the second it was given).
    stall = tmp_path / "stall-pip"
    stall.mkdir()
    (stall / "sitecustomize.py").write_text(textwrap.dedent(f"""
        import sys, time
        if sys.orig_argv[1:3] == ["-m", "pip"] and "install" in sys.orig_argv:
            open({str(tmp_path / "pip-stalled")!r}, "w").close()
            time.sleep(3600)
    """))
    first = machine.start("--no-bundled",
                          PYTHONPATH=f"{stall}{os.pathsep}{machine.env['PYTHONPATH']}")
    try:
        result = first.handshake()
        assert result["serverInfo"]["name"] == "skillbank"
        assert "io.modelcontextprotocol/skills" in result["capabilities"]["extensions"]
        tools = {t["name"] for t in first.request("tools/list")["result"]["tools"]}
        assert {"find_skills", "memory_context", "forget"} <= tools
        early = first.request("tools/call", {"name": "find_skills", "arguments": {"task": "x"}})
        assert early["result"]["isError"] is True
        assert "not ready yet" in early["result"]["content"][0]["text"]
        assert "Retry in" in early["result"]["content"][0]["text"]
        deadline = time.monotonic() + 600
        while not (tmp_path / "pip-stalled").exists():  # pip is at work
            assert time.monotonic() < deadline and first.proc.poll() is None, first.stderr
            time.sleep(0.2)
        # The line comes before pip starts, but the thread reading stderr may not have it yet
        # (a loaded CI machine: pip had stalled, the line was still in the pipe).
        while "installing skillbank from" not in "".join(first.stderr):
            assert time.monotonic() < deadline, first.stderr
            time.sleep(0.2)
        kill_setups(machine.home)
    finally:
        first.close()
    lock = machine.plugin_home / "install.lock"
    assert lock.is_file() and lock_is_free(lock)  # the kernel released it with its holder
    assert not (machine.plugin_home / "current").exists()
    half_built = list((machine.plugin_home / "venvs").iterdir())
    assert half_built  # what the killed setup left

    second = machine.start("--no-bundled", CLAUDE_PLUGIN_DATA=str(tmp_path / "claude-data"))
    try:
        second.handshake()
        assert second.request("tools/list")["result"]["tools"]
        deadline = time.monotonic() + 900
        while True:
            called = second.request("tools/call", {"name": "find_skills",
                                                   "arguments": {"task": "x"}}, timeout=300)
            if not called["result"].get("isError"):
                break
            assert "could not be set up" not in called["result"]["content"][0]["text"], called
            assert time.monotonic() < deadline, second.stderr
            time.sleep(2)
        assert "removing the unfinished virtualenv" in "".join(second.stderr)
    finally:
        second.close()
    for old in half_built:
        assert not (old / "bin" / "skillbank-mcp-server").exists() or old.name in \
            (machine.plugin_home / "current").read_text()
    assert not (tmp_path / "claude-data").exists()  # one home, whatever starts it

    again = machine.run("--setup", CLAUDE_PLUGIN_DATA=str(tmp_path / "other"), timeout=120)
    assert again.returncode == 0 and "creating" not in again.stderr, again.stderr
    assert again.stdout == ""

    # A corrupt virtualenv (its python gone) is set up again, not exec'd.
    venv = Path((machine.plugin_home / "current").read_text().split("\t")[1])
    (venv / "bin" / "python").unlink()
    repaired = machine.run("--setup", timeout=900)
    assert repaired.returncode == 0 and "creating a private virtualenv" in repaired.stderr

    # Clients start MCP servers in the user's project: nothing there may shadow a module the
    # server imports (`python -m` would put this folder first on sys.path).
    project = tmp_path / "project"
    (project / "skillbank").mkdir(parents=True)
    (project / "skillbank" / "__init__.py").write_text("raise SystemExit('shadowed skillbank')\n")
    (project / "anyio.py").write_text("raise SystemExit('shadowed anyio')\n")
    params = StdioServerParameters(command="sh", args=[str(machine.launcher), "--no-bundled"],
                                   env=machine.env, cwd=str(project))

    async def list_tools() -> set[str]:
        async with Client(params, read_timeout_seconds=300) as client:
            return {t.name for t in (await client.list_tools()).tools}

    import anyio

    assert {"find_skills", "memory_context", "forget"} <= anyio.run(list_tools)


def test_the_bootstrap_lists_what_the_server_lists():
    """The tools and prompts the bootstrap lists while installing are the server's own, by name
    and title (a client registers them at once). Schemas may lag a change: after the install the
    bootstrap sends tools/prompts list_changed and the client lists the server's own. Regenerate
    with `python -m skillbank.mcp_server.plugin_snapshot`."""
    from skillbank.mcp_server import plugin_snapshot

    shipped = json.loads(plugin_snapshot.TARGET.read_text())
    live = json.loads(plugin_snapshot.render(plugin_snapshot.snapshot()))
    stale = ("plugins/claude-code/bin/mcp-snapshot.json is stale: run "
             "`python -m skillbank.mcp_server.plugin_snapshot`")
    for kind in ("tools", "prompts"):
        assert [(t["name"], t.get("title")) for t in shipped[kind]] == \
            [(t["name"], t.get("title")) for t in live[kind]], stale
    assert shipped["instructions"] == live["instructions"], stale


@pytest.mark.parametrize("case", ["no-python", "old-python", "unwritable-home", "no-source"])
def test_launcher_bad_input_is_a_clear_message_never_a_hang(tmp_path, case):
    plugin = tmp_path / "plugin"
    shutil.copytree(PLUGIN, plugin, symlinks=True)  # outside a checkout: no source nearby
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("sed", "head", "cat", "dirname"):
        found = shutil.which(tool)
        assert found
        (bin_dir / tool).symlink_to(found)
    base = Path(getattr(sys, "_base_executable", sys.executable)).resolve()
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path / "home"), "LANG": "C.UTF-8"}
    if case == "old-python":
        (bin_dir / "python3").write_text("#!/bin/sh\necho 'Python 3.8.10'; exit 1\n")
        (bin_dir / "python3").chmod(0o755)
    elif case != "no-python":
        (bin_dir / "python3").symlink_to(base)
    if case == "unwritable-home":
        (tmp_path / "a-file").write_text("")
        env["SKILLBANK_PLUGIN_HOME"] = str(tmp_path / "a-file" / "plugin")
    done = subprocess.run([shutil.which("sh") or "/bin/sh", str(plugin / "bin" / "skillbank-mcp")],
                          env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 1 and done.stdout == "", done
    expected = {"no-python": "no python3 on PATH", "old-python": "older than Python 3.10",
                "unwritable-home": "cannot write to", "no-source": "SKILLBANK_SOURCE"}[case]
    assert expected in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert "pip" not in done.stderr.replace("SKILLBANK_PIP_ARGS", "")  # never went to an index


@pytest.mark.slow
def test_a_checkout_is_built_from_a_copy_so_a_killed_build_breaks_nothing(tmp_path):
    """pip builds a source folder in place (setuptools' build/ and egg-info): a setup killed
    mid-build left build/bdist…/skillbank-<v>.dist-info in the checkout, and every later setup
    failed with "File exists" (CI, the marketplace test). The launcher builds from a fresh
    copy under its home now: the checkout is never written and a stale build/ in it is not
    read; the copy is gone afterwards, and so is one a killed setup left."""
    import tomllib

    src = copy_sources(tmp_path / "checkout")
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    stale = src / "build" / "bdist.linux-x86_64" / "wheel" / f"skillbank-{version}.dist-info"
    stale.mkdir(parents=True)
    (stale / "METADATA").write_text("left by a build that was killed\n")
    before = sorted(str(p.relative_to(src)) for p in src.rglob("*"))

    plugin = tmp_path / "plugin"
    shutil.copytree(PLUGIN, plugin, symlinks=True, ignore=shutil.ignore_patterns("wheels"))
    machine = Machine(tmp_path, plugin)
    left = machine.plugin_home / "source-left-by-a-killed-setup" / "skillbank"
    left.mkdir(parents=True)
    ready = machine.run("--setup", SKILLBANK_SOURCE=str(src),
                        SKILLBANK_PIP_ARGS="--no-build-isolation")
    assert ready.returncode == 0, ready.stderr[-3000:]
    assert (machine.plugin_home / "current").exists()
    assert sorted(str(p.relative_to(src)) for p in src.rglob("*")) == before
    assert not list(machine.plugin_home.glob("source-*"))


@pytest.mark.slow
def test_claude_code_installs_the_plugin_from_a_local_marketplace(tmp_path):
    """(#27 acceptance) `claude` from npm on a fresh HOME: marketplace add, plugin install,
    `claude mcp list` connects while skillbank is still installing; SIGKILL of everything the
    launcher started mid-install; the next start connects, the setup completes and the real
    server answers tools/list and a tool call; `claude mcp list` shows it connected."""
    from node_tools import tool

    claude = tool("claude")
    market = tmp_path / "market"  # a copy: pip builds in the source folder
    market.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, market / name)
    for name in ("skillbank", "adapters", "mcp_server", "skills", "plugins", ".claude-plugin"):
        shutil.copytree(REPO / name, market / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "wheels"))
    machine = Machine(tmp_path, market / "plugins" / "claude-code")
    env = {**machine.env, "PATH": f"{machine.bin}:{Path(claude).parent}:/usr/bin:/bin",
           "SKILLBANK_PIP_ARGS": "--no-build-isolation", "DISABLE_TELEMETRY": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}

    def run_claude(*args: str) -> subprocess.CompletedProcess:
        done = subprocess.run([claude, *args], env=env, cwd=tmp_path, capture_output=True,
                              text=True, timeout=300, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, (args, done.stdout[-2000:], done.stderr[-2000:])
        return done

    run_claude("plugin", "marketplace", "add", str(market))
    run_claude("plugin", "install", "skillbank@skillbank")

    def connected() -> bool:
        listed = run_claude("mcp", "list").stdout
        line = next((ln for ln in listed.splitlines() if "skillbank" in ln), "")
        assert line, listed
        return "Connected" in line and "Failed" not in line

    assert connected()  # answered while the setup had just begun
    setup_log = machine.plugin_home / "setup.log"
    deadline = time.monotonic() + 600
    while "installing skillbank from" not in (setup_log.read_text() if setup_log.exists() else ""):
        assert time.monotonic() < deadline, "the setup never started"
        time.sleep(0.2)
    time.sleep(1.0)
    kill_setups(machine.home)  # the launcher, its detached setup and pip: SIGKILL
    assert lock_is_free(machine.plugin_home / "install.lock")

    assert connected()  # a new start, a new setup
    ready = machine.run("--setup", timeout=900, SKILLBANK_PIP_ARGS="--no-build-isolation")
    assert ready.returncode == 0, ready.stderr[-3000:]
    client = machine.start("--no-bundled")
    try:
        client.handshake()
        assert {t["name"] for t in client.request("tools/list")["result"]["tools"]} >= {"find_skills"}
        called = client.request("tools/call", {"name": "find_skills", "arguments": {"task": "x"}},
                                timeout=300)
        assert not called["result"].get("isError"), called
    finally:
        client.close()
    assert connected()


def test_the_bootstrap_answers_each_request_of_a_batch_before_the_hand_over(tmp_path):
    """While skillbank installs, the bootstrap answers in the server's place. A JSON-RPC batch
    got one error with no id, so a client waiting on each request's id waited for ever; now each
    request gets its own error, as the server answers on stdio."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLBANK_")}
    # The setup fails at once (pip refuses the option): nothing installs in the background.
    env.update(SKILLBANK_PLUGIN_HOME=str(tmp_path / "home"), SKILLBANK_SOURCE=str(REPO),
               SKILLBANK_PIP_ARGS="--no-such-pip-option")
    proc = subprocess.Popen([sys.executable, str(PLUGIN / "bin" / "skillbank-bootstrap")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        batch = [{"jsonrpc": "2.0", "id": 7, "method": "tools/list"},
                 {"jsonrpc": "2.0", "id": "eight", "method": "ping"},
                 {"jsonrpc": "2.0", "method": "notifications/initialized"}]
        proc.stdin.write(json.dumps(batch) + "\n")
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping"}) + "\n")
        proc.stdin.flush()
        replies = {}
        while 9 not in replies:  # the ping after the batch: every answer to the batch is in
            line = proc.stdout.readline()
            assert line, "the bootstrap ended without answering"
            reply = json.loads(line)
            if "id" in reply:
                replies[reply["id"]] = reply
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=120)
    for request_id in (7, "eight"):
        assert replies[request_id]["error"]["code"] == -32600
        assert "batch" in replies[request_id]["error"]["message"]
    assert replies[9]["result"] == {}
    assert None not in replies
