"""`skillbank ui`: serve the memory browser (skillbank.ui) on this machine and open it.

Loopback by default. Bound to any other address it requires a token (given, or made up and
printed in the address to open); every write is CSRF- and origin-checked either way.
"""

from __future__ import annotations

import secrets
import socket
import threading
import webbrowser
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from skillbank.cli.common import state

TOKEN_ENV = "SKILLBANK_UI_TOKEN"


def ui(
    ctx: typer.Context,
    root_dir: Annotated[Optional[Path], typer.Option("--root", help="Memory root.")] = None,
    skills_dir: Annotated[Optional[list[Path]], typer.Option(
        "--skills-dir", exists=True, file_okay=False,  # as the global option: a typo is
        help="Extra read-only skill root (repeatable).")] = None,  # refused, never remembered
    host: Annotated[str, typer.Option(
        help="Address to listen on. Anything but loopback needs a token.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: any free one).")] = 8766,
    token: Annotated[Optional[str], typer.Option(
        envvar=TOKEN_ENV, help="Token the page asks for (default: none on loopback, a random "
        "one elsewhere).")] = None,
    no_browser: Annotated[bool, typer.Option(
        "--no-browser", help="Only print the address; do not open a browser.")] = False,
) -> None:
    """Browse, review and curate memory in a local web page (skills, guidelines, experiences,
    context preview, stats)."""
    from skillbank.errors import InvalidInputError
    from skillbank.ui.security import is_loopback

    st = state(ctx)
    if root_dir is not None:
        st.root = root_dir
    if skills_dir:
        st.skills_dirs = list(skills_dir)
    if token is not None and len(token) < 16:
        raise InvalidInputError("the token must be at least 16 characters")
    if not is_loopback(host) and not token:
        token = secrets.token_urlsafe(24)
    from skillbank.signals import ctrl_c_stopping

    # Ctrl-C (its documented stop) ends it with "stopped", exit 0, however it was started: one
    # started with `&` by a script inherits SIGINT ignored, and the first index (minutes on a
    # large root) ran on after it (skillbank/signals.py).
    with ctrl_c_stopping():
        try:
            _open_and_serve(st, host, port, token, no_browser)
        except KeyboardInterrupt:
            st.out.note("stopped")
            from skillbank.signals import end_if_abandoned

            end_if_abandoned()  # the bank was still opening (skillbank/signals.py)


def _open_and_serve(st: Any, host: str, port: int, token: str | None, no_browser: bool) -> None:
    from skillbank.errors import SkillbankError

    from skillbank.signals import interruptible

    sock = _bind(host, port)
    try:
        try:  # Ctrl-C while a server hangs (skillbank/signals.py)
            bank = interruptible(lambda: st.bank(sync="all"))
        except KeyboardInterrupt:
            st.abandon()
            raise
        watch = getattr(bank, "watch", None)
        if callable(watch):
            try:
                watch()  # keep the skill list current while the page is open
            except SkillbankError:
                pass
        url = _address(host, sock.getsockname()[1], token)
        _serve(bank, sock, host, token, url, open_browser=not no_browser,
               namespace=st.namespace)
    finally:
        sock.close()


def _bind(host: str, port: int) -> socket.socket:
    """Take the port now, so a busy one is a clear error, and port 0 a known free one."""
    from skillbank.errors import SkillbankError

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise SkillbankError(f"cannot listen on {host}:{port} ({exc.strerror or exc}); "
                             "choose another with --port (0 picks a free one)") from None
    sock.listen(64)
    sock.set_inheritable(True)
    return sock


def _address(host: str, port: int, token: str | None) -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else "[::1]" if host == "::" else (
        f"[{host}]" if ":" in host and not host.startswith("[") else host)
    return f"http://{shown}:{port}/" + (f"?token={token}" if token else "")


def _serve(bank: Any, sock: socket.socket, host: str, token: str | None, url: str, *,
           open_browser: bool, namespace: str | None = None) -> None:
    import uvicorn

    from skillbank.ui import Guard, create_app

    guard = Guard(host=host.strip("[]"), port=sock.getsockname()[1], token=token)
    from skillbank.local_scope import local_session_scope

    scope = local_session_scope(namespace, "ui")  # --namespace NS: the page shows NS alone
    from skillbank import scope as scopes

    scopes.set_process_face("ui")  # without --namespace too (the audit log)
    config = uvicorn.Config(create_app(bank, guard, scope), log_level="warning", access_log=False,
                            lifespan="off")
    server = uvicorn.Server(config)

    def announce() -> None:
        while not server.started and not server.should_exit:
            threading.Event().wait(0.05)
        if server.started:
            typer.echo(f"skillbank memory browser: {url}  (Ctrl-C stops it)")
            if open_browser:
                webbrowser.open(url)

    threading.Thread(target=announce, name="skillbank-ui-announce", daemon=True).start()
    server.run(sockets=[sock])
