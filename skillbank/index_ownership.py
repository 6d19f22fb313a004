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
import logging
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
log = logging.getLogger("skillbank.index")
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
    inode, but its old folder is gone: it is recorded where it is now). The fix is named in
    the error: delete the copy's `.skillbank-id`, or set a `deployment` of its own. It no
    longer suggests the original's deployment "to share one index on purpose": two root
    folders on one deployment delete each other's entries as a copy does (hunt-chroma #1,
    session 24; `claim_deployment` refuses that now). Roots made before this check record
    their origin on first use."""
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
            f"of its own (delete {root / IDENTITY_FILE} and {origin_path}), or set a "
            f"`deployment` of its own (SKILLBANK_DEPLOYMENT). {ONE_ROOT_PER_DEPLOYMENT}")


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


#: Said wherever a second root folder on one deployment is refused (hunt-chroma #1, session 24).
ONE_ROOT_PER_DEPLOYMENT = (
    "To share one memory between machines, open the same root folder everywhere (one network "
    "folder) or use team mode (database_url; docs/team.md)")
#: The collection, in a deployment's Chroma database, that names the root folder each
#: deployment set by hand belongs to (`claim_deployment`): one entry per deployment.
CLAIMS = "skillbank-deployment-roots"


def claim_deployment(client: Any, deployment: str, root: Path, where: str, *,
                     takeover: bool = False) -> None:
    """Record on `client` (the deployment's placed Chroma) that `deployment` is `root`'s, or
    refuse `root` if another root folder already has it — before anything is synced.

    The docs and the copy refusal used to advise the same `deployment` for "machines of one
    team" and for a copy "to share one index on purpose". That shared nothing: the files are
    the truth and Chroma indexes them, so each root's open synced the deployment's entries to
    its own files and deleted the other's rules, experiences and skills; a long-lived bank on
    one root lost the dense side of its items whenever a CLI command ran on the other
    (hunt-chroma #1, session 24). Sharing one memory across root folders takes a shared record
    store (team mode, which never calls this: a team deployment is one PostgreSQL database's,
    `skillbank.team.index_claim`). A root is its `.skillbank-id`; the same one in
    another folder (a copy) is another root too, unless the folder holds the same id file (one
    root at two paths: a bind mount, one network folder) or the claimed folder no longer holds
    that root on this machine (`moved_away`: a root moved or restored elsewhere, or deleted).
    The first root to claim a deployment keeps it (Chroma's `add` keeps the first entry).

    The claim must not lock a deployment forever (review F2, session 24): a backup of the root
    restored on a replacement machine, CI runners that make a fresh root per run under one
    name, and a deployment first opened after the upgrade by a developer's laptop were refused
    with no way out but a new name (re-embedding everything, orphaning the old database). So
    the same `.skillbank-id` on another machine is admitted and the claim moves to it (a copy
    on another machine cannot be told from a restore, and refusing the restore is the worse
    default; a `cp -r` copy beside its original on one machine is still refused), and
    `takeover` (`deployment_takeover`, SKILLBANK_DEPLOYMENT_TAKEOVER=1) lets this root claim
    the deployment from whichever root holds it: its entries are then synced to this root's
    files, as before the claim existed, and the other root is the one refused."""
    try:
        mine = {"root": root_identity(root), **_origin_now(root)}
    except OSError as exc:  # a read-only root without an id: nothing to tell roots apart by
        log.warning("skillbank: cannot check that deployment %r is root %s's alone (%s)",
                    deployment, root, exc)
        return
    claims = client.get_or_create_collection(CLAIMS, embedding_function=None)
    for _ in range(3):  # write, then read back: a root claiming it at the same time may win
        got = claims.get(ids=[deployment], include=["metadatas"])
        claim = got["metadatas"][0] if got["ids"] else None
        if _claimed_by_this_root(claim, mine, deployment, Path(root), where, takeover):
            return
        if claim is None:
            claims.add(ids=[deployment], embeddings=[[0.0]], metadatas=[mine])
        else:
            claims.update(ids=[deployment], metadatas=[mine])


def _claimed_by_this_root(claim: Any, mine: dict[str, Any], deployment: str, root: Path,
                          where: str, takeover: bool = False) -> bool:
    """True: `claim` is this root's; False: no claim, or one this root may take over; or the
    clear refusal when another root folder holds `deployment`."""
    if not isinstance(claim, dict) or not claim.get("root"):
        return False
    theirs = str(claim["root"])
    here = (claim.get("path"), claim.get("host")) == (mine["path"], mine["host"])
    same_folder = claim.get("ino") == mine["ino"] or here
    holder = f"the root at {claim.get('path')} (on {claim.get('host')})"
    if theirs == mine["root"] and same_folder:  # this root, at this path or at another:
        # recorded again where it is now if it was moved (a new root made in the folder it
        # left must not be taken for it); one folder at two paths still holds it at both
        return here or not moved_away(claim, theirs)
    if theirs == mine["root"] and claim.get("host") != mine["host"]:
        # This root restored on a replacement machine (review F2, session 24): admitted, the
        # claim moves here. A copy still in use on that machine would be refused now.
        log.warning("skillbank: deployment %r was %s; this root (%s on %s) has the same %s "
                    "(restored on another machine?): the deployment is this root's now",
                    deployment, holder, root, mine["host"], IDENTITY_FILE)
        return False
    if moved_away(claim, theirs):  # that folder no longer holds that root: moved, or gone
        return False
    if takeover:  # asked for by hand (review F2, session 24): the other root is refused now
        log.warning("skillbank: deployment %r taken over from %s by the root at %s "
                    "(deployment_takeover): its index entries are replaced by this root's",
                    deployment, holder, root)
        return False
    from skillbank.errors import InvalidInputError

    why = (f"this root ({root}) holds the same {IDENTITY_FILE}: one is a copy of the other"
           if theirs == mine["root"] else f"this root ({root}) is another root folder")
    raise InvalidInputError(
        f"deployment {deployment!r} belongs to {holder}: its index on {where} mirrors that "
        f"root's files, and {why}, so opening it would sync that index to its own files and "
        "delete the other root's entries. If this root replaces that one (a new machine, a "
        "fresh CI root, the root that should own it), set deployment_takeover = true in "
        "skillbank.toml or SKILLBANK_DEPLOYMENT_TAKEOVER=1: this root claims the deployment "
        "and the other root's index entries are replaced by this root's (that root is "
        "refused from then on). Otherwise give this root a deployment of its own (another "
        "`deployment` or SKILLBANK_DEPLOYMENT, or none: each root is its own deployment). "
        + ONE_ROOT_PER_DEPLOYMENT)


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


def place(settings: Any, client: Any, *, own_client: bool, store: Any = None) -> Placement:
    """Choose the database a bank's collections live in, and whether it is the root's alone.

    `own_client`: the bank made `client` itself (embedded on `<root>/chroma`, or an HttpClient
    to `chroma_url`); otherwise the caller handed it in and it may be shared with anyone.
    `store`: team mode's PostgreSQL store, whose database the deployment's index mirrors.
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
    takeover = bool(getattr(settings, "deployment_takeover", False))
    if store is not None:
        # A team deployment's index is one PostgreSQL database's (hunt-teamport #1, session 35).
        from skillbank.team.index_claim import claim_for_database

        claim_for_database(placed, owner, store, settings.root, _where(settings),
                           takeover=takeover)
    elif getattr(settings, "deployment", None) and not getattr(settings, "database_url", None):
        # One deployment's index is one root folder's (team mode shares PostgreSQL instead),
        # and never a team's (its records are in PostgreSQL, not in this root's files).
        from skillbank.team.index_claim import refuse_if_team_deployment

        refuse_if_team_deployment(placed, owner, settings.root, _where(settings),
                                  takeover=takeover)
        claim_deployment(placed, owner, settings.root, _where(settings), takeover=takeover)
    return Placement(placed, owner, private=private, tenant=tenant, database=database)


def _where(settings: Any) -> str:
    if not settings.chroma_url:
        return "this Chroma"
    from skillbank.index_outage import without_credentials

    return f"the Chroma server at {without_credentials(settings.chroma_url)}"


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
