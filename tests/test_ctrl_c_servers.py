"""The long-running servers stop on Ctrl-C, however they were started.

A job started with `&` by a non-interactive shell inherits SIGINT as *ignored* (exec keeps it),
and Python then installs no KeyboardInterrupt: such a server ran on after the interrupt a
script, a supervisor or a test sent it. Each test starts the server twice, with SIGINT ignored
(as `cmd &` in a script) and as at a terminal, waits until it serves or is provably inside its
start (read from its output or a connection, never a sleep), sends SIGINT and expects a clean
exit (code 0, no traceback) within a ceiling meant for a loaded machine, not as a speed.
`skills watch` has its own test (tests/test_cli_watch.py); all use `skillbank.signals`.

Before the fix: the stdio MCP server never ended, either way (ignored: the signal was dropped;
at a terminal: the SDK's read of the next line was left blocked on a worker thread that is not
a daemon, and Python's exit waited on it while the client held stdin). The servers on uvicorn
(HTTP MCP, the team worker, the browser) stopped once serving, since uvicorn installs its own
handler while it serves, but not while they start: a team worker opening its bank (PostgreSQL,
a Chroma server, the first sync) or the browser's first index (minutes on a large root) ran on
after Ctrl-C when started with `&`. Those tests hold the start open with a server that accepts
and never answers, and interrupt it there.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import uuid
from typing import Any

import pytest

from conftest import free_port
from test_cli_watch import skillbank_command
from test_multiprocess import env_for

pytestmark = pytest.mark.slow

#: A ceiling for a loaded machine, not a speed.
CEILING = 120.0
STARTS = ["sigint-ignored", "sigint-default"]


def _start(command: list[str], how: str, **popen: Any) -> subprocess.Popen:
    """`command` with SIGINT ignored, or as at a terminal: set either way, since the test run
    itself may have been started with it ignored (the children would inherit that)."""
    handler = signal.SIG_IGN if how == "sigint-ignored" else signal.SIG_DFL
    return subprocess.Popen(command, preexec_fn=lambda: signal.signal(signal.SIGINT, handler),
                            **popen)


def _lines(stream: Any) -> "queue.Queue[str | None]":
    """The stream's lines, read on a thread (None at its end)."""
    lines: queue.Queue = queue.Queue()

    def read() -> None:
        for line in stream:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    return lines


def _wait_for(lines: "queue.Queue[str | None]", wanted: Any, proc: subprocess.Popen,
              seen: list[str]) -> str:
    """The first line `wanted(line)` accepts (fails when the stream ends first)."""
    deadline = time.monotonic() + 300  # start-up under load
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=5)
        except queue.Empty:
            continue
        if line is None:
            pytest.fail(f"the server ended before it served (code {proc.wait()}): "
                        + "".join(seen)[-3000:])
        seen.append(line)
        if wanted(line):
            return line
    pytest.fail("the server did not start within 300 s: " + "".join(seen)[-3000:])


def _interrupt(proc: subprocess.Popen, what: str) -> int:
    proc.send_signal(signal.SIGINT)
    try:
        return proc.wait(timeout=CEILING)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{what} did not stop within {CEILING:g} s of Ctrl-C") from None


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def _send(proc: subprocess.Popen, *messages: dict[str, Any]) -> None:
    for message in messages:
        proc.stdin.write(json.dumps(message) + "\n")
    proc.stdin.flush()


