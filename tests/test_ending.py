"""A server process ends without the interpreter's teardown (skillbank/ending.py).

The MCP server stopped by Ctrl-C right after `tools/list` died with SIGSEGV once at CI load:
its bank was still opening on a daemon thread inside native code while the interpreter tore
modules down. The crash itself is too rare to reproduce on demand; these tests pin what the fix
does instead: the process keeps what a normal exit keeps (atexit callbacks, which flush usage
events and queued writes; stdout; the exit code) and skips the teardown (a module global's
`__del__` never runs), also through the server's own entry point.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from test_multiprocess import env_for

#: A global whose finaliser runs only in the interpreter's teardown.
TEARDOWN_WITNESS = textwrap.dedent("""
    import atexit, sys

    class Witness:
        def __del__(self):
            sys.stderr.write("teardown ran\\n")

    witness = Witness()
    atexit.register(lambda: print("atexit ran", flush=False))
    print("buffered output", end="\\n", flush=False)
""")


def _run(code: str, tmp_path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env=env_for(tmp_path / "root"),
                          capture_output=True, text=True, timeout=300)


def test_end_process_keeps_atexit_output_and_code_and_skips_teardown(tmp_path):
    done = _run(TEARDOWN_WITNESS + "from skillbank.ending import end_process\nend_process(3)\n",
                tmp_path)
    assert done.returncode == 3
    assert done.stdout.splitlines() == ["buffered output", "atexit ran"]
    assert "teardown ran" not in done.stderr


def test_a_plain_exit_runs_the_teardown_the_witness_sees(tmp_path):
    """The witness works: without end_process the teardown runs it."""
    done = _run(TEARDOWN_WITNESS + "raise SystemExit(3)\n", tmp_path)
    assert done.returncode == 3
    assert "teardown ran" in done.stderr


def test_the_mcp_servers_entry_point_ends_without_the_teardown(tmp_path):
    """`main` (python -m skillbank.mcp_server, skillbank-mcp-server, skillbank serve) ends the
    process itself: here after refusing an unsafe start (code 2, its message kept)."""
    done = _run(TEARDOWN_WITNESS + "from skillbank.mcp_server.runner import main\n"
                "main(['--transport', 'http', '--host', '0.0.0.0', '--no-bundled'])\n"
                "print('main returned')\n", tmp_path)
    assert done.returncode == 2, done.stderr
    assert "refusing to serve on 0.0.0.0" in done.stderr
    assert "teardown ran" not in done.stderr
    assert "main returned" not in done.stdout


def test_a_busy_port_ends_the_http_server_without_the_teardown(tmp_path):
    """uvicorn gives up on a busy port with `sys.exit(3)`, just after the bank began opening on
    its thread: `main` ends that way too (code 3 kept), not through the teardown."""
    done = _run(TEARDOWN_WITNESS + "import socket\n"
                "busy = socket.socket(); busy.bind(('127.0.0.1', 0)); busy.listen(1)\n"
                "from skillbank.mcp_server.runner import main\n"
                "main(['--transport', 'http', '--port', str(busy.getsockname()[1]),"
                " '--no-bundled'])\n", tmp_path)
    assert done.returncode == 3, done.stderr[-2000:]
    assert "teardown ran" not in done.stderr
