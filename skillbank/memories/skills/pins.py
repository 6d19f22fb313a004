"""What a skill's files are, byte for byte: per-file SHA-256 digests and the lock file.

Accepting a skill from a folder the bank does not fully trust pins it: the SHA-256 of every
file, the same digests the MCP skills extension publishes per file (`sha256:<hex>`), go into
`<root>/skills.lock` — a plain JSON file a team can commit next to its skill folders. A later
change to any of those files no longer matches the pin, and the skill goes back to review
instead of its new content being served silently.

Why per-file and not the SKILL.md hash the index keeps: an attack rarely touches the SKILL.md;
it changes `scripts/setup.sh`. Digests are cached per file by (size, mtime) so checking a pin
costs a walk of the folder and a few `stat` calls.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from stat import S_ISREG
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from skillbank.fsutil import atomic_write
from skillbank.memories.skills.folder_files import (MAX_FILES, VCS_DIRS, every_file, os_metadata,
                                                    skill_files)

LOCK_FILE = "skills.lock"
LOCK_VERSION = 1
#: Where accepted versions of non-own skills are kept, one folder per version digest.
SNAPSHOTS = "skill-versions"
MAX_SNAPSHOT_BYTES = 20 << 20
#: The digests' entry for a non-own skill's files outside the pinned set (hidden, vendored,
#: past MAX_FILES): never served, but a script runs them. A path never starts with "/".
OUTSIDE = "/hidden, vendored and past-the-cap files"
#: More files than this in a non-own skill cannot be watched: held (`trust.uncovered`).
MAX_OUTSIDE_FILES = 20_000
TOO_MANY = f"more than {MAX_OUTSIDE_FILES} files"
#: Files outside the pin are hashed up to this many bytes in all; past it, stamped by stat
#: (size, mtime, ctime, inode: as safe, but a fresh clone of the folder gets a new version).
MAX_OUTSIDE_HASH_BYTES = 64 << 20
#: Folders left out of a whole-folder version: rewritten by a plain `git status`, so they would
#: send a skill to review for nothing. Not `__pycache__`: an unchecked-hash `.pyc` a vendor
#: update added there ran instead of the accepted `helpers.py` while the skill kept its version,
#: scan and accept (review #1); only the bytecode Python writes itself is left out (`self_written_pyc`).
UNWATCHED_DIRS = frozenset({".git", ".hg", ".svn"})


def self_written_pyc(path: Path, stat: os.stat_result) -> bool:
    """Whether `path` is a `__pycache__/*.pyc` as Python writes it when the skill's own code is
    imported: timestamp-based (PEP 552 flags 0) with the mtime and size of the `.py` next to
    its `__pycache__` in its header, so Python would recompile it from that source had the
    source changed. A hash-based pyc (run without looking at its source when unchecked), an
    orphan, or one whose header does not match is code the version must cover."""
    if path.parent.name != "__pycache__" or path.suffix != ".pyc" or stat.st_size < 16:
        return False
    source = path.parent.parent / (path.name.split(".", 1)[0] + ".py")
    try:
        with path.open("rb") as handle:
            header = handle.read(16)
        source_stat = source.stat()
    except OSError:
        return False
    flags = int.from_bytes(header[4:8], "little")
    mtime = int.from_bytes(header[8:12], "little")
    size = int.from_bytes(header[12:16], "little")
    return (flags == 0 and S_ISREG(source_stat.st_mode)
            and mtime == int(source_stat.st_mtime) & 0xFFFFFFFF
            and size == source_stat.st_size & 0xFFFFFFFF)


class DigestCache:
    """sha256 of files, recomputed only when a file's stat changed.

    The stat compared includes the inode and the change time, not only size and mtime: whoever
    writes a skill folder can put an mtime back (`touch -d`, `os.utime`) after a same-size edit,
    and a cache keyed on (size, mtime) then served the new content under the accepted pin for as
    long as the process lived. ctime cannot be set back by a user, and a replaced file has a new
    inode."""

    def __init__(self) -> None:
        self._cache: dict[str, tuple[tuple[int, int, int, int], str]] = {}
        self._lock = threading.Lock()

    def file_digest(self, path: Path, stat: os.stat_result) -> str:
        key = str(path)
        seen = (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino)
        cached = self._cache.get(key)
        if cached and cached[0] == seen:
            return cached[1]
        value = file_sha256(path)
        with self._lock:
            self._cache[key] = (seen, value)
        return value

    def digests(self, folder: Path, whole: bool = False) -> dict[str, str]:
        """{relative path: "sha256:<hex>"} for every file of the skill folder; with `whole`
        (a skill not the bank's own), one more entry, `OUTSIDE`, for all the other files."""
        out: dict[str, str] = {}
        for relative, stat in skill_files(folder):
            try:
                out[relative] = "sha256:" + self.file_digest(folder / relative, stat)
            except OSError:
                continue  # vanished between the walk and the read: the next look sees it
        if whole:
            other = self.outside_digest(folder, set(out))
            if other:
                out[OUTSIDE] = other
        return out

    def outside_digest(self, folder: Path, pinned: set[str]) -> str:
        """One digest of the files `skill_files` leaves out ("" when there are none).

        A skill's `scripts/run.js` required `node_modules/helper/index.js`, which was swapped
        for malware after a clean scan and an accept: outside the digests, it changed no
        version, so the skill stayed "clean", "accepted" and served. Content digests keep the
        version the same on every clone; past `MAX_OUTSIDE_HASH_BYTES`, stat stamps bound the
        cost of a huge vendored folder."""
        files, complete = every_file(folder, MAX_OUTSIDE_FILES, UNWATCHED_DIRS)
        if not complete:
            return TOO_MANY
        budget = MAX_OUTSIDE_HASH_BYTES
        lines: list[str] = []
        for relative, stat in sorted(files, key=lambda item: item[0]):
            if relative in pinned or self_written_pyc(folder / relative, stat) \
                    or os_metadata(folder / relative, stat):
                continue
            if stat.st_size <= budget:
                budget -= stat.st_size
                try:
                    mark = self.file_digest(folder / relative, stat)
                except OSError:
                    continue
            else:
                mark = f"stat:{stat.st_size}:{stat.st_mtime_ns}:{stat.st_ctime_ns}:{stat.st_ino}"
            lines.append(f"{relative}\0{mark}")
        if not lines:
            return ""
        return "sha256:" + hashlib.sha256("\n".join(lines).encode()).hexdigest()


def version_of(digests: dict[str, str]) -> str:
    """One short id for a set of file digests: what `NAME@VERSION` names, what scans key on."""
    joined = "\n".join(f"{path}\0{digest}" for path, digest in sorted(digests.items()))
    return hashlib.sha256(joined.encode()).hexdigest()[:16]


def re_version(text: str) -> bool:
    """Is `text` shaped like a version id (what `version_of` returns)?"""
    return len(text) == 16 and all(c in "0123456789abcdef" for c in text)


def changed_files(pinned: dict[str, str], current: dict[str, str]) -> list[str]:
    """Paths added, removed or changed between a pin and the folder as it is now."""
    return sorted(p for p in set(pinned) | set(current) if pinned.get(p) != current.get(p))


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class LockFile:
    """`<root>/skills.lock`: the reviewed state of every skill that needed review.

    One entry per skill name: `decision` ("accepted" | "rejected"), the folder it was decided
    for, the `version` and per-file `files` digests decided on, who decided and when, and the
    `history` of earlier accepted versions (for `skills versions` / `skills restore`).
    JSON with sorted keys and one entry per name, so a team's diff of it reads well.
    """

    def __init__(self, root: Path) -> None:
        self.path = root / LOCK_FILE
        self._lock = threading.RLock()
        self._cache: tuple[tuple[int, int], dict[str, Any]] | None = None
        self._rejected: tuple[dict[str, Any], dict[str, str]] | None = None

    def entries(self) -> dict[str, dict[str, Any]]:
        with self._lock:
            try:
                stat = self.path.stat()
            except OSError:
                return {}
            key = (stat.st_mtime_ns, stat.st_size)
            if self._cache and self._cache[0] == key:
                return self._cache[1]
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
                skills = data.get("skills", {}) if isinstance(data, dict) else {}
                skills = {str(k): v for k, v in skills.items() if isinstance(v, dict)}
            except (OSError, ValueError):
                # A lock file someone broke by hand holds nothing: every non-own skill is then
                # pending review, which is the safe reading of "I cannot tell what was accepted".
                skills = {}
            self._cache = (key, skills)
            return skills

    def get(self, name: str) -> dict[str, Any] | None:
        return self.entries().get(name)

    def decide(self, name: str, decision: str, *, folder: str, digests: dict[str, str],
               by: str, reason: str = "") -> dict[str, Any]:
        with self._lock:
            entries = dict(self.entries())
            previous = entries.get(name) or {}
            history = list(previous.get("history", []))
            if previous.get("decision") == "accepted" and previous.get("version") \
                    and previous.get("version") != version_of(digests):
                history.append({k: previous[k] for k in ("version", "files", "by", "at")
                                if k in previous})
            entry = {"decision": decision, "folder": folder, "version": version_of(digests),
                     "files": dict(sorted(digests.items())), "by": by, "at": _now(),
                     "history": history[-20:]}
            if reason:
                entry["reason"] = reason
            entries[name] = entry
            self._write(entries)
            return entry

    def rejected_as(self, version: str) -> str | None:
        """The name under which these very files (`version`) were rejected, if any.

        A rejection is of content, not of a name: the same folder copied or moved under
        another name (a SKILL.md without `name:` takes its folder's) was served again
        (hunt-git #1, session 23)."""
        with self._lock:
            entries = self.entries()
            if self._rejected is None or self._rejected[0] is not entries:
                self._rejected = (entries, {
                    str(e["version"]): name for name, e in sorted(entries.items())
                    if e.get("decision") == "rejected" and e.get("version")})
            return self._rejected[1].get(version)

    def carry(self, name: str, new_name: str) -> bool:
        """`name`'s decision also under `new_name`, a skill the sync took for it renamed.

        A `git mv` of a rejected skill's folder with its `name:` edited carried its usage but
        left the rejection under the old name, and the same content was served under the new
        one (hunt-git #1, session 23). A decision follows a rename as usage does: a rejection
        stays a rejection; an acceptance pins the files accepted, so the renamed skill is
        accepted only while its files are those (an edited `name:` is a change: back to
        review). The old name keeps its entry (a rename read from untrusted files never loosens
        a decision), and a decision already recorded for `new_name` is replaced only by a
        rejection. Returns whether anything was written."""
        with self._lock:
            entries = dict(self.entries())
            carried, present = entries.get(name), entries.get(new_name)
            if carried is None or (present is not None and (
                    carried.get("decision") != "rejected"
                    or present.get("decision") == "rejected")):
                return False
            entries[new_name] = {**carried, "renamed_from": name}
            self._write(entries)
            return True

    def forget(self, name: str) -> None:
        """`name`'s entry goes (`forget skill:NAME`), but for a rejection: forgetting the
        bank's own copy of a skill must not serve a rejected team or third-party skill of that
        name again, so the rejection stays, with what judges the files only (no reason, no
        history of accepted versions)."""
        with self._lock:
            entries = dict(self.entries())
            entry = entries.pop(name, None)
            if entry is None:
                return
            if entry.get("decision") == "rejected":
                entries[name] = {k: entry[k] for k in ("decision", "folder", "version", "files",
                                                        "by", "at") if k in entry}
                if entries[name] == entry:
                    return
            self._write(entries)

    def _write(self, entries: dict[str, Any]) -> None:
        text = json.dumps({"lock_version": LOCK_VERSION, "skills": entries}, indent=2,
                          sort_keys=True, ensure_ascii=False)
        atomic_write(self.path, text + "\n")
        self._cache = None


def carry_snapshots(root: Path, name: str, new_name: str, entry: dict[str, Any]) -> None:
    """The kept copies of `entry`'s accepted versions, under `new_name` too (hard links where
    the file system allows): a renamed skill's `skills versions` / `skills restore` name them
    (hunt-git #1, session 23). A copy that fails is left out: the pin, not the copy, is what
    keeps the skill judged, and the sync carrying it must go on."""
    for item in [entry, *entry.get("history", [])]:
        version = str(item.get("version") or "")
        source, target = root / SNAPSHOTS / name / version, root / SNAPSHOTS / new_name / version
        if not version or not source.is_dir() or target.exists():
            continue
        staging = target.with_name(f".{version}.tmp")
        shutil.rmtree(staging, ignore_errors=True)
        try:
            shutil.copytree(source, staging, copy_function=_link_or_copy)
            os.replace(staging, target)
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


class CopyChanged(Exception):
    """A copy of a skill's files is not the version it was taken for: `files` differ."""

    def __init__(self, files: list[str]) -> None:
        super().__init__(", ".join(files))
        self.files = files


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def kept_differences(pinned: dict[str, str], folder: Path) -> list[str]:
    """The files of a kept copy (`folder`) that are not those of the pinned version: changed,
    missing or added (read now, never from a cache). `OUTSIDE` is not kept, so not compared."""
    wanted = {path: digest for path, digest in pinned.items() if path != OUTSIDE}
    found: dict[str, str] = {}
    for relative, _ in skill_files(folder):
        try:
            found[relative] = "sha256:" + file_sha256(folder / relative)
        except OSError:
            continue
    return changed_files(wanted, found)


def snapshot(root: Path, name: str, version: str, folder: Path,
             digests: dict[str, str]) -> Path | None:
    """Keep a copy of an accepted version (`<root>/skill-versions/<name>/<version>/`), provably
    that version: the files are copied into a temp folder, the copy is digested and compared
    with `digests` (the version's), and only a matching copy is renamed into place.

    The copy was taken of whatever was on disk after the accept had digested the folder: a
    teammate's edit landing between the two kept other bytes (once, a half-written empty
    script) as "version V", and `skills restore NAME@V` served them as V (hunt-skillteam #1,
    session 32). Raises `CopyChanged` (nothing kept) when the files changed meanwhile; an
    existing kept copy that does not match (one kept so) is replaced. Returns None (no copy)
    for a folder over `MAX_SNAPSHOT_BYTES`: the pin still holds."""
    target = root / SNAPSHOTS / name / version
    if target.is_dir() and not kept_differences(digests, target):
        return target
    files = skill_files(folder)
    if sum(stat.st_size for _, stat in files) > MAX_SNAPSHOT_BYTES:
        return None
    target.parent.mkdir(parents=True, exist_ok=True)
    # A temp folder of its own (two accepts of one version may run at once); hidden, so the
    # whole `skill-versions/<name>/` that forget removes holds any a crash left.
    staging = Path(tempfile.mkdtemp(prefix=f".{version}.", suffix=".tmp", dir=target.parent))
    try:
        for relative, _ in files:  # the folder is made before: a skill with no files is kept
            destination = staging / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(folder / relative, destination)
        differences = kept_differences(digests, staging)
        if differences:
            raise CopyChanged(differences)
        if target.is_dir():  # a kept copy that is not this version: replaced
            stale = Path(tempfile.mkdtemp(prefix=f".{version}.", suffix=".old",
                                          dir=target.parent))
            os.replace(target, stale / version)
            shutil.rmtree(stale, ignore_errors=True)
        try:
            os.replace(staging, target)
        except OSError:
            if not (target.is_dir() and not kept_differences(digests, target)):
                raise  # (else another accept of this version kept the same copy first)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target
