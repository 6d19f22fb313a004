"""A short-lived background owner of the memory root, for people typing commands (#27).

Why: a cold `skillbank stats` on a 1,750-skill library paid seconds to import Chroma and the
model, open the index and check every skill folder; while another process owns the root
(`skillbank serve`), a command attaches to it over the root's socket and skips all that
(1.1-1.3 s in the issue's measurements). So an interactive command (stdout or stderr is a
terminal) that finds no owner starts one in the background (its own session, output in
`<root>/.cli-owner.log`) and attaches to it; the owner watches the skill folders, and exits once
no command has touched `<root>/.cli-owner.touch` for `SKILLBANK_CLI_OWNER_IDLE` seconds
(default 600). Nothing lingers after a script or a test: they are not terminals, so they open
the root themselves as before. `SKILLBANK_CLI_OWNER=1` asks for the owner anyway, `=0` never.

Chosen over a long-lived daemon (nothing to install or stop; it ends by itself) and over making
the cold path itself fast (the imports alone, Chroma and onnxruntime, cost more than the
one-second target on this machine).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, ContextManager

from skillbank.fsutil import open_journal

ENV = "SKILLBANK_CLI_OWNER"
IDLE_ENV = "SKILLBANK_CLI_OWNER_IDLE"
TOUCH = ".cli-owner.touch"
PIDFILE = ".cli-owner.pid"
LOG = ".cli-owner.log"
START_LOCK = ".cli-owner.lock"  # held while a command starts an owner (see `_starting`)
ARGS = ".cli-owner.json"  # what the running owner serves (its skill folders, model, bundled)


def wanted(json_mode: bool) -> bool:
    """Whether this command should use (and start) a background owner."""
    choice = os.environ.get(ENV, "").strip().lower()
    if choice in ("0", "false", "no"):
        return False
    if choice in ("1", "true", "yes"):
        return True
    try:
        # A person at a terminal reads the answer on stdout; `skillbank --json stats | jq` or a
        # script is not interactive even with stderr on the terminal, and a background owner
        # holding the root for minutes would surprise the Python process that opens it next
        # (found in review).
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except (OSError, ValueError):
        return False


def _running(root: Path) -> tuple[int, bool] | None:
    """(pid, ready) of a live background owner of `root`, or None."""
    try:
        pid_text, _, state = (root / PIDFILE).read_text().partition(" ")
        pid = int(pid_text)
    except (OSError, ValueError):
        return None
    return (pid, state.strip() == "ready") if _alive(pid) else None


def _starting(root: Path) -> ContextManager[None]:
    """Held while a command decides to start an owner and records its pid: two commands typed
    at once start one owner, not two. An OS lock, released by the kernel if the command dies."""
    from skillbank.fsutil import exclusive_lock

    return exclusive_lock(root / START_LOCK)


def ensure(root: Path, options: dict[str, Any], wait: float = 120.0,
           announce: Callable[[str], None] | None = None) -> bool:
    """Touch the root's activity mark, start a background owner when none runs, and wait until
    it owns the root. False when it could not (the caller opens the root itself). `announce`
    is told, in a sentence for people, when this command starts one."""
    # The owner runs elsewhere (see `_BOOT`): every path it is given must not depend on ours.
    root = Path(os.path.abspath(root))
    try:
        from skillbank.fsutil import make_root

        make_root(root)  # a new root is private (0700), as the bank makes it
        (root / TOUCH).touch()
    except OSError:
        return False
    found = _running(root)
    if found is None and _served_by_another(root):
        return False  # `skillbank serve`, the MCP server, a Python process...: attach to it
    model_dir = options.get("model_dir")
    asked = _serves([os.path.abspath(os.path.expanduser(f))
                     for f in options.get("skill_roots") or []],
                    os.path.abspath(os.path.expanduser(model_dir)) if model_dir else None,
                    options.get("include_bundled", True))
    deadline = time.monotonic() + wait
    if found is not None and not found[1] and not _await_ready(root, deadline):
        return False  # another command's owner is still starting: wait for it first
    if found is not None and _served(root) != asked:
        # It serves other skill folders (a new --skills-dir, `skillbank config`) or another
        # model: attached to it, this command would not get what it asked for (and be told
        # to stop a process it never started). It ends; a fresh one serves what is asked.
        if not _retire(root, found[0]):
            return False
        found = None
    if found is None:
        with _starting(root):
            found = _running(root)  # another command may have started one meanwhile
            if found is None:
                _spawn(root, asked, options.get("namespace"))
                if announce is not None:
                    announce(f"Starting a background skillbank process that keeps {root} open, "
                             "so this and later commands answer without loading the index and "
                             f"the model again; it ends after {_idle_seconds():.0f} s without a "
                             f"command (log: {root / LOG}; {ENV}=0 turns this off).")
    return _await_ready(root, deadline)


def _await_ready(root: Path, deadline: float) -> bool:
    """Wait until the background owner says it owns the root; False if it ended first (it
    could not become the owner: see its log) or the deadline passed."""
    while time.monotonic() < deadline:
        found = _running(root)
        if found is None:
            return False
        if found[1]:
            return True
        time.sleep(0.05)
    return False


# How the owner starts. Not `python -m` in the root: it put its cwd, the root, first on
# sys.path, so a `filelock.py` or `json.py` at the root's top level ran as the owner (hunt-wheel
# #3, session 38). Not `-I` either (it also drops PYTHONPATH and the user site, where skillbank
# may be installed), nor `-P` (Python 3.11+): with `-c` the cwd is sys.path's '' entry, dropped
# before the first import that is not built in (`sys` is), and the cwd is the file system's
# root, not the memory root: an empty PYTHONPATH entry (`PYTHONPATH=$PYTHONPATH:/x` with it
# unset) puts the cwd on sys.path by its full path (review 2, session 38).
_BOOT = ("import sys; sys.path[:] = [p for p in sys.path if p != '']; "
         "from skillbank.cli.owner import main; sys.exit(main())")


def _spawn(root: Path, asked: dict[str, Any], namespace: Any) -> None:
    """Start the owner in its own session and record its pid as starting (held under
    `_starting`); the owner rewrites the file as ready once it owns the root."""
    argv = [sys.executable, "-c", _BOOT, "--root", str(root)]
    for folder in asked["skill_roots"]:
        argv += ["--skills-dir", folder]
    if asked["model_dir"]:
        argv += ["--model-dir", asked["model_dir"]]
    if namespace:
        argv += ["--namespace", str(namespace)]
    if not asked["include_bundled"]:
        argv.append("--no-bundled")
    with open_journal(root / LOG) as log:  # private: it may quote tasks in a traceback
        log.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} starting\n".encode())
        log.flush()
        child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                 start_new_session=True, cwd=root.anchor or os.sep)
    try:  # unless it is ready already (it takes seconds; this takes microseconds)
        if (root / PIDFILE).read_text().strip() == f"{child.pid} ready":
            return
    except OSError:
        pass
    (root / PIDFILE).write_text(f"{child.pid} starting")


def _idle_seconds() -> float:
    try:
        return float(os.environ.get(IDLE_ENV, "") or 600)
    except ValueError:
        return 600.0


def _serves(skill_roots: list[str], model_dir: Any, include_bundled: bool) -> dict[str, Any]:
    return {"skill_roots": list(skill_roots), "model_dir": str(model_dir) if model_dir else None,
            "include_bundled": bool(include_bundled)}


def _served(root: Path) -> Any:
    try:
        return json.loads((root / ARGS).read_text())
    except (OSError, ValueError):
        return None


def retire(root: Path, wait: float = 60.0) -> bool:
    """End `root`'s background owner if one runs (a command that must have the root to itself,
    such as `reindex --fresh` deleting the index the owner holds open). True when none runs
    any more."""
    found = _running(Path(os.path.abspath(root)))
    return found is None or _retire(Path(os.path.abspath(root)), found[0], wait)


def _retire(root: Path, pid: int, wait: float = 60.0) -> bool:
    """Ask the background owner `pid` to end now (its activity mark goes; it closes the root
    within seconds). True once it has ended."""
    try:
        (root / TOUCH).unlink()
    except FileNotFoundError:
        pass
    except OSError:
        return False
    deadline = time.monotonic() + wait
    def running() -> bool:  # until it has let go of the root (a zombie's pid stays alive)
        return _alive(pid) and ((root / PIDFILE).exists() or _served_by_another(root)
                                or _root_held(root))

    while running() and time.monotonic() < deadline:
        time.sleep(0.1)
    ended = not running()
    touch(root)
    return ended


def _root_held(root: Path) -> bool:
    """Whether some process still holds `root`'s owner lock. An ending owner drops its pid
    file and its endpoint before it closes the bank: `reindex --fresh` typed after a command
    that had started one found it "ended" and was then refused, the index still open."""
    from skillbank.locks import owner_lock_held

    return owner_lock_held(root)


def _served_by_another(root: Path) -> bool:
    """Whether a live process other than a background owner serves `root` already (its
    endpoint names this very root). A command then attaches to it: a background owner started
    now would only become that process's client and exit, while the command waited for it."""
    from skillbank.sharing import endpoint as ep

    found = ep.read_endpoint(root)
    return found is not None and ep.serves(found, root) and _alive(found.pid)


