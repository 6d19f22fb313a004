"""Guideline storage: files on disk <-> the in-memory map <-> the hybrid index.

Files are the truth; :meth:`GuidelineStore.sync` re-reads what changed (content hashes), and
every write goes through :meth:`GuidelineStore._save` (atomic file write, then index and map).
A mixin of :class:`~skillbank.memories.guidelines.memory.GuidelineMemory`, which owns the state
(``folder``, ``index``, ``_items`` ...).
"""

from __future__ import annotations

import hashlib
import os
import secrets
import time
from pathlib import Path

from skillbank import scope as scopes
from skillbank.errors import InvalidInputError, NotFoundError
from skillbank.fsutil import UnsafePathError, atomic_write, check_slug, safe_join
from skillbank.index import IndexItem
from skillbank.memories.guidelines.files import (
    _INVISIBLE, ALL_NAMESPACES, ID_RE, IN_PLAY, MAX_FILE_BYTES, MAX_NAMESPACE, _check_text,
    _trim_sources,
    parse_guideline, render_guideline)
from skillbank.records import MAX_SHORT, Finding, Guideline, SyncReport, utcnow

MAX_TASK_CHUNKS = 8  # source tasks embedded per guideline (most recent distinct ones)
MAX_KEYWORD_CHARS = 20_000