def _until_it_serves(proc: subprocess.Popen) -> "queue.Queue[str | None]":
    """Handshake with a stdio server and wait for its tools/list, which the SDK answers
    (`initialize` may be answered before it is even imported): the server is inside its
    event loop then. Returns its further stdout lines."""
    _send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
              "protocolVersion": "2025-06-18", "capabilities": {},
              "clientInfo": {"name": "test", "version": "1"}}},
          {"jsonrpc": "2.0", "method": "notifications/initialized"},
          {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    lines = _lines(proc.stdout)
    _wait_for(lines, lambda line: json.loads(line).get("id") == 2, proc, [])
    return lines


@pytest.mark.parametrize("how", STARTS)
def test_ctrl_c_stops_the_stdio_mcp_server(tmp_path, how):
    """Serving (the SDK answered tools/list), the client still holding stdin: Ctrl-C ends it."""
    proc = _start([sys.executable, "-m", "skillbank.mcp_server", "--no-bundled"], how,
                  env=env_for(tmp_path / "root"), text=True, stdin=subprocess.PIPE,
                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    errors: list[str] = []
    threading.Thread(target=lambda: errors.extend(proc.stderr), daemon=True).start()
    try:
        _until_it_serves(proc)
        code = _interrupt(proc, "the stdio MCP server")
        time.sleep(0.2)  # the stderr reader's last lines
        assert code == 0, "".join(errors)[-3000:]
        assert "Traceback" not in "".join(errors), "".join(errors)[-3000:]
    finally:
        _stop(proc)
        proc.stdin.close()


@pytest.mark.parametrize("how", STARTS)
def test_ctrl_c_stops_the_http_mcp_server(tmp_path, how):
    proc = _start([sys.executable, "-m", "skillbank.mcp_server", "--no-bundled", "--transport",
                   "http", "--port", str(free_port())], how, env=env_for(tmp_path / "root"),
                  text=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                  stderr=subprocess.PIPE)
    try:
        seen: list[str] = []
        lines = _lines(proc.stderr)
        _wait_for(lines, lambda line: "skillbank MCP server on" in line, proc, seen)
        code = _interrupt(proc, "the HTTP MCP server")
        while (line := lines.get(timeout=30)) is not None:
            seen.append(line)
        assert code == 0 and "Traceback" not in "".join(seen), "".join(seen)[-3000:]
    finally:
        _stop(proc)


@pytest.mark.parametrize("how", STARTS)
def test_ctrl_c_stops_the_memory_browser(tmp_path, how):
    """`skillbank ui` says "(Ctrl-C stops it)": it does, with "stopped" and exit 0."""
    proc = _start([*skillbank_command(), "--no-bundled", "ui", "--no-browser", "--port", "0"],
                  how, env=env_for(tmp_path / "root"), text=True, stdin=subprocess.DEVNULL,
                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _wait_for(_lines(proc.stdout), lambda line: "memory browser: http" in line, proc, [])
        code = _interrupt(proc, "skillbank ui")
        errors = proc.stderr.read()
        assert code == 0 and "stopped" in errors, (code, errors[-3000:])
        assert "Traceback" not in errors, errors[-3000:]
    finally:
        _stop(proc)
        proc.stdout.close()
        proc.stderr.close()


@pytest.mark.parametrize("how", STARTS)
def test_ctrl_c_stops_a_team_worker(tmp_path, postgres, chroma_server, how):
    """`skillbank server` (real PostgreSQL and `chroma run`): serving (/healthz answers),
    Ctrl-C closes the bank and exits 0, without a traceback."""
    import httpx

    from mcp_http import team_env, wait_until_serving

    root = tmp_path / "worker"
    root.mkdir()
    port = free_port()
    log = tmp_path / "worker.log"
    with log.open("w") as out:
        proc = _start([sys.executable, "-m", "skillbank.team.server", "--root", str(root),
                       "--chroma-url", chroma_server, "--database-url", postgres.url,
                       "--deployment", uuid.uuid4().hex[:12], "--port", str(port)], how,
                      env=team_env(), stdout=out, stderr=subprocess.STDOUT, cwd=str(tmp_path))
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_serving(proc, url, log, probe="/healthz", status=200, seconds=300)
        assert httpx.get(url + "/healthz", timeout=30).status_code == 200
        code = _interrupt(proc, "the team worker")
        text = log.read_text()
        assert code == 0 and "Traceback" not in text, (code, text[-3000:])
    finally:
        _stop(proc)


class Silent:
    """A loopback port that accepts connections and never answers: a Chroma server or a
    PostgreSQL that hangs. `reached` is set once a connection came in."""

    def __init__(self) -> None:
        import socket

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.reached = threading.Event()
        self.held: list[Any] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)
            self.reached.set()

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


def _interrupt_start(command: list[str], how: str, silent: Silent, what: str,
                     **popen: Any) -> tuple[int, str]:
    """Start `command`, Ctrl-C it once it reached `silent` (inside its start): (code, output)."""
    proc = _start(command, how, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                  stderr=subprocess.STDOUT, text=True, **popen)
    try:
        output = _lines(proc.stdout)
        if not silent.reached.wait(300):
            pytest.fail(f"{what} never connected")
        code = _interrupt(proc, what)
        seen = []
        while (line := output.get(timeout=30)) is not None:
            seen.append(line)
        return code, "".join(seen)
    finally:
        _stop(proc)
        silent.close()


@pytest.mark.parametrize("how", STARTS)
def test_ctrl_c_stops_a_team_worker_while_it_opens_its_bank(tmp_path, how):
    """Its PostgreSQL or its Chroma server hangs: Ctrl-C still ends the start, cleanly (before:
    started with `&`, it waited on; at a terminal, a KeyboardInterrupt traceback)."""
    from mcp_http import team_env

    silent = Silent()
    at = f"127.0.0.1:{silent.port}"
    code, text = _interrupt_start(
        [sys.executable, "-m", "skillbank.team.server", "--root", str(tmp_path / "worker"),
         "--chroma-url", f"http://{at}", "--database-url", f"postgresql://worker@{at}/team",
         "--deployment", "ctrl-c", "--port", str(free_port())], how, silent, "the team worker",
        env=team_env(), cwd=str(tmp_path))
    assert code == 0 and "stopped (Ctrl-C)" in text, (code, text[-3000:])
    assert "Traceback" not in text, text[-3000:]


#: Started in the server by `sitecustomize`: a Python thread that leaves SIGINT unblocked, as
#: numpy's OpenBLAS workers or onnxruntime's pool do, writing its thread id to a file.
BYSTANDER = """
import os, threading, time

def _bystander():
    with open(os.environ["BYSTANDER_TID"], "w") as out:
        out.write(str(threading.get_native_id()))
    while True:
        time.sleep(3600)

threading.Thread(target=_bystander, daemon=True, name="bystander").start()
"""


def _with_bystander(env: dict[str, str], tmp_path) -> tuple[dict[str, str], Any]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BYSTANDER)
    tid = tmp_path / "bystander.tid"
    env = dict(env, BYSTANDER_TID=str(tid), OPENBLAS_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([str(site), env.get("PYTHONPATH", "")]))
    return env, tid


def _ctrl_c_to_the_bystander(proc: subprocess.Popen, tid_file: Any) -> None:
    """SIGINT to the bystander thread only (tgkill), as the kernel may deliver a Ctrl-C."""
    import ctypes

    tid = int(tid_file.read_text())
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.tgkill(proc.pid, tid, signal.SIGINT) != 0:
        raise OSError(ctypes.get_errno(), "tgkill")


@pytest.mark.parametrize("command", ["ui", "team worker"])
def test_ctrl_c_that_another_thread_receives_stops_a_start_that_hangs(tmp_path, request,
                                                                      command):
    """The kernel may give a process's SIGINT to any thread that does not block it; Python runs
    the handler only when the main thread executes bytecode. Before the fix, the main thread sat
    in recv() on a server that never answers, and `skillbank ui` ran on after Ctrl-C (about one
    CI-like run in six). Now the blocking open runs on a helper and the main thread looks up
    every 0.2 s (skillbank.signals.interruptible). The team worker gets a real PostgreSQL, so it
    hangs on the Chroma server (no timeout there; PostgreSQL's connect times out in 5 s)."""
    from mcp_http import team_env

    silent = Silent()
    at = f"127.0.0.1:{silent.port}"
    if command == "ui":
        argv = [*skillbank_command(), "--chroma-url", f"http://{at}", "--no-bundled", "ui",
                "--no-browser", "--port", "0"]
        env = env_for(tmp_path / "root")
    else:
        postgres = request.getfixturevalue("postgres")
        argv = [sys.executable, "-m", "skillbank.team.server", "--root", str(tmp_path / "w"),
                "--chroma-url", f"http://{at}", "--database-url", postgres.url,
                "--deployment", uuid.uuid4().hex[:12], "--port", str(free_port())]
        env = team_env()
    env, tid_file = _with_bystander(env, tmp_path)
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, cwd=str(tmp_path))
    try:
        output = _lines(proc.stdout)
        if not silent.reached.wait(300):
            pytest.fail(f"{command} never connected")
        _ctrl_c_to_the_bystander(proc, tid_file)
        try:
            code = proc.wait(timeout=CEILING)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{command} did not stop within {CEILING:g} s of a Ctrl-C "
                                 "that another thread received") from None
        seen = []
        while (line := output.get(timeout=30)) is not None:
            seen.append(line)
        text = "".join(seen)
        assert code == 0 and "stopped" in text and "Traceback" not in text, (code, text[-3000:])
    finally:
        _stop(proc)
        silent.close()