def touch(root: Path) -> None:
    """A command is done: the owner's idle time counts from now."""
    try:
        (root / TOUCH).touch()
    except OSError:
        pass


def serve(args: argparse.Namespace) -> int:
    from skillbank.bank import Skillbank
    from skillbank.cli.common import embedding_from_env

    started = time.monotonic()
    root = Path(args.root)
    pidfile = root / PIDFILE
    idle = _idle_seconds()
    # SIGTERM (a person's `kill`, a shutdown) closes the root like the idle end does.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    from skillbank.quick_chroma import skip_override_checks

    skip_override_checks()  # Chroma imports ~0.25 CPU-s faster (see skillbank/quick_chroma.py)
    embedding = embedding_from_env()
    if embedding is None:  # the model's session builds on a thread while Chroma imports
        from skillbank import onnx_model
        from skillbank.settings import load_settings

        try:
            onnx_model.preload(load_settings(root, model_dir=args.model_dir).model_dir)
        except Exception:  # noqa: BLE001 - the bank reports a bad setting when it opens
            pass
    bank = None
    try:
        bank = Skillbank.open(root, skill_roots=args.skills_dirs or None,
                              model_dir=args.model_dir, namespace=args.namespace,
                              include_bundled=args.include_bundled, embedding_function=embedding)
        if getattr(bank, "is_remote", False):
            return 0  # another process owns the root already: commands attach to it
        bank.watch()  # clients skip their own skill sync: the owner keeps the index current
        (root / TOUCH).touch()  # idle from now, not from the command that started it
        ready_mark = (root / TOUCH).stat().st_mtime_ns
        (root / ARGS).write_text(json.dumps(_serves(
            [str(f) for f in args.skills_dirs], args.model_dir, args.include_bundled)))
        pidfile.write_text(f"{os.getpid()} ready")
        print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} ready in "
              f"{time.monotonic() - started:.1f} s (pid {os.getpid()})", flush=True)
        threading.Thread(target=warm, args=(bank, root / TOUCH, ready_mark),
                         name="skillbank-owner-warm", daemon=True).start()
        while True:
            time.sleep(0.5)
            try:
                quiet = time.time() - (root / TOUCH).stat().st_mtime
            except OSError:
                break
            if quiet > idle:
                break
    finally:
        try:
            if pidfile.read_text().split(" ")[0] == str(os.getpid()):
                pidfile.unlink()
        except OSError:
            pass
        if bank is not None:
            bank.close()
    return 0


