"""Guideline records as the root's markdown files: `<folder>/<topic>/<id>.md`.

Exactly what the embedded default always did: a person may read, edit, move or delete a file
by hand, and the next `load` sees it (the format is `skillbank.memories.guidelines.files`).
Each write is atomic (a temp file renamed over the old one); the stat of every file read or
written is kept, so `stale()` is a `stat` per file, with no reading.

A write replaces a file a person may be editing at that moment (no lock binds an editor): it
is based on the bytes the record was read from, checks the file still holds them when it reads
it and again just before the rename, and raises `RecordMovedError` when not (the store reads
the file again and re-applies its change). A vote landing in the same moment as a hand edit
wrote the record as it was read over the edit, which was lost without a word; and the stat
taken after the rename passed an edit made just after it for the bank's own write, so the next
vote reverted it (hunt-loop-shared #1, session 31). What was written is now recorded by the
written file's own stat and digest.
"""

from __future__ import annotations

import hashlib
import os
import unicodedata
from pathlib import Path
from typing import Sequence

from skillbank.errors import InvalidInputError
from skillbank.fsutil import (UnsafePathError, atomic_write, check_slug, check_topic, fsync_dir,
                              remove_leftovers, safe_join)
from skillbank.memories.guidelines.file_rewrite import rewrite_guideline
from skillbank.memories.guidelines.files import ID_RE, MAX_FILE_BYTES, parse_guideline
from skillbank.records import Finding, Guideline
from skillbank.store.base import LoadedGuidelines, RecordMovedError


#: How far past its ``updated`` a rule file's write time must be to be a person's edit, for a
#: file the bank has no `written_path` digest of (written by a version before it, or by hand).
HAND_EDIT_SECONDS = 5.0
#: Beside the guidelines folder, hidden (`<root>/.guidelines.written/`; outside it, so not in a
#: curator's git repository of the rules): `<id>.sha256`, the digest of the bytes the bank last
#: wrote to that rule's file, how `edited_by_hand` tells a person's edit.
WRITTEN_SUFFIX = ".written"


