"""Where an owner process listens, and how a client knows it is talking to the real owner.

The owner of an embedded root holds `<root>/.owner.lock` (an OS lock: it is released when the
process dies, however it dies) and serves the facade on a Unix socket that only this user can
reach: `<root>/.owner.sock`, or, when that path is too long for a socket, a file in a private
per-user folder. `<root>/.owner.json` (mode 0600) names the socket, the owner's pid and a fresh
random secret. A client sends the secret with every call, and first checks the owner proves it
knows the secret too (HMAC of a nonce), so neither a foreign process that took the socket's
place nor a client without the secret is ever trusted.

Root identity: `<root>/.root-id.json` holds a random id with the device and inode of the root
folder. A copy of the root (made while its owner ran, so it carries `.owner.json`) has another
inode: its id does not count until its own owner gives it a new one. The endpoint and the
owner's handshake name the id; a client uses only an endpoint of *this* root, so a copied
endpoint never leads it to the original's owner (whose secret it would otherwise know).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import socket
import stat
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from skillbank.fsutil import atomic_write, remove_leftovers

OWNER_LOCK = ".owner.lock"
ENDPOINT_FILE = ".owner.json"
SOCKET_FILE = ".owner.sock"
ROOT_ID_FILE = ".root-id.json"
#: What the holder of the root's lock is doing while it publishes no endpoint (`write_holder`).
HOLDER_FILE = ".owner-holder.json"
#: The wire's version: a client and an owner of different versions refuse each other by it
#: (3: `RecordedId` values and the catalog's records in their own module, session 22; an old
#: client got "unknown value tag 'rstr'" for a record the owner had stored).
PROTOCOL = 3
_MAX_SOCKET_PATH = 100  # sun_path is 104-108 bytes depending on the OS


@dataclass(frozen=True)
class Endpoint:
    """What `<root>/.owner.json` holds."""

    socket: str
    token: str
    pid: int
    root: str
    started: float
    protocol: int = PROTOCOL
    root_id: str = ""

    def proof(self, nonce: str) -> str:
        return prove(self.token, nonce)


def prove(token: str, nonce: str) -> str:
    """The owner's answer to a client's nonce: only a holder of the secret can compute it."""
    return hmac.new(token.encode(), nonce.encode(), hashlib.sha256).hexdigest()


def socket_path(root: Path) -> Path:
    """The owner's socket: inside the root when the path fits, else in a private folder."""
    inside = root / SOCKET_FILE
    if len(os.fsencode(str(inside))) <= _MAX_SOCKET_PATH:
        return inside
    digest = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:24]
    return private_dir() / f"{digest}.sock"


def private_dir() -> Path:
    """A folder only this user can enter, for sockets whose path in the root is too long.

    `skillbank-<uid>` under XDG_RUNTIME_DIR or the temp folder, when it is ours: a real folder
    (not a symlink), owned by this user, mode 0700 (our own folder with a looser mode is
    tightened). If another user took that name first (or put a symlink there), a fresh private
    folder is made instead (`mkdtemp`, 0700): the endpoint file names the socket's full path,
    so clients find it wherever it is, and a squatter can no longer stop the root from opening.
    """
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) if runtime and Path(runtime).is_dir() else Path(tempfile.gettempdir())
    folder = base / f"skillbank-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    except OSError:
        return Path(tempfile.mkdtemp(prefix=f"skillbank-{os.getuid()}-", dir=base))
    if _private(folder):
        return folder
    return Path(tempfile.mkdtemp(prefix=f"skillbank-{os.getuid()}-", dir=base))


def _private(folder: Path) -> bool:
    """Whether `folder` is a real folder of this user that only it can enter (made so if ours)."""
    try:
        info = folder.lstat()
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            return False
        if info.st_mode & 0o077:
            os.chmod(folder, 0o700, follow_symlinks=False)
            return not folder.lstat().st_mode & 0o077
    except OSError:
        return False
    return True


def new_endpoint(root: Path) -> Endpoint:
    """A fresh endpoint for the owner of `root` (which holds the owner lock)."""
    return Endpoint(socket=str(socket_path(root)), token=secrets.token_hex(32), pid=os.getpid(),
                    root=str(root), started=time.time(), root_id=ensure_root_id(root))


def _folder_key(root: Path) -> tuple[int, int]:
    info = os.stat(root)
    return info.st_dev, info.st_ino


