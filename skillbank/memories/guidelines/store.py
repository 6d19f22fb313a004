"""Guideline storage: the records <-> the in-memory map <-> the hybrid index.

The records are the truth and live behind the store interface
(`skillbank.store.base.GuidelineRecords`, handed in as ``self._records``): the root's markdown
files in the embedded default, PostgreSQL rows in team mode. Nothing here knows which.
:meth:`GuidelineStore.sync` re-reads the records and brings the index level with them (digests),
and every write goes through :meth:`GuidelineStore._save` (the record first, durably and whole;
then the map; then the index). The index is derived: when a Chroma server does not answer, a
write is kept in the records and indexed by the next sync that reaches it
(``_index_behind``). The index work of a write runs after the deployment's write lock is
released (``_writing``). A mixin of :class:`~skillbank.memories.guidelines.memory.GuidelineMemory`,
which owns the state (``_records``, ``index``, ``_items`` ...).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
import secrets
import unicodedata
import time
from pathlib import PurePath
from typing import Callable, Iterator

from skillbank import scope as scopes
from skillbank import index_mirror, text_words
from skillbank.errors import BusyError, InvalidInputError, NotFoundError, UnsafePathError
from skillbank.fsutil import check_slug, check_topic, slugify
from skillbank.index import IndexItem
from skillbank.index_outage import INDEX_RETRY_SECONDS, ChromaUnavailableError
from skillbank.memories.guidelines.files import (
    _INVISIBLE, ALL_NAMESPACES, ID_RE, IN_PLAY, MAX_NAMESPACE, _check_text, _trim_sources)
from skillbank.records import MAX_SHORT, Finding, Guideline, SyncReport, utcnow
from skillbank.store.base import RecordMovedError

#: How many times a write re-reads a rule a person keeps editing under it before giving up.
MOVED_TRIES = 5
#: How many times a top-level sync reads the records again when they moved before its index
#: part ran (`_sync_index`); past that the next sync levels the index.
SYNC_TRIES = 3

log = logging.getLogger("skillbank.guidelines")


@functools.cache
def _typed_topic() -> re.Pattern[str]:
    """A topic as a person types it (NFKC): words of any script (with their combining marks:
    "हिन्दी"), spaces, hyphens, underscores."""
    return re.compile(rf"(?:{text_words.word()}|[\s_-])+")


#: Joiners of an emoji sequence: zero-width joiner ("👨‍💻"), variation selectors ("❤️").
_EMOJI_JOINERS = frozenset("\u200d\ufe0e\ufe0f")


def _symbols_as_spaces(typed: str) -> str:
    """`typed` with each emoji or other non-ASCII symbol read as a space. `learn` files a topic
    of symbols ("🚀") as `topic-<8 hex>` (`slugify`), but `add`, `list`, `search` and
    `playbook` refused `topic="🚀"`, so such rules could not be added to, listed or filtered
    (hunt-badinput #7, session 26). ASCII symbols ("$", "~", "|") and punctuation stay refused:
    no path trick is slugified into a name the caller did not mean."""
    return "".join(" " if ch in _EMOJI_JOINERS or (not ch.isascii() and unicodedata.category(
        ch)[0] == "S") else ch for ch in typed)


MAX_TASK_CHUNKS = 8  # source tasks embedded per guideline (most recent distinct ones)
MAX_KEYWORD_CHARS = 20_000


class GuidelineStore:
    """Reading, syncing and writing guideline records (see the module docstring)."""

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
        """The topic as rules are filed under it: `learn` slugifies a rule's topic, so a topic
        given to `add`, `search`, `list` or `playbook` is slugified the same way ("sécurité" ->
        "securite"); it went to `add` as typed, and one topic sat in two folders (s22 review)."""
        typed = unicodedata.normalize("NFKC", topic) if isinstance(topic, str) else ""
        if (not typed.strip() or len(typed) > 64
                or not _typed_topic().fullmatch(_symbols_as_spaces(typed))):
            raise UnsafePathError(
                f"invalid topic {topic!r}: a topic is 1-64 letters (any script), digits, emoji, "
                "spaces, hyphens or underscores, filed as a slug ('Sécurité' -> 'securite', "
                "'🚀' -> 'topic-<8 hex>')")
        # Slugified then, as `learn` and `context_for` do: "Sécurité" and "Release Notes" were
        # refused here while learnt under `securite` / `release-notes` (hunt-upgrade #3). No
        # punctuation at all, so no path trick ("..", "C:x", "%2e", fullwidth dots) is slugified
        # into a name the caller did not mean.
        return check_topic(slugify(topic), "topic")

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

    def _not_found(self, gid: str) -> NotFoundError:
        """The one answer for an unknown id and for an id outside the caller's scope.

        Except that a reviewer asking for a rule whose file does not parse is told which file
        and why (what `problems()` shows them): "no guideline gl-…" sent the curator, who saw
        the file, looking for a typo in the id (hunt-curator #7, session 25). Others get the
        one answer still: a path names a topic, a parse error quotes the file; so does a
        reviewer of other namespaces than the file's (`_file_shown`, hunt-scope #1, s. 28)."""
        broken = [f for f in self._unreadable
                  if f.code != "duplicate-id" and PurePath(f.path).name == f"{gid}.md"]
        if broken and self._file_shown(broken[0].path, self._scope()):  # type: ignore[attr-defined]
            return NotFoundError(
                f"guideline {gid} is in {broken[0].path}, which cannot be read: "
                f"{broken[0].message}; fix the file (bank.guidelines.problems() names every "
                "file that cannot be read)")
        return NotFoundError(
            f"no guideline {gid!r}; find ids with bank.guidelines.search(task) or list(), "
            "or run sync() if the file was just added by hand")

    def _new_id(self) -> str:
        """48 random bits not among the records (just refreshed, under the write lock).

        The index is not asked: an entry it holds without a record is replaced by the upsert,
        and asking a Chroma server that does not answer held the deployment's write lock for
        its whole timeout on every new rule (hunt-teamchurn #3, session 33)."""
        while True:
            gid = "gl-" + secrets.token_hex(6)
            if gid not in self._items and gid not in self._digests:
                return gid

    # Sync ------------------------------------------------------------------------------------------
    def sync(self) -> SyncReport:
        """Make memory and index equal to the records: re-read them, drop deleted ones.

        Unparseable files are reported (``skipped`` + ``findings``) and left out; sync never
        raises for a bad file. While a Chroma server does not answer, the map is still brought
        up to date (reads and writes go on) and a finding says the index is behind; a later
        sync that reaches the server catches it up.
        """
        started = time.perf_counter()
        with self._lock:
            nested = self._index_work is not None  # in a write: its index part runs after it
            for _ in range(SYNC_TRIES):
                report = self._sync_once()
                if nested or self._relevel_due is None:
                    break
            else:  # said, or reindex would report a rebuild it did not do (review 5, s. 35)
                report.findings.append(Finding(
                    severity="warning", code="index-behind", path="",
                    message=f"the guideline index was not levelled in {SYNC_TRIES} tries (the "
                            "records kept changing under it, or indexing failed: see the "
                            "log); the next sync levels it"))
        report.seconds = time.perf_counter() - started
        return report

    def _sync_once(self) -> SyncReport:
        """One `sync`: the records read under the write lock, the index levelled after it."""
        report = SyncReport()
        with self._writing():
            loaded = self._records.load()
            report.findings, report.skipped = loaded.findings, loaded.skipped
            self._unreadable = [f for f in loaded.findings if f.severity == "error"]
            self._file_warnings = [f for f in loaded.findings if f.severity == "warning"]
            items = {gid: g for gid, (g, _) in loaded.records.items()}
            digests = {gid: digest for gid, (_, digest) in loaded.records.items()}
            self._items = items
            self._lookup.reset(items.values())
            self._digests = digests
            self._generation += 1  # change_marker: the map was re-read
            self._profiles = {k: v for k, v in self._profiles.items() if k in items}
            self._bags = {k: v for k, v in self._bags.items() if k in items}
            self._loaded = True
            self._index_later(lambda: self._sync_index_or_note(report))
            repaired, revived = self._repair_supersessions()
            for old_id, new_id in repaired:
                report.findings.append(Finding(
                    severity="warning", code="supersede-repaired", path=self._items[old_id].path,
                    message=f"{old_id} marked superseded by {new_id}, whose 'supersedes' lists it "
                            "(an interrupted write had left both active)"))
            for old_id, new_id in revived:
                report.findings.append(Finding(
                    severity="warning", code="supersede-undone", path=self._items[new_id].path,
                    message=f"{old_id} was made active again by hand after {new_id} superseded "
                            f"it: both stay active, and {new_id} now lists it as related"))
        return report

    def _sync_index_or_note(self, report: SyncReport) -> None:
        """`_sync_index`, or while the server does not answer, a finding saying so."""
        try:
            self._sync_index(report)
        except ChromaUnavailableError as exc:
            self._index_behind = time.monotonic()  # the catch-up's clock, not `_relevel_due`
            self._relevel_due = None
            report.findings.append(Finding(severity="warning", code="index-unavailable",
                                           path="", message=str(exc)))

    def _sync_index(self, report: SyncReport) -> None:
        """Upsert what the index lacks or holds an older version of; drop what is gone.

        Runs after the write lock is released (`_writing`), so the records may have moved
        since they were read: then nothing is written (an id another worker has just added
        would be dropped, a rule it has just changed put back to what was read) and the next
        sync levels the index (`_relevel_due`; a top-level `sync` tries again at once). The
        check comes after the index was read: what it holds was written before."""
        indexed = self.index.hashes()
        to_index: list[IndexItem] = []
        counted = SyncReport()
        for gid, guideline in self._items.items():
            digest = self._digests[gid]
            if indexed.get(gid) == digest:
                counted.unchanged += 1
                continue
            (counted.changed if gid in indexed else counted.added).append(gid)
            to_index.append(self._index_item(guideline, digest))
        removed = sorted(gid for gid in indexed if gid not in self._items)
        if (to_index or removed) and self._records.stale():
            self._relevel_due = time.monotonic()
            return
        for start in range(0, len(to_index), 64):
            report.embedded += self.index.upsert(to_index[start:start + 64])
        if removed:
            self.index.delete(removed)
            report.removed = removed
        if getattr(self.index, "pending", 0):  # staged while the server was down (`_save`)
            report.embedded += self.index.fill(wait=False)
        report.unchanged += counted.unchanged  # counted once written (review 5, session 35)
        report.changed += counted.changed
        report.added += counted.added
        self._index_behind = None
        self._relevel_due = None

    def _repair_supersessions(self) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        """Finish supersessions a crash split, and keep the ones a person undid undone.

        Superseding writes the new file first (``supersedes: [old]``) and marks the old one
        second; a kill between the two left both active. The new file's frontmatter is the
        record of intent, so opening or syncing completes it: an active guideline lists `old`,
        and `old` is still in play, unlinked, and untouched since (older file, older update).

        An old rule a person edited by hand since the bank last wrote it (`edited_by_hand`) was
        made active again by that person: their decision, recorded here for good by moving
        `old` from the new rule's ``supersedes`` to its ``related`` (the link stays, the
        supersession goes). Deciding by which of the two files was written last let any later
        rewrite of the newer rule (a vote, even an untrusted one) supersede the revived rule
        again (hunt-curator #2), and a vote on the old rule (untrusted too) pass for a revival
        that dropped a hand-approved replacement's supersession (review F1, session 25).

        Returns (repaired, revived): (old id, new id) pairs of each.
        """
        repaired: list[tuple[str, str]] = []
        revived: list[tuple[str, str]] = []
        for new in list(self._items.values()):
            if new.status != "active" or not new.supersedes:
                continue
            undone: list[str] = []
            for old_id in new.supersedes:
                old = self._items.get(old_id)
                if (old is None or old_id == new.id or old.status not in IN_PLAY
                        or old.superseded_by not in (None, new.id)
                        or old.namespace != new.namespace):
                    continue
                if self._records.edited_by_hand(old):
                    undone.append(old_id)
                    continue
                self._mark_superseded(old_id, new.id, utcnow())
                repaired.append((old_id, new.id))
            if undone:
                self._save(new.model_copy(update={
                    "supersedes": [s for s in new.supersedes if s not in undone],
                    "related": list(dict.fromkeys([*new.related, *undone]))}), reembed=False)
                revived += [(old_id, new.id) for old_id in undone]
        return repaired, revived

    def _ensure_loaded(self) -> None:
        if not self._loaded or self._index_due():
            self.sync()

    def _recheck(self) -> None:
        """Before a search: when the last look is `guidelines_recheck_seconds` old (default
        2; 0: every search), re-read the records if any changed (`_refresh`).

        Why (hunt-curator #1, session 25): a search re-read the files only when a rule it was
        about to serve had changed, so a rule the index does not offer (retired there, filed
        under another topic, or never indexed) was never served: a rule a curator set back to
        `status: active`, wrote by hand or moved to another topic folder stayed out of a
        long-running agent's searches and memory blocks until an unrelated list, get or
        write re-read the files. Spaced as the skill re-check is
        (`skillbank.memories.skills.freshness`): the check is a stat per rule file (one
        query in team mode), a median 1.5 ms at 300 rules and 17 ms at 1,300 on a loaded
        2-core machine (a hash-embedding search: 4 and 21 ms without it), so it runs at most
        once per window, not on every search."""
        seconds = float(self._setting("guidelines_recheck_seconds", 2.0))
        now = time.monotonic()
        if self._loaded and seconds > 0 and now - self._rechecked < seconds:
            self._ensure_loaded()
            return
        self._rechecked = now
        self._refresh()

    def _refresh(self) -> None:
        """Pick up records changed by hand (or by another process) since they were last read.

        Cheap when nothing changed (files: a stat of each; PostgreSQL: one indexed query; no
        reading, no embedding): done before every write and by the inventory views (list,
        counts, topics, playbook)."""
        if not self._loaded or self._records.stale() or self._index_due():
            self.sync()

    def _index_due(self) -> bool:
        """The index missed writes while its server was down (time to try again?), or a
        sync or an index write left it to the next sync."""
        now = time.monotonic()  # both spaced: an index write that keeps failing re-synced on
        return any(since is not None and now - since >= INDEX_RETRY_SECONDS  # every call
                   for since in (self._index_behind, self._relevel_due))

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
    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """This process's lock and the deployment's write lock around a write; the index work
        the write queued (`_index_later`) runs once the write lock is released, under this
        process's lock alone.

        Why: the records are the truth and need the write lock; the index is derived. With the
        index write inside the lock, a Chroma server that stopped answering held the lock for
        its whole `chroma_timeout` on each write, and every other worker's rule write failed
        "another process is writing" (hunt-teamchurn #3, session 33). Two workers' index writes
        of one rule may now land out of order; the worker whose write landed last tells the
        others (the index's change feed), and their next call re-reads that rule from Chroma
        and syncs, which puts the records' version back (`bank._before_use`)."""
        with self._lock:
            outer = self._index_work is None
            if outer:
                self._index_work = []
            failed = True
            try:
                with self.write_lock:
                    yield
                failed = False
            finally:
                if outer:
                    work, self._index_work = self._index_work or [], None
                    self._run_index_work(work, raise_first=not failed)

    def _index_later(self, work: Callable[[], None]) -> None:
        """Run `work` (an index write) after the write lock is released, if held by `_writing`."""
        if self._index_work is None:
            work()
        else:
            self._index_work.append(work)

    def _run_index_work(self, work: list[Callable[[], None]], raise_first: bool) -> None:
        """The queued index writes, in order, each whatever became of the one before.

        An index write that fails (a Chroma error other than an outage, which each handles)
        does not drop the rest: the next sync levels the index (`_relevel_due`). The first such
        error is then raised (`raise_first`: the write itself did not fail), as it was before
        the index work left the lock: a damaged index must say its repair (`skillbank reindex
        --fresh`, `index_repair`) on the write that met it, not only in a log."""
        first: Exception | None = None
        for item in work:
            try:
                item()
            except Exception as exc:  # noqa: BLE001 - raised below, after the rest
                self._relevel_due = time.monotonic()
                first = first or exc
        if first is not None and raise_first:
            raise first

    def _save(self, g: Guideline, *, reembed: bool = True) -> Guideline:
        """Write the record (durably, whole), then bring the map and the index up to date.

        Call with the write lock held. ``reembed=False`` (votes, status changes) only updates
        the index's filterable metadata; content changes re-embed. A Chroma server that does
        not answer does not fail the write: the record is kept and indexed later.
        """
        previous = self._items.get(g.id)
        for attempt in range(MOVED_TRIES):
            try:
                g, digest = self._records.save(
                    g.model_copy(update={"sources": _trim_sources(g.sources)}), previous)
                break
            except RecordMovedError as exc:
                if attempt == MOVED_TRIES - 1:
                    raise BusyError(f"guideline {g.id} was edited by hand {MOVED_TRIES} times "
                                    f"while it was written ({exc}); nothing was written: "
                                    "try again") from None
                g, previous = self._reapplied(g, previous)
        self._items[g.id] = g
        self._generation += 1  # change_marker
        self._lookup.put(g)
        self._digests[g.id] = digest
        moved = previous is not None and previous.path != g.path
        self._index_later(lambda: self._index_saved(g, digest, reembed=reembed, moved=moved))
        return g

    def _index_saved(self, g: Guideline, digest: str, *, reembed: bool, moved: bool) -> None:
        """Bring the index level with a record `_save` wrote (under this process's lock),
        unless a sync queued before it already did (the rule was embedded twice)."""
        try:
            if self._index_behind is not None:
                raise ChromaUnavailableError("the index is already behind")  # keep the order
            held = index_mirror.current(self.index).get(g.id)
            if held is not None and str(held[1].get("hash", "")) == digest:
                return
            if reembed or moved or self.index.metadata(g.id) is None:
                self.index.upsert([self._index_item(g, digest)])
            else:
                self.index.update_metadata(g.id, status=g.status, hash=digest,
                                           helpful=g.helpful, harmful=g.harmful,
                                           reinforcements=g.reinforcements)
        except ChromaUnavailableError as exc:
            if self._index_behind is None:
                self._index_behind = time.monotonic()
                log.warning("skillbank: guideline %s is kept in the records; it is indexed "
                            "when the index answers again (%s)", g.id, exc)
            try:  # searchable by keyword in this process now; embedded by the catch-up's fill
                self.index.stage([self._index_item(g, digest)])
            except ChromaUnavailableError:
                pass  # this process never read the index: the catch-up does it all

    def _reapplied(self, g: Guideline,
                   previous: Guideline | None) -> tuple[Guideline, Guideline | None]:
        """`g`'s change from `previous`, applied to the record as it is now: a person edited
        its file after it was read (`RecordMovedError`), and writing `g` would undo that edit
        (hunt-loop-shared #1, session 31). Call with the write lock held."""
        changes = {name: getattr(g, name) for name in type(g).model_fields
                   if name != "path" and (previous is None
                                          or getattr(g, name) != getattr(previous, name))}
        self.sync()
        now = self._items.get(g.id)
        if now is None:  # removed, or no longer readable: the next load reports it
            raise self._not_found(g.id)
        return now.model_copy(update=changes), now

    def _unindex(self, gids: list[str], then: "Callable[[], object] | None" = None) -> None:
        """Drop removed records' entries from the index (then `then`, e.g. erase their text).

        A Chroma server that does not answer does not fail the removal: the records are gone
        already; this process forgets what it read of the index, and the catch-up reads it
        again and drops what no record backs any more."""
        self._index_later(lambda: self._unindex_now(gids, then))

    def _unindex_now(self, gids: list[str], then: "Callable[[], object] | None") -> None:
        try:
            self.index.delete(gids)
            if then is not None:
                then()
        except ChromaUnavailableError as exc:
            if self._index_behind is None:
                self._index_behind = time.monotonic()
            self.index.invalidate()
            log.warning("skillbank: %s removed from the records; the index drops it when it "
                        "answers again (%s)", ", ".join(gids), exc)

    def _file_changed(self, g: Guideline) -> bool:
        """Whether `g`'s record changed since it was read (by hand, or by another process)."""
        return self._records.changed(g)