class FileGuidelineRecords:
    """`skillbank.store.base.GuidelineRecords` over one folder of markdown files."""

    def __init__(self, folder: str | Path, *, placed: bool = False) -> None:
        self.folder = Path(folder)
        self._placed = placed  # keep `placed_digests` (`skillbank migrate` only: a hash more)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._files: dict[str, tuple[int, int]] = {}  # path -> (mtime_ns, size) at last read
        self._read_digests: dict[str, str] = {}  # path -> digest of the bytes read or written
        #: With `placed`: id -> `_placed_digest` of each rule the last `load` read, the same
        #: wherever the folder is (what `skillbank migrate` compares; `load`'s digests name the
        #: full path).
        self.placed_digests: dict[str, str] = {}

    # Reading -------------------------------------------------------------------------------------
    def _scan(self) -> tuple[dict[str, Path], list[Finding], list[os.DirEntry]]:
        """Guideline files on disk: `<topic>/<id>.md`; anything else is reported, not read.
        The third part: second files of an id already found (`_entries`)."""
        entries, findings, shadowed = self._entries()
        return {gid: Path(entry.path) for gid, entry in entries.items()}, findings, shadowed

    def _entries(self) -> tuple[dict[str, os.DirEntry], list[Finding], list[os.DirEntry]]:
        """`_scan`'s files as directory entries: `stale()` stats them without a `Path` each
        (51,000 `Path`s were most of a 33 ms check at 1,281 rules, twice per learn).

        Also the files an id's first file shadows (the same `<id>.md` in a second topic
        folder, a `cp` instead of a `mv`): `stale()` stats them too, so one added, edited or
        removed while a process runs is noticed by it; only the winners were, and a running
        process never reported the duplicate (hunt-curator #5, session 25)."""
        found: dict[str, os.DirEntry] = {}
        findings: list[Finding] = []
        shadowed: list[os.DirEntry] = []
        if not self.folder.is_dir():
            return found, findings, shadowed
        for topic_dir in sorted(os.scandir(self.folder), key=lambda e: e.name):
            if topic_dir.name.startswith("."):
                continue
            if not topic_dir.is_dir(follow_symlinks=False):
                if topic_dir.name.endswith(".md") and not _is_readme(topic_dir.name):
                    findings.append(Finding(severity="warning", code="stray-file",
                                            path=topic_dir.path,
                                            message="guideline files live in <topic>/<id>.md; "
                                                    "this one is not read"))
                continue
            try:
                check_topic(topic_dir.name, "topic")
            except UnsafePathError:
                findings.append(Finding(severity="warning", code="bad-topic-folder",
                                        path=topic_dir.path,
                                        message="topic folders are slugs (lower-case letters of "
                                                "any script, digits, '-'); files in this one "
                                                "are not read"))
                continue
            for entry in sorted(os.scandir(topic_dir.path), key=lambda e: e.name):
                if entry.name.startswith(".") or not entry.name.endswith(".md") \
                        or _is_readme(entry.name):
                    continue
                gid = entry.name[:-3]
                if not entry.is_file(follow_symlinks=False):
                    findings.append(Finding(severity="warning", code="not-a-file",
                                            path=entry.path, message="not a regular file; skipped"))
                    continue
                if not ID_RE.match(gid):
                    findings.append(Finding(severity="warning", code="bad-file-name",
                                            path=entry.path,
                                            message="guideline files are named gl-<12 hex>.md; "
                                                    "this one is not read"))
                    continue
                if gid in found:
                    findings.append(Finding(severity="error", code="duplicate-id", path=entry.path,
                                            message=f"{gid} is also at {found[gid].path}, which "
                                                    "wins; forgetting the id erases both"))
                    shadowed.append(entry)
                    continue
                found[gid] = entry
        return found, findings, shadowed

    def _stat_all(self) -> dict[str, tuple[int, int]]:
        out: dict[str, tuple[int, int]] = {}
        entries, _, shadowed = self._entries()
        for entry in [*entries.values(), *shadowed]:
            try:
                st = entry.stat()  # a regular file (checked): the same as following links
            except OSError:
                continue
            out[entry.path] = (st.st_mtime_ns, st.st_size)
        return out

    @staticmethod
    def _digest(path: Path, data: bytes) -> str:
        """A version of one rule file: its bytes, salted with its full path, so a file that
        moved (another topic folder, or the root moved with its embedded index) is indexed
        again and the index's `path` names where it is now."""
        return hashlib.sha256(str(path).encode() + b"\0" + data).hexdigest()

    def _placed_digest(self, path: Path, data: bytes) -> str:
        """A version of one rule file as the folder holds it: its bytes, salted with its place
        inside the folder (`<topic>/<id>.md`), not with where the folder is. `skillbank
        migrate` keeps it for each rule it imported: with `_digest`, a root restored from its
        backup to a new path had every rule re-saved and reported as imported (hunt-teamport
        #4, session 35), though the root had changed none."""
        place = path.relative_to(self.folder).as_posix()
        return hashlib.sha256(b"placed\0" + place.encode() + b"\0" + data).hexdigest()

    def _read(self, gid: str, path: Path) -> tuple[Guideline | None, str, list[Finding]]:
        try:
            size = path.stat().st_size
            if size > MAX_FILE_BYTES:
                return None, "", [Finding(severity="error", code="too-large", path=str(path),
                                          message=f"{size} bytes; at most {MAX_FILE_BYTES}")]
            data = path.read_bytes()
        except OSError as exc:
            return None, "", [Finding(severity="error", code="unreadable", path=str(path),
                                      message=str(exc))]
        if b"\0" in data:
            return None, "", [Finding(severity="error", code="binary", path=str(path),
                                      message="contains NUL bytes; not a text file")]
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return None, "", [Finding(severity="error", code="encoding", path=str(path),
                                      message=f"not valid UTF-8 (byte {exc.start})")]
        guideline, findings = parse_guideline(text, path=str(path), expected_id=gid,
                                              expected_topic=unicodedata.normalize(
                                                  "NFC", path.parent.name))
        if self._placed:
            self.placed_digests[gid] = self._placed_digest(path, data)
        return guideline, self._digest(path, data), findings

    def load(self) -> LoadedGuidelines:
        loaded = LoadedGuidelines()
        found, loaded.findings, shadowed = self._scan()
        files: dict[str, tuple[int, int]] = {}
        read: dict[str, str] = {}
        self.placed_digests = {}
        for entry in shadowed:  # not read, but watched (`_entries`)
            try:
                st = entry.stat()
                files[entry.path] = (st.st_mtime_ns, st.st_size)
            except OSError:
                pass
        for gid, path in found.items():
            try:  # before reading, so an edit made while we read is seen next time
                st = path.stat()
                files[str(path)] = (st.st_mtime_ns, st.st_size)
            except OSError:
                pass
            guideline, digest, findings = self._read(gid, path)
            loaded.findings.extend(findings)
            if guideline is None:
                loaded.skipped.append(str(path))
                continue
            loaded.records[gid] = (guideline, digest)
            read[str(path)] = digest
        self._files, self._read_digests = files, read
        return loaded

    def stale(self) -> bool:
        return self._stat_all() != self._files

    def changed(self, guideline: Guideline) -> bool:
        try:
            st = os.stat(guideline.path)
        except OSError:
            return True
        return self._files.get(guideline.path) != (st.st_mtime_ns, st.st_size)

    def changed_among(self, guidelines: Sequence[Guideline]) -> bool:
        return any(self.changed(g) for g in guidelines)  # a stat each

    def edited_by_hand(self, guideline: Guideline) -> bool:
        """The file differs from the bytes the bank last wrote to it (`written_path`): every write
        of the bank records them (a vote, untrusted ones too), a person's edit does not.

        It was read off the file's write time (the kernel's clock) against the ``updated:``
        the bank wrote (the process's clock): a vote cast while the process clock trailed by
        over 5 s (a clock stepped back, an NFS server ahead) passed for a hand revival, and a
        revival whose ``updated:`` a person typed in local time or the future passed for the
        bank's own write, silently undone (hunt-time #1 and #6, session 29). Comparing two
        files' write times instead let an untrusted vote on an old rule count as a person
        reviving it (review F1, session 25). Only a file with no recorded digest (written by a
        version before this one) is still judged by its write time."""
        try:
            data = Path(guideline.path).read_bytes()
        except OSError:
            return False  # gone or unreadable: the next load reports it, nothing to decide
        written = self._written_digest(guideline.id)
        if written is not None:
            return hashlib.sha256(data).hexdigest() != written
        written_ns = self._files.get(guideline.path, (0, 0))[0]
        updated = guideline.updated
        return bool(written_ns) and updated is not None and \
            written_ns / 1e9 > updated.timestamp() + HAND_EDIT_SECONDS

    def written_path(self, gid: str) -> Path:
        """Where the digest of what the bank last wrote to `gid`'s file is kept."""
        return (self.folder.parent / f".{self.folder.name}{WRITTEN_SUFFIX}"
                / f"{check_slug(gid, 'id')}.sha256")

    def _written_digest(self, gid: str) -> str | None:
        try:
            text = self.written_path(gid).read_text("ascii").strip()
        except (OSError, UnicodeDecodeError, UnsafePathError):
            return None
        return text if len(text) == 64 else None

    def _remember_written(self, gid: str, data: bytes) -> str | None:
        """Record the bytes about to be written to `gid`'s file; returns the digest it replaces
        (to put back if the file's write fails: `_forget_written`).

        Before the file, not after: a digest refused after the file landed failed a vote that
        had been saved (exit 5, yet `helpful: 2` after two tries), and its stale digest made a
        later hand approval pass for a revival (review of hunt-time #1, session 29). A crash
        between the two still leaves the rule looking edited by hand, never a person's edit
        looking like the bank's."""
        previous = self._written_digest(gid)
        path = self.written_path(gid)
        path.parent.mkdir(exist_ok=True)
        atomic_write(path, hashlib.sha256(data).hexdigest() + "\n")
        return previous

    def _forget_written(self, gid: str, previous: str | None) -> None:
        """Put back the digest of the file a failed write left as it was (best effort: a
        digest that stays names bytes the file lacks, so the rule reads as edited by hand)."""
        path = self.written_path(gid)
        try:
            if previous is None:
                path.unlink(missing_ok=True)
            else:
                atomic_write(path, previous + "\n")
        except OSError:
            pass

    def search_text(self, query: str, limit: int, namespaces: tuple[str, ...] | None = None,
                    topic: str | None = None) -> dict[str, float] | None:
        return None  # the index's own keyword side (in this process) answers for files

    # Writing -------------------------------------------------------------------------------------
    def path_for(self, topic: str, gid: str) -> Path:
        return safe_join(self.folder, f"{check_topic(topic, 'topic')}/{check_slug(gid, 'id')}.md")

    def save(self, guideline: Guideline,
             previous: Guideline | None = None) -> tuple[Guideline, str]:
        path = self.path_for(guideline.topic, guideline.id)
        g = guideline.model_copy(update={"path": str(path)})
        based_on = self._current_bytes(previous)
        read = self._read_digests.get(previous.path) if previous is not None else None
        if based_on is not None and read is not None \
                and self._digest(Path(previous.path), based_on) != read:
            raise RecordMovedError(previous.path)  # edited since `previous` was read from it
        data = rewrite_guideline(g, _text(based_on)).encode("utf-8")
        if len(data) > MAX_FILE_BYTES:
            raise InvalidInputError(f"guideline {g.id} would exceed {MAX_FILE_BYTES} bytes")

        def unmoved() -> None:  # the last look, under the write lock, before the rename
            if self._current_bytes(previous) != based_on:
                raise RecordMovedError(previous.path if previous else str(path))

        previous_digest = self._remember_written(g.id, data)
        try:
            written = atomic_write(path, data, before_replace=unmoved)
        except BaseException:
            self._forget_written(g.id, previous_digest)
            raise
        if previous is not None and previous.path and Path(previous.path) != path:
            try:
                Path(previous.path).unlink()
            except FileNotFoundError:
                pass
            self._files.pop(previous.path, None)
            self._read_digests.pop(previous.path, None)
        # The written file's own stat (taken before the rename): an edit landing just after
        # the rename changes it, so `stale()` sees it (a stat of the path now may be the edit's).
        st = written if written is not None else path.stat()
        self._files[str(path)] = (st.st_mtime_ns, st.st_size)
        digest = self._digest(path, data)
        self._read_digests[str(path)] = digest
        return g, digest

    @staticmethod
    def _current_bytes(previous: Guideline | None) -> bytes | None:
        """The file a write replaces, as it is on disk now (None: none, or too large to be a
        rule): what a person wrote in it is kept (`rewrite_guideline`; hunt-curator #6,
        session 25)."""
        if previous is None or not previous.path:
            return None
        try:
            with open(previous.path, "rb") as file:
                data = file.read(MAX_FILE_BYTES + 1)
        except OSError:
            return None
        return data if len(data) <= MAX_FILE_BYTES else None

    def delete(self, guideline: Guideline) -> list[str]:
        """Erase the record's file and every other `<topic>/<id>.md` of its id (the others
        first: one that cannot be erased fails the forget before the rule is gone); returns
        the paths of those others.

        A copy of the file in a second topic folder (`cp` where `mv` was meant) was left: at
        the next read it loaded as the forgotten rule, which was served again, its text on
        disk, after forget had said "forgot for good" (hunt-curator #5, session 25)."""
        copies: list[str] = []
        try:  # not a copy of the rule: a digest of it, gone with it
            self.written_path(guideline.id).unlink()
        except FileNotFoundError:
            pass
        home = os.stat(Path(guideline.path).parent)  # the record's own folder
        for topic in self._subfolders():
            copy = Path(topic) / f"{guideline.id}.md"
            remove_leftovers(copy)  # temp files of a write its process died in
            try:
                if os.path.samestat(os.stat(topic), home) or not copy.is_file() \
                        or copy.is_symlink():
                    continue  # the record itself (erased below), or no file of the id here
            except OSError:
                continue
            copy.unlink()
            fsync_dir(copy.parent)
            self._files.pop(str(copy), None)
            copies.append(str(copy))
        copies += self._erase_named_copies(guideline)
        os.unlink(guideline.path)  # gone for good, not to a trash (skillbank.forgetting)
        fsync_dir(Path(guideline.path).parent)
        self._files.pop(guideline.path, None)
        return copies

    def _erase_named_copies(self, guideline: Guideline) -> list[str]:
        """Erase every other file under the guidelines folder whose name begins with the id
        (`gl-X (copy).md`, `gl-X.md.bak`, `python/old/gl-X.md`): none is read as the rule, but
        each held its text after forget said "for good" (review F3, session 25). An id is
        `gl-` and 12 hex digits, so no other rule's file name begins with it."""
        erased: list[str] = []
        for folder, subfolders, names in os.walk(self.folder):
            subfolders[:] = [name for name in subfolders
                             if not os.path.islink(os.path.join(folder, name))]
            for name in names:
                path = os.path.join(folder, name)
                if not name.startswith(guideline.id) or path == guideline.path \
                        or os.path.islink(path) or not os.path.isfile(path):
                    continue
                os.unlink(path)
                fsync_dir(Path(folder))
                self._files.pop(path, None)
                erased.append(path)
        return erased

    def _subfolders(self) -> list[str]:
        """Every folder a guideline file may have been put in (topic folders, hidden and
        badly named ones too: a forgotten rule's text leaves them all)."""
        try:
            return [entry.path for entry in os.scandir(self.folder)
                    if entry.is_dir(follow_symlinks=False)]
        except OSError:
            return []


def _text(data: bytes | None) -> str | None:
    """A rule file's bytes as text (None: none, or not UTF-8: nothing of it to keep)."""
    try:
        return data.decode("utf-8") if data is not None else None
    except UnicodeDecodeError:
        return None


def _is_readme(name: str) -> bool:
    """A README.md a curator keeps beside the rules (what this folder holds, how to edit it)
    is theirs, not a misnamed rule: it was reported as a stray file on every `reindex`."""
    return name.lower() == "readme.md"
