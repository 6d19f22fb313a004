"""Who owns which index entries, and where in Chroma a root keeps them.

Two roots used to share a Chroma server's `default_database` and its collections: opening one
made the shared collections match that root's files and deleted everything else, so a second
user merely opening their root wiped the first user's index (issue 24). Two rules stop that:

1. **Placement** — a Chroma that others can reach (a `chroma run` server, or a caller's client
   on a folder that is not this root's own `chroma/`) holds each deployment in its own
   database (`chroma_tenant` / `chroma_database`; by default one named after the deployment).
   The embedded default, a `PersistentClient` on `<root>/chroma`, is private to the root by
   construction and stays exactly where it was (`default_database`), so a single user's index
   is never moved or re-embedded.
2. **Ownership** — every entry is tagged with its deployment (`OWNER_KEY` in the metadata). An
   index sees, syncs and deletes only its own entries; entries another deployment wrote to the
   same collection (two roots configured onto one database on purpose) are never touched.

The deployment is the `deployment` setting, or else the root's identity: a random id written
once to `<root>/.skillbank-id`, so every process and machine that opens the same root folder is
the same deployment (they share its entries and its change feed), and a new root is a new one.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Metadata key of every index entry: the deployment that wrote it.
OWNER_KEY = "sb_owner"
#: The root's identity file (a random id, written once, never changed).
IDENTITY_FILE = ".skillbank-id"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{1,126}[A-Za-z0-9]$")


def root_identity(root: Path) -> str:
    """The root's id, created on first use; race-free between processes (link, not write)."""
    path = Path(root) / IDENTITY_FILE
    try:
        found = path.read_text("ascii").strip()
        if found:
            return found
    except (FileNotFoundError, UnicodeDecodeError):
        pass
    from skillbank.fsutil import make_root

    make_root(Path(root), embedded=False)  # private when new, as the bank makes it
    fresh = secrets.token_hex(8)
    tmp = path.with_name(f"{IDENTITY_FILE}.{fresh}.tmp")
    tmp.write_text(fresh + "\n", "ascii")
    try:
        os.link(tmp, path)  # fails if another process got there first: use theirs
    except FileExistsError:
        pass
    except OSError:  # a file system without hard links: a plain replace, first one wins mostly
        if not path.exists():
            os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path.read_text("ascii").strip() or fresh


def deployment_of(settings: Any, *, shared: bool = False) -> str:
    """The owner tag of a bank's index entries: the `deployment` setting or the root's id.

    `shared`: the entries live where other roots can reach them (a Chroma server, a caller's
    client, PostgreSQL): a root that is a copy of another is refused there (`check_not_a_copy`),
    since it carries the other's id and would sync away, overwrite and forget its entries."""
    explicit = getattr(settings, "deployment", None)
    if explicit:
        return str(explicit)
    identity = root_identity(settings.root)
    if shared:
        check_not_a_copy(settings.root, identity)
    return identity


#: Where the root's id was made: its folder and the id file's inode (`check_not_a_copy`).
ORIGIN_FILE = ".skillbank-id.origin"


def _origin_now(root: Path) -> dict[str, Any]:
    path = Path(root) / IDENTITY_FILE
    return {"path": str(Path(root).resolve()), "ino": path.stat().st_ino,
            "host": socket.gethostname()}


def check_not_a_copy(root: Path, identity: str) -> None:
    """Refuse a root whose id was copied from another root (`cp -r`, a template, a restore
    beside the original), before it touches a shared index.

    A copy carries the original's `.skillbank-id`, so on a Chroma server both were one
    deployment: the copy's sync deleted the original's entries its files lacked, its forgets
    removed the original's items from the index, and its writes appeared in the original's
    (issue 24's wipe, by another door). A root is a copy when both its folder and its id file
    differ from where the id was made (moving a root keeps the file's inode; one root mounted
    at two paths over NFS keeps it too) and, on the machine the id was made on, the folder it
    was made in still holds it (a root moved to another disk or restored elsewhere has a new
    inode, but its old folder is gone: it is recorded where it is now). The fix is named in the error: set `deployment`
    (the same one to share an index on purpose), or delete the copy's `.skillbank-id`.
    Roots made before this check record their origin on first use."""
    root = Path(root)
    origin_path = root / ORIGIN_FILE
    try:
        now = _origin_now(root)
    except OSError:
        return
    try:
        origin = json.loads(origin_path.read_text("utf-8"))
    except FileNotFoundError:
        origin = None
    except (OSError, ValueError):
        origin = None
    if not isinstance(origin, dict) or origin.get("id") != identity or (
            "host" not in origin and origin.get("path") == now["path"]):
        _record_origin(origin_path, identity, now)  # first use (or an origin of another id)
        return
    if origin.get("path") != now["path"] and origin.get("ino") != now["ino"]:
        if moved_away(origin, identity):  # moved (another disk, a restore), not copied
            _record_origin(origin_path, identity, now)
            return
        from skillbank.errors import InvalidInputError

        raise InvalidInputError(
            f"root {root} is a copy of the root at {origin.get('path')} (its {IDENTITY_FILE} "
            f"was made there): on a shared Chroma or database both would be deployment "
            f"{identity!r} and would delete each other's index entries. Make it a deployment "
            f"of its own (delete {root / IDENTITY_FILE} and {origin_path}), or set `deployment` "
            "(SKILLBANK_DEPLOYMENT; the same value on both to share one index on purpose)")


def _record_origin(origin_path: Path, identity: str, now: dict[str, Any]) -> None:
    """Record where this id lives now (best effort: a read-only root keeps the old record)."""
    from skillbank.fsutil import atomic_write

    try:
        atomic_write(origin_path, json.dumps({"id": identity, **now}) + "\n")
    except OSError:
        pass