def root_id(root: Path) -> str | None:
    """This root's id, or None when it has none yet or the id was copied from another folder."""
    try:
        data = json.loads((Path(root) / ROOT_ID_FILE).read_text())
        if (int(data["device"]), int(data["inode"])) != _folder_key(Path(root)):
            return None  # a copy (or a restored backup) until its owner identifies it again
        value = data["id"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return value if isinstance(value, str) and value else None


def ensure_root_id(root: Path) -> str:
    """The root's id, made (or made again for a copied root) by its owner."""
    current = root_id(root)
    if current is not None:
        return current
    new = secrets.token_hex(16)
    device, inode = _folder_key(Path(root))
    atomic_write(Path(root) / ROOT_ID_FILE,
                 json.dumps({"id": new, "device": device, "inode": inode}))
    return new


def write_endpoint(root: Path, endpoint: Endpoint) -> None:
    """Publish the endpoint atomically, readable by this user only (and remove what an owner
    killed mid-write left of it: only the owner, holding the owner lock, writes it)."""
    remove_leftovers(root / ENDPOINT_FILE)
    atomic_write(root / ENDPOINT_FILE, json.dumps(asdict(endpoint)), mode=0o600)  # its secret


def write_holder(root: Path, pid: int, state: str, seconds: float = 0.0) -> None:
    """Say what process `pid`, which holds the root's lock, is doing while it publishes no
    endpoint: "opening" (it serves once open) or "closing" (it may wait `seconds` for the calls
    of other processes). A client that finds no endpoint names it, says when it is stopped,
    and waits for a closing one past `lock_timeout` (hunt-handoff #3, session 33: "it has not
    published its endpoint yet ... share=False ... older skillbank", naming no process)."""
    atomic_write(root / HOLDER_FILE, json.dumps({"pid": pid, "state": state,
                                                 "until": time.time() + seconds}))


def remove_holder(root: Path, pid: int) -> None:
    """Remove process `pid`'s note (another's stays)."""
    try:
        if json.loads((root / HOLDER_FILE).read_text()).get("pid") == pid:
            (root / HOLDER_FILE).unlink()
    except (OSError, ValueError, AttributeError):
        pass


def read_holder(root: Path) -> tuple[int, str, float] | None:
    """(pid, state, until) of the holder's note while that process lives, else None (a
    killed one's note)."""
    try:
        data = json.loads((root / HOLDER_FILE).read_text())
        pid, state, until = int(data["pid"]), str(data["state"]), float(data["until"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return (pid, state, until) if process_state(pid) not in ("gone", None) else None


def read_endpoint(root: Path) -> Endpoint | None:
    """The published endpoint, or None when there is none (or it is not this user's)."""
    path = root / ENDPOINT_FILE
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
            return None  # not ours, or readable by others: never trust its secret
        data = json.loads(path.read_text())
        endpoint = Endpoint(**{k: data[k] for k in ("socket", "token", "pid", "root", "started")},
                           protocol=int(data.get("protocol", 0)),
                           root_id=str(data.get("root_id") or ""))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return endpoint if endpoint.protocol == PROTOCOL else None


def other_protocol(root: Path) -> tuple[int, int] | None:
    """(protocol, pid) of an owner that publishes another wire protocol than this process's."""
    try:
        data = json.loads((root / ENDPOINT_FILE).read_text())
        found, pid = int(data.get("protocol", 0)), int(data.get("pid", 0))
    except (OSError, ValueError, TypeError, AttributeError):
        return None
    return (found, pid) if found != PROTOCOL else None


def serves(endpoint: Endpoint, root: Path) -> bool:
    """Whether `endpoint` was published by an owner of this very root (not of a copy's original)."""
    own = root_id(root)
    return own is not None and hmac.compare_digest(endpoint.root_id, own)


def remove_endpoint(root: Path, endpoint: Endpoint) -> None:
    """Withdraw our endpoint (only if it is still ours) and its socket."""
    current = read_endpoint(root)
    if current is not None and current.token == endpoint.token:
        try:
            (root / ENDPOINT_FILE).unlink()
        except OSError:
            pass
    try:
        Path(endpoint.socket).unlink()
    except OSError:
        pass


def check_socket(path: str) -> str | None:
    """Why the socket at `path` must not be trusted, or None when it is this user's socket."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return "its socket is gone"
    except OSError as exc:
        return f"its socket cannot be read ({exc})"
    if not stat.S_ISSOCK(info.st_mode):
        return f"{path} is not a socket"
    if info.st_uid != os.getuid():
        return f"{path} belongs to another user"
    return None


def bind_socket(path: str) -> socket.socket:
    """A listening Unix socket at `path`, reachable by this user only (a stale file is replaced)."""
    try:
        info = os.lstat(path)
        if stat.S_ISSOCK(info.st_mode) and info.st_uid == os.getuid():
            os.unlink(path)  # left by an owner that died: we hold the lock, so it is stale
        else:
            raise PermissionError(f"{path} exists and is not a stale skillbank socket; remove it")
    except FileNotFoundError:
        pass
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)
    try:
        sock.bind(path)
    finally:
        os.umask(old_umask)
    os.chmod(path, 0o600)
    sock.listen(128)
    return sock


def describe_holder(pid: int | None) -> str:
    """'process 1234 (skillbank serve)' for error messages."""
    if not pid:
        return "another process"
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        cmdline = ""
    return f"process {pid}" + (f" ({cmdline[:80]})" if cmdline else "")


def process_state(pid: int | None) -> str | None:
    """'stopped' (Ctrl-Z, SIGSTOP, a debugger), 'running', 'gone', or None when unknown."""
    if not pid:
        return None
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return "gone"
    except OSError:
        return None
    state = stat_line.rpartition(")")[2].split()[:1]  # the name may hold spaces and parentheses
    if not state:
        return None
    if state[0] in ("T", "t"):
        return "stopped"
    return "gone" if state[0] in ("Z", "X") else "running"
