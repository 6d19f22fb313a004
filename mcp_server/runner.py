"""Start the server: `main(argv)` for `python -m skillbank.mcp_server`, `run(options)` for the CLI.

Startup order is what makes the first answer fast:
1. (stdio) take the protocol's stdin/stdout away from everything else at once: fd 1 points at
   stderr from here on, so nothing a library prints can corrupt the wire; a thread starts
   reading the wire and answers a first `initialize` at once (`early.py`), before the SDK is
   imported;
2. import mcp and build the server (tools need no bank to be listed);
3. start the thread that opens the bank (Chroma, the model, index sync and warm-up, file
   watching; see `loader.py`); when the root's snapshot is provably current, that thread first
   builds the skill library over it, without Chroma, and `find_skills` answers from it until the
   bank's skills are ready (`skillbank/snapshot_search.py`);
4. serve. `initialize`, `tools/list` and `prompts/list` are answered while the bank is still
   opening; each tool awaits only the part of the bank it reads.
"""

from __future__ import annotations

import io
import logging
import os
import sys
from typing import Any, NoReturn, Sequence

from skillbank.mcp_server.options import ServeOptions, is_loopback, parse_args, program

log = logging.getLogger("skillbank.mcp")


class StartupError(Exception):
    """A configuration the server refuses to start with; the message says how to fix it."""