def moved_away(origin: dict[str, Any], identity: str) -> bool:
    """The recorded folder no longer holds a root with this id: the root was moved, not copied.

    Users met this: a root moved to another disk (`mv` across file systems, `rsync`, `cp -a`)
    or restored from a backup to a new path has a new folder and a new id file inode; it was
    taken for a copy of the root at a folder that no longer existed, and its usage counts were
    imported a second time. A copy leaves its original in place, so the original's folder
    still holding the id is what tells the two apart — on the machine the id was made on:
    elsewhere (a root copied to another machine, whose files this one cannot see), or where
    the origin names no machine, it stays a copy."""
    path = origin.get("path")
    if not isinstance(path, str) or not path or origin.get("host") != socket.gethostname():
        return False
    try:
        found = (Path(path) / IDENTITY_FILE).read_text("ascii").strip()
    except (FileNotFoundError, NotADirectoryError):
        return True
    except (OSError, UnicodeDecodeError):
        return False  # unreadable (permissions, a flaky mount): a copy, as before
    return found != identity


def database_for(deployment: str) -> str:
    """A Chroma database name for a deployment (3-128 of [A-Za-z0-9._-])."""
    name = f"skillbank-{deployment}"
    if _NAME.match(name):
        return name
    return "skillbank-" + hashlib.sha256(deployment.encode()).hexdigest()[:24]


@dataclass(frozen=True)
class Placement:
    """Where a bank's collections live and whose entries it may touch."""

    client: Any
    owner: str
    #: Nobody else writes here (the root's own folder, or this deployment's own database):
    #: entries written before ownership tags existed are this root's, and may be synced away.
    private: bool
    tenant: str | None = None
    database: str | None = None


def _own_folder(client: Any, root: Path) -> bool:
    try:
        chroma = client.get_settings()
    except Exception:  # noqa: BLE001 - not a chromadb client we can inspect: assume shared
        return False
    if not getattr(chroma, "is_persistent", False):
        return False
    try:
        return Path(chroma.persist_directory).resolve() == (Path(root) / "chroma").resolve()
    except OSError:
        return False


def ensure_database(client: Any, tenant: str, database: str) -> None:
    """Create `tenant` and `database` on the client's Chroma if missing (safe to race)."""
    from chromadb.api.client import AdminClient
    from chromadb.errors import NotFoundError

    admin = AdminClient.from_system(client._system)
    try:
        admin.get_tenant(tenant)
    except NotFoundError:
        try:
            admin.create_tenant(tenant)
        except Exception:  # noqa: BLE001 - another process created it meanwhile
            admin.get_tenant(tenant)
    try:
        admin.get_database(database, tenant=tenant)
    except NotFoundError:
        try:
            admin.create_database(database, tenant=tenant)
        except Exception:  # noqa: BLE001 - another process created it meanwhile
            admin.get_database(database, tenant=tenant)


def place(settings: Any, client: Any, *, own_client: bool) -> Placement:
    """Choose the database a bank's collections live in, and whether it is the root's alone.

    `own_client`: the bank made `client` itself (embedded on `<root>/chroma`, or an HttpClient
    to `chroma_url`); otherwise the caller handed it in and it may be shared with anyone.
    """
    tenant = getattr(settings, "chroma_tenant", None)
    database = getattr(settings, "chroma_database", None)
    if not settings.chroma_url and not tenant and not database and (
            own_client or _own_folder(client, settings.root)):
        # the embedded default: unchanged (a copy has its own chroma/ folder: nothing shared)
        return Placement(client, deployment_of(settings), private=True)
    owner = deployment_of(settings, shared=True)
    from chromadb.api.client import Client
    from chromadb.config import DEFAULT_TENANT

    tenant = tenant or DEFAULT_TENANT
    # A database named after the deployment belongs to it; one set by hand may be shared.
    private = not database
    database = database or database_for(owner)
    ensure_database(client, tenant, database)
    placed = Client(tenant=tenant, database=database, settings=client.get_settings())
    return Placement(placed, owner, private=private, tenant=tenant, database=database)


# One index's entries (HybridIndex applies these to every read, write and delete) --------------
def owns(owner: str | None, adopt_untagged: bool, meta: dict[str, Any] | None) -> bool:
    """Whether an entry is `owner`'s to show, sync and delete. An untagged one was written
    before tags existed: it is the owner's when the collection is its alone (`adopt_untagged`)."""
    if owner is None:
        return True
    found = (meta or {}).get(OWNER_KEY)
    return found == owner or (found is None and adopt_untagged)


def tag_entry(owner: str | None, meta: dict[str, Any]) -> dict[str, Any]:
    """`meta` tagged (in place) with the deployment that writes it."""
    if owner is not None:
        meta[OWNER_KEY] = owner
    return meta


def owned_where(owner: str | None, foreign: bool,
                where: dict[str, Any] | None) -> dict[str, Any] | None:
    """`where`, narrowed to `owner`'s entries when the collection holds others' (`foreign`)."""
    if not foreign or owner is None:
        return where or None
    mine = {OWNER_KEY: owner}
    return {"$and": [where, mine]} if where else mine


def delete_owned(collection: Any, owner: str | None, page: int) -> None:
    """Delete `owner`'s entries from a collection others' share, a page at a time."""
    while True:
        got = collection.get(where={OWNER_KEY: owner}, limit=page, include=[])
        if not got["ids"]:
            break
        collection.delete(ids=got["ids"])