class GuidelineStore:
    """Scanning, reading, syncing and writing guideline files (see the module docstring)."""

    # Validation ----------------------------------------------------------------------------------
    @staticmethod
    def _check_id(gid: str) -> str:
        if not isinstance(gid, str):
            raise InvalidInputError(f"guideline id must be a string, got {type(gid).__name__}")
        check_slug(gid, "guideline id")
        if not ID_RE.match(gid):
            raise InvalidInputError(
                f"{gid!r} is not a guideline id: they look like gl-<12 hex digits>; "
                "find ids with bank.guidelines.list(namespace=\"*\") or search()")
        return gid

    @staticmethod
    def _check_topic(topic: str) -> str:
        return check_slug(topic, "topic")

    def _namespace(self, namespace: str | None, *, allow_all: bool = False) -> str:
        if namespace is None:
            return self.default_namespace
        _check_text(namespace, "namespace", MAX_NAMESPACE)
        if not namespace.strip():
            raise InvalidInputError("namespace must be a non-empty string")
        if namespace == ALL_NAMESPACES and not allow_all:
            raise InvalidInputError(f"namespace {ALL_NAMESPACES!r} (all) is only for list/counts")
        if _INVISIBLE.search(namespace) or namespace != namespace.strip():
            raise InvalidInputError(
                f"namespace must be at most {MAX_NAMESPACE} printable characters, with no "
                "control characters or surrounding spaces")
        return namespace

    # The caller's scope (skillbank.scope) ------------------------------------------------------
    def _scope(self, trusted: object = True) -> "scopes.Scope":
        """The caller's scope; the bank's own default is the local user (admin)."""
        return scopes.caller(self.default_namespace, trusted)

    def _read_spaces(self, namespace: str | None, *, allow_all: bool = False,
                     scope: "scopes.Scope | None" = None) -> tuple[str, ...]:
        """What a read covers (`Scope.read_namespaces`) after this memory's own checks."""
        if namespace is not None:
            self._namespace(namespace, allow_all=allow_all)
        return (scope or self._scope()).read_namespaces(namespace)

    def _write_ns(self, namespace: str | None, scope: "scopes.Scope | None" = None) -> str:
        """Where a write goes (`Scope.write_namespace`) after this memory's own checks."""
        if namespace is not None:
            self._namespace(namespace)
        return (scope or self._scope()).write_namespace(namespace)

    def _shown(self, g: Guideline, spaces: tuple[str, ...], scope: "scopes.Scope") -> bool:
        """Listed to this caller: in a namespace it reads, and if pending, one it reviews."""
        return scopes.covers(spaces, g.namespace) and (
            g.status != "pending" or scope.can_review(g.namespace))

    @staticmethod
    def _not_found(gid: str) -> NotFoundError:
        """The one answer for an unknown id and for an id outside the caller's scope."""
        return NotFoundError(
            f"no guideline {gid!r}; find ids with bank.guidelines.search(task) or list(), "
            "or run sync() if the file was just added by hand")

    def _path_for(self, topic: str, gid: str) -> Path:
        return safe_join(self.folder, f"{self._check_topic(topic)}/{self._check_id(gid)}.md")

    def _new_id(self) -> str:
        while True:
            gid = "gl-" + secrets.token_hex(6)
            if gid not in self._items and self.index.metadata(gid) is None:
                return gid

    # Scanning and sync ---------------------------------------------------------------------------
    def _scan(self) -> tuple[dict[str, Path], list[Finding]]:
        """Guideline files on disk: `<topic>/<id>.md`; anything else is reported, not read."""
        found: dict[str, Path] = {}
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
                check_slug(topic_dir.name, "topic")
            except UnsafePathError:
                findings.append(Finding(severity="warning", code="bad-topic-folder",
                                        path=topic_dir.path,
                                        message="topic folders are slugs (a-z, 0-9, '-'); "
                                                "files in this one are not read"))
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
                                            message=f"{gid} is also at {found[gid]}, which wins"))
                    continue
                found[gid] = Path(entry.path)
        return found, findings

    def _stat_all(self) -> dict[str, tuple[int, int]]:
        out: dict[str, tuple[int, int]] = {}
        found, _ = self._scan()
        for path in found.values():
            try:
                st = path.stat()
            except OSError:
                continue
            out[str(path)] = (st.st_mtime_ns, st.st_size)
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
                                              expected_topic=path.parent.name)
        return guideline, self._digest(path, data), findings

    def sync(self) -> SyncReport:
        """Make memory and index equal to the files: re-read changed files, drop deleted ones.

        Unparseable files are reported (``skipped`` + ``findings``) and left out; sync never
        raises for a bad file.
        """
        started = time.perf_counter()
        report = SyncReport()
        with self._lock, self.write_lock:
            found, report.findings = self._scan()
            indexed = self.index.hashes()
            items: dict[str, Guideline] = {}
            files: dict[str, tuple[int, int]] = {}
            digests: dict[str, str] = {}
            to_index: list[IndexItem] = []
            for gid, path in found.items():
                try:  # before reading, so an edit made while we read is seen next time
                    st = path.stat()
                    files[str(path)] = (st.st_mtime_ns, st.st_size)
                except OSError:
                    pass
                guideline, digest, findings = self._read(gid, path)
                report.findings.extend(findings)
                if guideline is None:
                    report.skipped.append(str(path))
                    continue
                items[gid] = guideline
                digests[gid] = digest
                if indexed.get(gid) == digest:
                    report.unchanged += 1
                    continue
                (report.changed if gid in indexed else report.added).append(gid)
                to_index.append(self._index_item(guideline, digest))
            removed = sorted(gid for gid in indexed if gid not in items)
            for start in range(0, len(to_index), 64):
                report.embedded += self.index.upsert(to_index[start:start + 64])
            if removed:
                self.index.delete(removed)
                report.removed = removed
            self._items = items
            self._files = files
            self._digests = digests
            self._profiles = {k: v for k, v in self._profiles.items() if k in items}
            self._bags = {k: v for k, v in self._bags.items() if k in items}
            self._loaded = True
            for old_id, new_id in self._repair_supersessions():
                report.findings.append(Finding(
                    severity="warning", code="supersede-repaired", path=self._items[old_id].path,
                    message=f"{old_id} marked superseded by {new_id}, whose 'supersedes' lists it "
                            "(an interrupted write had left both active)"))
        report.seconds = time.perf_counter() - started
        return report

    def _repair_supersessions(self) -> list[tuple[str, str]]:
        """Finish supersessions a crash split: an active guideline lists ``supersedes: [old]``
        but `old` is still in play, unlinked, and untouched since (older file, older update).

        Superseding writes the new file first and marks the old one second; a kill between the
        two left both active. The new file's frontmatter is the record of intent, so opening or
        syncing completes it. An old rule a person edited later (newer file) is left alone.
        """
        repaired: list[tuple[str, str]] = []
        for new in list(self._items.values()):
            if new.status != "active" or not new.supersedes:
                continue
            new_mtime = self._files.get(new.path, (0, 0))[0]
            for old_id in new.supersedes:
                old = self._items.get(old_id)
                if (old is None or old_id == new.id or old.status not in IN_PLAY
                        or old.superseded_by not in (None, new.id)
                        or old.namespace != new.namespace or old.updated > new.updated
                        or self._files.get(old.path, (0, 0))[0] > new_mtime):
                    continue
                self._mark_superseded(old_id, new.id, utcnow())
                repaired.append((old_id, new.id))
        return repaired

    def _ensure_loaded(self) -> None:
        if not self._loaded:
            self.sync()

    def _refresh(self) -> None:
        """Pick up files changed by hand (or by another process) since they were last read.

        A stat of every file (no reading, no embedding unless something changed): done before
        every write and by the inventory views (list, counts, topics, playbook)."""
        if not self._loaded or self._stat_all() != self._files:
            self.sync()

    # Index items ---------------------------------------------------------------------------------
    @staticmethod
    def _source_tasks(g: Guideline) -> list[str]:
        tasks: list[str] = []
        for source in reversed(g.sources):  # most recent first
            task = " ".join((source.task or "").split())
            if task and task not in tasks:
                tasks.append(task[:MAX_SHORT])
            if len(tasks) >= MAX_TASK_CHUNKS:
                break
        return tasks

    def _index_item(self, g: Guideline, digest: str) -> IndexItem:
        """What a guideline is found by (see the module docstring)."""
        when = " ".join(g.when_to_use.split())
        tasks = self._source_tasks(g)
        texts = [f"{g.text} {when}".strip()]  # the rule and when it applies
        if when:
            texts.append(when)  # when it applies, alone: the kind of task decides
        if tasks:  # the rule as used: what it was learned on (one text, so it reads as a whole)
            texts.append(f"{g.text} {when} Tasks: {'; '.join(tasks)}".strip())
        critiques = "\n".join(s.critique for s in g.sources)
        keyword = "\n".join([g.text, g.text, when, g.topic.replace("-", " "), "\n".join(tasks),
                             critiques])[:MAX_KEYWORD_CHARS]
        metadata = {
            "kind": "guideline",
            "status": g.status,
            "topic": g.topic,
            "namespace": g.namespace,
            "hash": digest,
            "path": g.path,
            "helpful": g.helpful,
            "harmful": g.harmful,
            "reinforcements": g.reinforcements,
        }
        return IndexItem(id=g.id, embed_texts=texts, keyword_text=keyword, metadata=metadata)

    # Writing -------------------------------------------------------------------------------------
    def _save(self, g: Guideline, *, reembed: bool = True) -> Guideline:
        """Write the file atomically, then bring the index and the in-memory map up to date.

        Call with the write lock held. ``reembed=False`` (votes, status changes) only updates
        the index's filterable metadata; content changes re-embed.
        """
        path = self._path_for(g.topic, g.id)
        previous = self._items.get(g.id)
        g = g.model_copy(update={"path": str(path), "sources": _trim_sources(g.sources)})
        text = render_guideline(g)
        data = text.encode("utf-8")
        if len(data) > MAX_FILE_BYTES:
            raise InvalidInputError(f"guideline {g.id} would exceed {MAX_FILE_BYTES} bytes")
        atomic_write(path, data)
        if previous is not None and previous.path and Path(previous.path) != path:
            try:
                Path(previous.path).unlink()
            except FileNotFoundError:
                pass
            self._files.pop(previous.path, None)
        digest = self._digest(path, data)
        if reembed or self.index.metadata(g.id) is None or (
                previous is not None and previous.path != str(path)):
            self.index.upsert([self._index_item(g, digest)])
        else:
            self.index.update_metadata(g.id, status=g.status, hash=digest, helpful=g.helpful,
                                       harmful=g.harmful, reinforcements=g.reinforcements)
        st = path.stat()
        self._files[str(path)] = (st.st_mtime_ns, st.st_size)
        self._items[g.id] = g
        self._digests[g.id] = digest
        return g

    def _file_changed(self, g: Guideline) -> bool:
        try:
            st = os.stat(g.path)
        except OSError:
            return True
        return self._files.get(g.path) != (st.st_mtime_ns, st.st_size)

