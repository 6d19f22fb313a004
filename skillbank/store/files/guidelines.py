"""Guideline records as the root's markdown files: `<folder>/<topic>/<id>.md`.

Exactly what the embedded default always did: a person may read, edit, move or delete a file
by hand, and the next `load` sees it (the format is `skillbank.memories.guidelines.files`).
Each write is atomic (a temp file renamed over the old one); the stat of every file read or
written is kept, so `stale()` is a `stat` per file, with no reading.
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
from skillbank.store.base import LoadedGuidelines


class FileGuidelineRecords:
    """`skillbank.store.base.GuidelineRecords` over one folder of markdown files."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._files: dict[str, tuple[int, int]] = {}  # path -> (mtime_ns, size) at last read

    # Reading -------------------------------------------------------------------------------------
    def _scan(self) -> tuple[dict[str, Path], list[Finding]]:
        """Guideline files on disk: `<topic>/<id>.md`; anything else is reported, not read."""
        entries, findings = self._entries()
        return {gid: Path(entry.path) for gid, entry in entries.items()}, findings

    def _entries(self) -> tuple[dict[str, os.DirEntry], list[Finding]]:
        """`_scan`'s files as directory entries: `stale()` stats them without a `Path` each
        (51,000 `Path`s were most of a 33 ms check at 1,281 rules, twice per learn)."""
        found: dict[str, os.DirEntry] = {}
        findings: list[Finding] = []
        if not self.folder.is_dir():
            return found, findings
        for topic_dir in sorted(os.scandir(self.folder), key=lambda e: e.name):
            if topic_dir.name.startswith("."):
                continue
            if not topic_dir.is_dir(follow_symlinks=False):
                if topic_dir.name.endswith(".md"):
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
                if entry.name.startswith(".") or not entry.name.endswith(".md"):
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
                                                    "wins"))
                    continue
                found[gid] = entry
        return found, findings

    def _stat_all(self) -> dict[str, tuple[int, int]]:
        out: dict[str, tuple[int, int]] = {}
        entries, _ = self._entries()
        for entry in entries.values():
            try:
                st = entry.stat()  # a regular file (checked): the same as following links
            except OSError:
                continue
            out[entry.path] = (st.st_mtime_ns, st.st_size)
        return out

    @staticmethod
    def _digest(path: Path, data: bytes) -> str:
        return hashlib.sha256(str(path).encode() + b"\0" + data).hexdigest()

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
        return guideline, self._digest(path, data), findings

    def load(self) -> LoadedGuidelines:
        loaded = LoadedGuidelines()
        found, loaded.findings = self._scan()
        files: dict[str, tuple[int, int]] = {}
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
        self._files = files
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

    def written(self, guideline: Guideline) -> int:
        return self._files.get(guideline.path, (0, 0))[0]

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
        data = rewrite_guideline(g, self._current_text(previous)).encode("utf-8")
        if len(data) > MAX_FILE_BYTES:
            raise InvalidInputError(f"guideline {g.id} would exceed {MAX_FILE_BYTES} bytes")
        atomic_write(path, data)
        if previous is not None and previous.path and Path(previous.path) != path:
            try:
                Path(previous.path).unlink()
            except FileNotFoundError:
                pass
            self._files.pop(previous.path, None)
        st = path.stat()
        self._files[str(path)] = (st.st_mtime_ns, st.st_size)
        return g, self._digest(path, data)

    @staticmethod
    def _current_text(previous: Guideline | None) -> str | None:
        """The file a write replaces, as it is on disk now (None: none, or not readable text):
        what a person wrote in it is kept (`rewrite_guideline`; hunt-curator #6, session 25)."""
        if previous is None or not previous.path:
            return None
        try:
            with open(previous.path, "rb") as file:
                data = file.read(MAX_FILE_BYTES + 1)
            return data.decode("utf-8") if len(data) <= MAX_FILE_BYTES else None
        except (OSError, UnicodeDecodeError):
            return None

    def delete(self, guideline: Guideline) -> None:
        os.unlink(guideline.path)  # gone for good, not to a trash (skillbank.forgetting)
        self._remove_write_leftovers(guideline.id)
        fsync_dir(Path(guideline.path).parent)
        self._files.pop(guideline.path, None)

    def _remove_write_leftovers(self, gid: str) -> None:
        """Delete the temp files a write of `gid` left when its process died mid-write, in
        any topic folder it was filed under: they hold the rule's text, and a forgotten rule
        is gone for good (the scan skips them, nothing else reads them)."""
        try:
            topics = [entry.path for entry in os.scandir(self.folder) if entry.is_dir()]
        except OSError:
            return
        for topic in topics:
            remove_leftovers(Path(topic) / f"{gid}.md")