def test_ctrl_c_that_another_thread_receives_stops_the_stdio_mcp_server(tmp_path):
    """Serving and idle (the event loop asleep in epoll): before the fix a SIGINT that another
    thread received was never acted on and the server ran on; the loop now watches SIGINT
    itself (mcp_server/runner.py, `_stop_on_ctrl_c`)."""
    env, tid_file = _with_bystander(env_for(tmp_path / "root"), tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "skillbank.mcp_server", "--no-bundled"],
                            env=env, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    errors: list[str] = []
    threading.Thread(target=lambda: errors.extend(proc.stderr), daemon=True).start()
    try:
        lines = _until_it_serves(proc)
        # A call that waits for the bank: once answered the bank is open and the loop idle.
        _send(proc, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "memory_context", "arguments": {"task": "parse a date"}}})
        _wait_for(lines, lambda line: json.loads(line).get("id") == 3, proc, [])
        _ctrl_c_to_the_bystander(proc, tid_file)
        try:
            code = proc.wait(timeout=CEILING)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the stdio MCP server did not stop within {CEILING:g} s of a "
                                 "Ctrl-C that another thread received") from None
        time.sleep(0.2)  # the stderr reader's last lines
        assert code == 0 and "Traceback" not in "".join(errors), "".join(errors)[-3000:]
    finally:
        _stop(proc)
        proc.stdin.close()


@pytest.mark.parametrize("how", STARTS)
def test_ctrl_c_stops_the_memory_browser_while_it_opens(tmp_path, how):
    """The memory's Chroma server hangs while the browser opens the bank: Ctrl-C ends it."""
    silent = Silent()
    code, text = _interrupt_start(
        [*skillbank_command(), "--chroma-url", f"http://127.0.0.1:{silent.port}",
         "--no-bundled", "ui", "--no-browser", "--port", "0"], how, silent, "skillbank ui",
        env=env_for(tmp_path / "root"))
    assert code == 0 and "stopped" in text, (code, text[-3000:])
    assert "Traceback" not in text, text[-3000:]