def warm(bank: Any, touched: Path | None = None, after: int | None = None,
         wait: float = 10.0) -> None:
    """What the first command of each kind would otherwise wait for, done once the owner is
    ready: the model session, each index's first search, the tokenizer, and `stats`' trust
    summary (which reads every skill's files once: seconds on 1,750 skills). Best effort;
    nothing here counts as a use of what it finds.

    It starts once the command that started this owner is done (it touches `touched` when it
    closes; at most `wait` seconds): warming beside that command's call made the call compete
    with the same work on 2 cores (#27: a first `stats` at a terminal waited 2.0-3.5 s for the
    owner's answer)."""
    deadline = time.monotonic() + wait
    while touched is not None and after is not None and time.monotonic() < deadline:
        try:
            if touched.stat().st_mtime_ns > after:
                break
        except OSError:
            break
        time.sleep(0.1)
    steps: list[Callable[[], Any]] = [
        lambda: bank.embedding_function(["warm up"]),
        lambda: bank.skills.search("warm up the skill index", k=1),
        bank.stats,
        lambda: bank.guidelines.search("warm up the guideline index", k=1),
        lambda: bank.experiences.recall("warm up the experience index", k=1, count_use=False),
        lambda: __import__("skillbank.tokens", fromlist=["count_tokens"]).count_tokens("warm"),
    ]
    for step in steps:
        try:
            step()
        except Exception:  # noqa: BLE001 - the real call reports its own errors
            pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m skillbank.cli.owner")
    parser.add_argument("--root", required=True)
    parser.add_argument("--skills-dir", dest="skills_dirs", action="append", default=[])
    parser.add_argument("--model-dir")
    parser.add_argument("--namespace")
    parser.add_argument("--no-bundled", dest="include_bundled", action="store_false")
    return serve(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