def _configure_logging(level: str) -> None:
    root = logging.getLogger()
    if not any(getattr(h, "_skillbank", False) for h in root.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        handler._skillbank = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    for handler in root.handlers:
        if getattr(handler, "_skillbank", False):
            handler.setLevel(level.upper())
    root.setLevel(level.upper())


def _claim_stdio() -> tuple[io.TextIOWrapper, io.TextIOWrapper]:
    """Private duplicates of fd 0/1 for the protocol; fd 0 -> /dev/null, fd 1 -> stderr."""
    wire_in = os.dup(0)
    wire_out = os.dup(1)
    for fd in (wire_in, wire_out):
        os.set_inheritable(fd, False)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    stdin = io.TextIOWrapper(os.fdopen(wire_in, "rb", buffering=0), encoding="utf-8",
                             errors="replace", newline=None)
    stdout = io.TextIOWrapper(os.fdopen(wire_out, "wb", buffering=0), encoding="utf-8",
                              newline="\n", write_through=True)
    return stdin, stdout


def check_options(options: ServeOptions) -> str | None:
    """The token HTTP requires, after refusing unsafe setups (raises StartupError)."""
    if options.transport not in ("stdio", "http"):
        raise StartupError(f"unknown transport {options.transport!r}; use 'stdio' or 'http'")
    if options.model_dir:  # named explicitly: it wins over SKILLBANK_MODEL_DIR, so it must hold one
        from skillbank.onnx_model import local_model_dir

        if local_model_dir(options.model_dir) is None:
            raise StartupError(
                f"--model-dir {options.model_dir}: no all-MiniLM-L6-v2 model there (looked for "
                "onnx/model.onnx and tokenizer.json in it and in its onnx/ folder); name the "
                "folder that holds them, or leave --model-dir out to use SKILLBANK_MODEL_DIR")
    if options.transport != "http":
        return None
    token = options.resolved_token()
    if not is_loopback(options.host) and not token and not options.tokens:
        raise StartupError(
            f"refusing to serve on {options.host}: any machine that can reach it could read and "
            "write this memory. Set a bearer token with --token or SKILLBANK_TOKEN, or bind "
            "to 127.0.0.1.")
    if not 0 < options.port < 65536:
        raise StartupError(f"--port must be between 1 and 65535, not {options.port}")
    if options.max_body_bytes < 1024:
        raise StartupError("--max-body-bytes must be at least 1024")
    return token


PRELOAD_ENV = "SKILLBANK_MCP_PRELOAD_MODEL"


def _preload_model(opts: ServeOptions) -> None:
    """Start building the embedding model's session now, on a thread: onnxruntime builds it
    mostly without the GIL, so it is done while mcp and Chroma import, instead of being waited
    for once the bank has opened (see `skillbank.onnx_model`). `SKILLBANK_MCP_PRELOAD_MODEL=0`
    turns this off."""
    if os.environ.get(PRELOAD_ENV, "1").strip().lower() in ("0", "false", "no"):
        return
    if os.environ.get("SKILLBANK_EMBEDDING", "").strip().lower() == "hash":
        return
    from skillbank import onnx_model
    from skillbank.settings import load_settings

    try:  # the folder the bank will use: options, then SKILLBANK_MODEL_DIR, then skillbank.toml
        model_dir = load_settings(opts.root, model_dir=opts.model_dir).model_dir
    except Exception:  # noqa: BLE001 - the bank reports a bad setting when it opens
        return
    onnx_model.preload(model_dir)


def run(options: Any = None, prog: str | None = None) -> int:
    """Serve until the client goes away (stdio) or the process is stopped (HTTP). Returns an
    exit code; refuses to start (code 2, a message on stderr headed by `prog`, the command that
    was run: `program()` when not given) on an unsafe configuration."""
    opts = ServeOptions.coerce(options)
    _configure_logging(opts.log_level)
    try:
        token = check_options(opts)
        tokens = None
        if opts.tokens and opts.transport == "http":
            from skillbank.errors import InvalidInputError
            from skillbank.mcp_server.identity import TokensFile

            try:
                tokens = TokensFile(opts.tokens)
            except InvalidInputError as exc:
                raise StartupError(str(exc)) from None
        elif opts.tokens:
            raise StartupError("--tokens is for --transport http (a stdio server serves the "
                               "one local user who started it)")
        session_scope = None
        if opts.transport == "stdio":
            from skillbank.errors import InvalidInputError
            from skillbank.mcp_server.identity import stdio_scope

            try:
                session_scope = stdio_scope(opts.namespace)
            except InvalidInputError as exc:
                raise StartupError(f"--namespace: {exc}") from None
            from skillbank import scope as scopes

            scopes.set_process_face("mcp-stdio")  # also without --namespace (the audit log)
        else:
            from skillbank import scope as scopes
            from skillbank.mcp_server.identity import FACE

            scopes.set_process_face(FACE)  # a call with no principal of its own (the audit log)
    except StartupError as exc:
        print(f"{prog or program()}: {exc}", file=sys.stderr, flush=True)
        return 2
    from skillbank.signals import ctrl_c_stops, sigterm_stops

    # Ctrl-C stops the server however it was started: one started with `&` by a script
    # inherits SIGINT ignored and ran on after the interrupt (skillbank/signals.py). SIGTERM
    # stops it the same way, the bank closed: it exited 143 and lost what the bank buffered.
    restore, restore_term = ctrl_c_stops(), sigterm_stops()
    try:
        return _serve(opts, token, tokens, session_scope)
    except KeyboardInterrupt:  # Ctrl-C while starting (the imports): stopped, as when serving
        return 0
    finally:
        restore_term()
        restore()


def _serve(opts: ServeOptions, token: str | None, tokens: Any, session_scope: Any) -> int:
    """Claim the wire (stdio), open the bank on its thread and serve until Ctrl-C or the
    client goes away."""
    wire = None
    if opts.transport == "stdio":
        from skillbank.mcp_server.early import EARLY_ENV, EarlyWire

        # Reading starts now, before the SDK is imported: a first `initialize` is answered at once.
        early = os.environ.get(EARLY_ENV, "1").strip().lower() not in ("0", "false", "no")
        wire = EarlyWire(*_claim_stdio(), answer_initialize=early).start()
    _preload_model(opts)
    from skillbank.quick_chroma import skip_override_checks

    skip_override_checks()  # Chroma imports ~0.25 CPU-s faster (see skillbank/quick_chroma.py)

    from skillbank.mcp_server.loader import BankHandle, early_for, opener_for

    made: dict[str, Any] = {}  # the embedding function the snapshot library and the bank share
    handle = BankHandle(opener=opener_for(opts, made), sync=True, watch=opts.watch,
                        early=early_for(opts, made))
    try:
        import anyio

        from skillbank.mcp_server.server import build_server

        handle.note("mcp_imported")

        if wire is None:
            import uvicorn  # noqa: F401 - imported before the loader thread starts importing

            from skillbank.mcp_server.http import serve_http
        # With a tokens file each principal's own scope says what it may do (role, trust); a
        # request with only the static token has none, and is trusted only with --trust.
        trusted = opts.transport == "stdio" or opts.trust or tokens is not None
        security = None
        if wire is None:  # over HTTP a retry may reach another process (hunt-sampling #2)
            from skillbank.mcp_server.loader import settings_for
            from skillbank.mcp_server.state_key import shared_security

            security = shared_security(handle, settings_for(opts))
        server = build_server(handle, trusted=trusted, log_level=opts.log_level,
                              request_state=security)
        handle.note("server_built")
        # Started once mcp is imported: the two imports would only take turns on the GIL.
        # Measured again with `initialize` answered early (A/B, 5 alternating cold starts, 140
        # skills): starting it before the mcp import made the first find_skills slower
        # (2.91 s vs 2.65 s median), not faster.
        handle.start()
        if wire is not None:
            from skillbank import scope as scopes

            with scopes.using(session_scope):  # every request of the session
                anyio.run(serve_stdio, server, wire)
        else:
            anyio.run(lambda: serve_http(server, host=opts.host, port=opts.port, token=token,
                                         max_body_bytes=opts.max_body_bytes,
                                         log_level=opts.log_level,
                                         json_response=not opts.http_sse, tokens=tokens,
                                         untrusted_namespace=None if opts.trust
                                         else _namespace(opts), handle=handle))
    except KeyboardInterrupt:
        pass
    finally:
        handle.close(wait=1.0)
        if wire is not None:
            # The SDK's read of the next line was abandoned on a worker thread that is not a
            # daemon: with the client still holding stdin, Python's exit waited on it for good
            # after Ctrl-C. An end-of-input wakes it (the reader puts the same at EOF).
            wire.lines.put(None)
    return 0


class _WireOut:
    """stdout for the SDK's writer: one whole line at a time under the wire's lock (the early
    `initialize` reply and our error replies share it), minus the SDK's reply to an
    `initialize` that was answered early."""

    def __init__(self, wire: Any) -> None:
        self._wire = wire
        self._pending: list[str] = []

    async def write(self, text: str) -> None:
        import anyio

        self._pending.append(text)
        if not text.endswith("\n"):
            return
        line, self._pending = "".join(self._pending), []
        if self._wire.drop_reply(line):
            return
        await anyio.to_thread.run_sync(self._wire.write_line, line)

    async def flush(self) -> None:
        return None


class _WireIn:
    """stdin lines for the SDK, from the wire's reader thread, after `wire.screen`: a malformed
    line is answered here with a JSON-RPC error (the SDK would drop it silently) and not handed
    on."""

    def __init__(self, wire: Any, out: _WireOut) -> None:
        self._wire = wire
        self._out = out

    def __aiter__(self) -> Any:
        return self._lines()

    async def _reply(self, replies: list[dict[str, Any]]) -> None:
        import anyio

        from skillbank.mcp_server import wire

        for reply in replies:
            await anyio.to_thread.run_sync(self._wire.write_line, wire.dumps(reply))

    async def _lines(self) -> Any:
        import anyio
        import mcp_types as types
        from pydantic import ValidationError

        from skillbank.mcp_server import wire

        while True:
            line = await anyio.to_thread.run_sync(self._wire.lines.get, abandon_on_cancel=True)
            if line is None:
                return
            replies = wire.screen(line)
            if replies:
                log.info("answered a malformed message: %s", replies[0]["error"]["message"])
                await self._reply(replies)
                continue
            if not line.strip():
                continue
            try:
                types.jsonrpc_message_adapter.validate_json(line, by_name=False)
            except ValidationError as exc:
                fields = sorted({".".join(str(p) for p in e["loc"][1:]) or "message"
                                 for e in exc.errors()})[:5]
                await self._reply([wire.error_reply(
                    wire.INVALID_REQUEST, "Invalid request: check the fields "
                    + ", ".join(fields) + "; " + wire.VALID_FORM, wire._usable_id(
                        _peek_id(line)))])
                continue
            yield line


def _peek_id(line: str) -> Any:
    import json

    try:
        parsed = json.loads(line)
    except ValueError:
        return None
    return parsed.get("id") if isinstance(parsed, dict) else None


async def serve_stdio(server: Any, wire: Any) -> None:
    """Serve one stdio client over `wire` (an `early.EarlyWire`, already reading)."""
    from mcp.server.stdio import stdio_server

    import anyio

    out = _WireOut(wire)
    lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async drives, with our streams
    async with anyio.create_task_group() as group:
        group.start_soon(_stop_on_ctrl_c, group.cancel_scope)
        async with stdio_server(stdin=_WireIn(wire, out), stdout=out) as (r, w):  # type: ignore[arg-type]
            await lowlevel.run(r, w, server.initialization_options())
        group.cancel_scope.cancel()  # the client went away: stop watching for Ctrl-C


async def _stop_on_ctrl_c(scope: Any) -> None:
    """Ctrl-C ends the session through the event loop's own signal handling, whichever thread
    the kernel gives the signal to. With only Python's handler, a SIGINT that a thread other than
    the main one received (the bank's loader, the wire's reader, a native pool) was not seen
    while the loop slept in epoll with nothing to do: the server ran on (skillbank/signals.py).
    The loop's handler writes to its wakeup fd from any thread, so the loop wakes at once."""
    import signal
    import threading

    import anyio

    if threading.current_thread() is not threading.main_thread():
        return  # `run` embedded on a thread: the loop cannot take signals there
    try:
        with anyio.open_signal_receiver(signal.SIGINT) as signals:
            async for _ in signals:
                scope.cancel()
                return
    except NotImplementedError:  # no loop signal handlers here (Windows): KeyboardInterrupt
        return


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> NoReturn:
    """`python -m skillbank.mcp_server [options]`, `skillbank-mcp-server` and `skillbank serve`:
    a process entry that never returns: the process ends here once the server stops (embed
    `run` instead). The bank's opening threads may still be inside Chroma's or the model's
    native code then, and the interpreter's teardown under them crashed the process (SIGSEGV);
    `skillbank.ending` exits without it, also when uvicorn gives up (`sys.exit(3)` on a busy
    port) or the server fails."""
    from skillbank.ending import end_process, exit_code

    from skillbank.errors import InvalidInputError

    try:
        code = run(parse_args(argv, prog), prog)
    except SystemExit as exc:
        code = exit_code(exc)
    except InvalidInputError as exc:  # a setting to fix, not a crash: say which
        print(f"{prog or program()}: {exc}", file=sys.stderr)
        code = 2
    except Exception:  # noqa: BLE001 - shown as Python would, then the same safe exit
        import traceback

        traceback.print_exc()
        code = 1
    end_process(code)


def _namespace(opts: Any) -> str:
    """The namespace the bank opens with (--namespace, else the root's settings)."""
    from skillbank.settings import load_settings

    return opts.namespace or load_settings(opts.root).namespace
