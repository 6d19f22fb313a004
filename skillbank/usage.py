"""Usage counters kept as an append-only event log per memory.

Counting a use must be cheap (it happens on every retrieval) and must never rewrite a user's
files, so events are appended to `<root>/usage/<memory>.jsonl` and summed when the bank opens.
A torn last line from a crash is skipped.

Plain use counts are buffered: they are applied in memory at once and written in one append
(one fsync) per `FLUSH_EVERY` events or `FLUSH_SECONDS` (a daemon thread writes what waits
longer while the process is idle), on `flush()` (which
`Skillbank.flush()` and `close()` call) and at interpreter exit — a recall no longer pays an
fsync per hit. A crash can lose the last few use counts, never anything else: a rating
(`ok=True/False`, a person or agent saying whether an item helped) is written through at once.

A disk that refuses a write (full, read-only, a file size limit) leaves nothing of it in the log:
the write is all or nothing (`_append_whole`). Plain uses it refused stay buffered — folded to
one line per item, so the buffer stays as small as the number of items counted — and are tried
again `FLUSH_SECONDS` later; the use that counted them does not fail (a warning says they wait in
memory: a crash before the disk takes them loses them). A rating or any other written-through
event it refused is taken back whole (its line and its counts) and the call raises: the caller
was told it failed, so it is never written later (hunt-disk #1 and #2, session 29).

Untrusted signals are kept apart (`trusted=False`: an event line with `"u": 1`): they are
counted in `untrusted(item_id)` and never in `get`/`all`/`prior`, so anonymous votes or recalls
move no trusted ranking and make no prune candidate — until a reviewer `accept`s them, which
journals one `accept` event folding them into the trusted counts. How votes count (an
outsider's once, as his net; untrusted ones per principal): `skillbank.usage_votes`.

Counts are keyed by the item's id, which for a skill is its name, so a renamed skill's counts
would stay behind for the next skill given the old name (users met a new, unrelated skill
landing in the review queue with the five "did not help" of the skill renamed away). `move`
journals `{"id": old, "to": new}` (everything of `old` becomes `new`'s) and `reset` journals
`{"id": x, "reset": 1}` (a deleted or forgotten item's name starts again at zero).

The log is folded once it passes `FOLD_BYTES` (at open, or when a write takes it past): each
item's plain uses summed into one line, every other event kept (`skillbank.usage_fold`), the
file replaced atomically. A use was one ~79-byte line per item shown, never rewritten, and every
open read them all: ~600k recall hits made a 47 MB log and an 8-10 s open (hunt-exp #4, session
27). Appends and the fold take the file's exclusive lock (`locked_journal`), so no other
process's append is lost to a fold; appends wait for one another (one per batch), so one cut
short can be cut back to where it began with nobody's line after it. A process whose log was
folded by another reads it again (server mode) before it counts on.
"""

from __future__ import annotations

import atexit
import errno
import functools
import json
import logging
import os
import threading
import time
import weakref
from pathlib import Path
from typing import Any, Callable

from skillbank import outside_votes
from skillbank.fsutil import atomic_write, can_lock_journals, locked_journal
from skillbank.records import Usage, utcnow
from skillbank.usage_fold import UsageFold
from skillbank.usage_votes import UsageVotes, _touch

log = logging.getLogger("skillbank.usage")

#: The per-item tables of a log's counts (each moved, reset and rebuilt with the item).
_TABLES = ("_counts", "_untrusted", "_outside", "_voters", "_users", "_raters")
#: Buffered use events are written once this many are waiting, or this long after the first.
FLUSH_EVERY = 256
FLUSH_SECONDS = 5.0
#: Server mode: how often a read looks for events other processes appended (one `stat`).
REFRESH_SECONDS = 0.2
#: A log larger than this is folded (`skillbank.usage_fold`), unless that would not halve it;
#: the next fold waits until it is twice its folded size.
FOLD_BYTES = 1 << 20


class UsageLog(UsageVotes):
    """Per-item uses / successes / failures, durable and cheap to update; its votes are
    counted by `skillbank.usage_votes.UsageVotes`."""

    def __init__(self, path: Path, *, shared: bool = False) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._counts: dict[str, Usage] = {}
        self._untrusted: dict[str, Usage] = {}  # kept apart until accepted
        self._outside: dict[str, dict[str, int]] = {}  # item -> outsider -> net vote
        self._voters: dict[str, dict[str, int]] = {}  # item -> untrusted principal -> net
        self._users: dict[str, set[str]] = {}  # item -> outsiders whose use is counted
        self._raters: dict[str, set[str]] = {}  # item -> untrusted principals whose use is
        self._pending: list[str] = []  # event lines applied in memory, not yet on disk
        self._since = 0.0  # when the oldest pending line was buffered (monotonic)
        #: Server mode (several processes append to this file): reads pick up the events the
        #: others appended since (`_refresh`), so their votes and uses count here too.
        self.shared = shared
        self._offset = 0  # bytes of the file applied here, own appends included
        self._own: list[tuple[int, int]] = []  # own appends beyond `_offset` (start, end)
        self._checked = 0.0
        self._file: tuple[int, int] | None = None  # (device, inode) `_offset` counts in
        #: That file, held open: a file another process's fold unlinked frees its inode
        #: number, and the next fold's file took it, so (device, inode) said "the same file"
        #: of a new one and this process never counted what it held (review2 #7, session 27).
        self._held: int | None = None
        self._fold_at = FOLD_BYTES  # the size at which the log is folded next
        self._retry_after = 0.0  # buffered uses the disk refused wait until then (monotonic)
        self._refused: OSError | None = None  # why the last write of buffered uses failed
        self._load()
        _open_logs.add(self)

    def _load(self) -> None:
        if not self.path.is_file():
            return
        with self.path.open("rb") as handle:
            info = os.fstat(handle.fileno())
            self._file = (info.st_dev, info.st_ino)
            self._hold(os.dup(handle.fileno()))
            fold = UsageFold() if info.st_size > FOLD_BYTES and can_lock_journals() else None
            for raw in handle:
                event = self._apply_line(raw)
                if raw.endswith(b"\n"):
                    self._offset += len(raw)
                    if fold is not None:  # (a torn last line: re-read under the fold's lock)
                        fold.add(raw, event)
        self._fold_at = max(FOLD_BYTES, 2 * self._offset)
        if fold is not None:
            self._fold(fold)

    def _fold(self, fold: UsageFold | None = None) -> None:
        """Replace the log by its folded lines (`skillbank.usage_fold`) and count from those;
        `fold` holds the lines `_load` read, else the whole file is read. Under the file's
        exclusive lock: appends of other processes wait, then go to the new file. A fold that
        would not halve the log is not written. Called with `_lock` held (or from `_load`)."""
        try:
            with locked_journal(self.path, exclusive=True) as handle:
                info = os.fstat(handle.fileno())
                if fold is None or (info.st_dev, info.st_ino) != self._file:
                    fold = UsageFold()
                handle.seek(fold.read)
                for raw in handle:  # what others appended since (whole lines: they lock too)
                    fold.add(raw, _parsed(raw))
                size = handle.tell()
                lines = fold.lines()
                folded = sum(len(line) for line in lines)
                if 2 * folded > size:
                    self._fold_at = max(FOLD_BYTES, 2 * size)
                    return
                # The file written, not the one the path names after it: another process may
                # fold it again at once (`mine` then kept an offset in that other file).
                named = atomic_write(self.path, lines)
                held = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:  # the events are on disk: only the fold waits
            self._fold_at = max(FOLD_BYTES, 2 * self._offset)
            log.warning("skillbank: could not fold the usage log %s: %s", self.path, exc)
            return
        opened = os.fstat(held)
        if named is None or (opened.st_dev, opened.st_ino) != (named.st_dev, named.st_ino):
            os.close(held)  # folded again by another process at once: count from its file
            self._reload()
            return
        self._rebuild(lines, (named.st_dev, named.st_ino), held)
        log.info("skillbank: folded the usage log %s from %d to %d bytes", self.path, size,
                 folded)

    def _hold(self, fd: int | None) -> None:
        """Keep `fd` (the file `_file` names) open in place of the file held before. Only where
        logs are folded (POSIX): an open file cannot be renamed over on Windows."""
        if fd is not None and not can_lock_journals():
            os.close(fd)
            fd = None
        old, self._held = self._held, fd
        if old is not None:
            os.close(old)

    def __del__(self) -> None:
        held = getattr(self, "_held", None)  # (not set on `_rebuild`'s scratch counts)
        if held is not None:
            try:
                os.close(held)
            except OSError:
                pass

    def _rebuild(self, lines: list[bytes], file: tuple[int, int], held: int) -> None:
        """Count again from a log's `lines` (the file `file`), then the events still buffered.
        The counts are made apart and put in place whole: reads take no lock."""
        fresh = object.__new__(UsageLog)
        for table in _TABLES:
            setattr(fresh, table, {})
        for raw in [*lines, *(line.encode("utf-8") for line in self._pending)]:
            fresh._apply_line(raw)
        for table in _TABLES:  # (one table after another: a read may see them mixed briefly)
            setattr(self, table, getattr(fresh, table))
        self._file = file
        self._hold(held)
        self._offset = sum(len(raw) for raw in lines)
        self._own = []
        self._fold_at = max(FOLD_BYTES, 2 * self._offset)

    def _reload(self) -> None:
        """Server mode: another process folded the log (a new file): count from it again."""
        try:
            with self.path.open("rb") as handle:
                info = os.fstat(handle.fileno())
                lines = [raw for raw in handle if raw.endswith(b"\n")]
                held = os.dup(handle.fileno())
        except OSError:
            return
        self._rebuild(lines, (info.st_dev, info.st_ino), held)

    def _apply_line(self, raw: bytes) -> Any:
        """Count one line of the log; returns its parsed JSON (None: not JSON)."""
        event = _parsed(raw)
        if event is not None:
            self._apply_event(event)
        return event

    def _apply_event(self, event: Any) -> None:
        try:
            if event.get("accept"):
                self._accept(event["id"], journaled=event["accept"])
                return
            if "to" in event:
                self._move(event["id"], str(event["to"]))
                return
            if event.get("reset"):
                self._reset(event["id"])
                return
            if "o" in event:
                self._apply_outside(event["id"], str(event["o"]), event["ok"] is True,
                                    int(event.get("use", 0)), event.get("at"),
                                    once="ou" in event)
                return
            if "ou" in event:
                self._apply_outside_use(event["id"], str(event["ou"]),
                                        int(event.get("use", 0)), event.get("at"))
                return
            self._apply(event["id"], event.get("use", 0), event.get("ok"), event.get("at"),
                        untrusted=bool(event.get("u")), successes=int(event.get("s", 0)),
                        failures=int(event.get("f", 0)),
                        principal=str(event.get("p") or outside_votes.UNNAMED))
            if "n" in event and not event.get("u"):  # an imported record's outsiders (`add`)
                self._apply_nets(event["id"], outside_votes.nets(event["n"]))
        except (ValueError, KeyError, TypeError, AttributeError):
            return  # a foreign line: skip, never fail the open

    def _refresh(self) -> None:
        """Server mode: apply the complete event lines other processes appended since the last
        look (our own appends are skipped: they are counted already). Called with the lock."""
        now = time.monotonic()
        if not self.shared or now - self._checked < REFRESH_SECONDS:
            return
        self._checked = now
        try:
            info = self.path.stat()
        except OSError:
            return
        if self._file is not None and (info.st_dev, info.st_ino) != self._file:
            self._reload()  # another process folded it
            return
        size = info.st_size
        if size < self._offset:  # shorter: a fold replaced it (its inode number reused)
            self._reload()
            return
        if size == self._offset:
            return
        with self.path.open("rb") as handle:
            opened = os.fstat(handle.fileno())
            if self._file is not None and (opened.st_dev, opened.st_ino) != self._file:
                # Folded by another process between the stat and the open: the old offset
                # means nothing in the new file (its run lines read as uses again, a count of
                # 35,001 for 30,001 until the next look; review2 #7, session 27).
                handle.close()
                self._reload()
                return
            handle.seek(self._offset)
            data = handle.read(size - self._offset)
        position = self._offset
        for raw in data.splitlines(keepends=True):
            if not raw.endswith(b"\n"):
                break  # another process is still writing this line
            if not any(start <= position < end for start, end in self._own):
                self._apply_line(raw)
            position += len(raw)
        self._offset = position
        self._own = [(start, end) for start, end in self._own if end > position]

    def _apply(self, item_id: str, uses: int, ok: bool | None, at: str | None, *,
               untrusted: bool = False, successes: int = 0, failures: int = 0,
               principal: str = outside_votes.UNNAMED) -> None:
        usage = (self._untrusted if untrusted else self._counts).setdefault(item_id, Usage())
        if untrusted and principal:  # a named use (a recall, a rating's): once, as an outsider's
            uses = self._first_untrusted_use(item_id, principal, int(uses))
        usage.uses += int(uses)
        up, down = int(ok is True) + max(0, successes), int(ok is False) + max(0, failures)
        usage.successes += up
        usage.failures += down
        if untrusted and up != down:  # who cast them: each principal's net (module docstring)
            voters = self._voters.setdefault(item_id, {})
            voters[principal] = voters.get(principal, 0) + up - down
            if not voters[principal]:
                del voters[principal]
        _touch(usage, at)

    def record(self, item_id: str, *, use: int = 1, ok: bool | None = None,
               trusted: bool = True, principal: str | None = None,
               outsider: str | None = None) -> Usage:
        """Count `use` uses of an item, and optionally whether it helped (`ok`).

        A rating (`ok` given) is on disk when this returns; a plain use is buffered (see the
        module docstring). `trusted=False` counts it apart (returns the untrusted counts); an
        untrusted rating or use names who cast it (`principal`): its net per principal is what a
        reviewer's `accept` folds in, and its uses count once per principal and item, as an
        outsider's (a plain use names it too). A trusted plain use of an `outsider` (the principal, who
        may not change the item) counts once per item, as his votes do.
        """
        at = utcnow().isoformat()
        event: dict[str, object] = {"id": item_id, "use": use, "at": at}
        if ok is not None:
            event["ok"] = ok
        if not trusted:
            event["u"] = 1
            if principal:
                event["p"] = principal
        elif outsider and ok is None:
            event["ou"] = outsider
        with self._lock:
            if not self._pending:
                self._since = time.monotonic()
                _start_idle_flusher()
            counts = self._counts if trusted else self._untrusted
            apply = functools.partial(self._apply, item_id, use, ok, at, untrusted=not trusted,
                                      principal=str(event.get("p") or outside_votes.UNNAMED))
            if "ou" in event:
                apply = functools.partial(self._apply_outside_use, item_id, str(event["ou"]),
                                          use, at)
            if ok is not None:  # a rating: on disk when this returns, or not counted at all
                self._write_through(event, apply, item_id)
                return counts[item_id].model_copy()
            self._pending.append(json.dumps(event))
            apply()
            now = time.monotonic()
            if now >= self._retry_after and (len(self._pending) >= FLUSH_EVERY or
                                             now - self._since >= FLUSH_SECONDS):
                self._write_buffered()
            return counts[item_id].model_copy()

    def add(self, item_id: str, counts: Usage, *, trusted: bool = True) -> None:
        """Add counts kept elsewhere (an imported record's usage) in one event, written
        through; `trusted=False` adds them to the untrusted counters, which move nothing.
        Trusted, the outsiders' nets behind them (`counts.outside`, whose signs the counts
        already hold) join the item's: an outsider still counts once (hunt-roundtrip #3,
        session 33). An older skillbank reads the line as the counts alone."""
        at = (counts.last_used or utcnow()).isoformat()
        event: dict[str, object] = {"id": item_id, "use": int(counts.uses),
                                    "s": int(counts.successes), "f": int(counts.failures),
                                    "at": at}
        nets = outside_votes.nets(counts.outside) if trusted else {}
        if not trusted:
            event["u"] = 1
        elif nets:
            event["n"] = nets

        def apply() -> None:
            self._apply(item_id, counts.uses, None, at, untrusted=not trusted,
                        successes=counts.successes, failures=counts.failures)
            self._apply_nets(item_id, nets)

        with self._lock:
            self._write_through(event, apply, item_id)

    def move(self, item_id: str, new_id: str) -> None:
        """An item now has the id `new_id` (a renamed skill): its counts, untrusted counts and
        outsiders' nets go with it, replacing whatever `new_id` held (stale counts of a skill
        whose folder went by hand: adding them let one outsider count twice, second review of
        session 20; a rename onto a name in use is refused before it gets here). Nothing
        happens when `item_id` has no counts, so a move journaled twice is one move."""
        self._write_event({"id": item_id, "to": new_id}, lambda: self._move(item_id, new_id),
                          item_id, new_id)

    def reset(self, item_id: str) -> None:
        """Forget every count of `item_id` (a deleted skill): the next item of that id starts
        at zero. Written through."""
        self._write_event({"id": item_id, "reset": 1}, lambda: self._reset(item_id), item_id)

    def _write_event(self, event: dict[str, object], apply: Callable[[], None],
                     *ids: str) -> None:
        event["at"] = utcnow().isoformat()
        with self._lock:
            self._refresh()  # another process's votes on the old id move too
            self._write_through(event, apply, *ids)

    def _write_through(self, event: dict[str, object], apply: Callable[[], None],
                       *ids: str) -> None:
        """Count `event` (`apply`, touching the counts of `ids` only) and write it with the
        buffer. A write that raises takes it back, its line and its counts, and raises: a
        `success=False` that raised ENOSPC was written by the next flush once space came back,
        and a retry counted it twice (hunt-disk #2, session 29). Plain uses buffered before it
        stay buffered. Called with `_lock` held."""
        tables: tuple[dict[str, Any], ...] = tuple(getattr(self, t) for t in _TABLES)
        saved = [(table, item, _copied(table.get(item))) for table in tables for item in ids]
        line = json.dumps(event)
        self._pending.append(line)
        apply()
        try:
            self._write_pending()
        except BaseException:
            if self._pending and self._pending[-1] is line:  # (else it reached the disk)
                self._pending.pop()
                for table, item, before in saved:
                    if before is None:
                        table.pop(item, None)
                    else:
                        table[item] = before
            raise

    def _move(self, item_id: str, new_id: str) -> None:
        tables = tuple(getattr(self, t) for t in _TABLES)
        if item_id == new_id or not any(item_id in table for table in tables):
            return  # nothing to carry (a second process journaling the same rename)
        for table in tables:
            moved = table.pop(item_id, None)
            table.pop(new_id, None)
            if moved is not None:
                table[new_id] = moved  # type: ignore[index]

    def _reset(self, item_id: str) -> None:
        for table in _TABLES:
            getattr(self, table).pop(item_id, None)

    def flush(self) -> None:
        """Write every buffered event (one append, one fsync); an OSError (a full disk) leaves
        them buffered, none of them written."""
        with self._lock:
            self._write_pending()

    def flush_if_due(self) -> None:
        """Write the buffered events once the oldest is `FLUSH_SECONDS` old (the idle
        flusher's call; a busy log is left to its own writer)."""
        if not self._pending or not self.path.parent.parent.is_dir():
            return  # a root deleted under an open bank is not made again by a thread (review)
        if not self._lock.acquire(blocking=False):
            return
        try:
            now = time.monotonic()
            if self._pending and now - self._since >= FLUSH_SECONDS and \
                    now >= self._retry_after:
                self._write_buffered()
        finally:
            self._lock.release()

    def _write_buffered(self) -> None:
        """Write the buffered uses; a disk that refuses them does not fail the use that counted
        them (module docstring): 45 of 300 plain uses raised ENOSPC to their callers, as would a
        recall counting what it showed (hunt-disk #1, session 29). They stay buffered, folded to
        a line per item, and wait `FLUSH_SECONDS` before the next try. Called with `_lock`."""
        try:
            self._write_pending()
        except OSError as exc:
            self._retry_after = time.monotonic() + FLUSH_SECONDS
            self._pending[:] = _folded(self._pending)
            if self._refused is None:
                log.warning("skillbank: could not write use counts to %s: %s; they wait in "
                            "memory (%d lines) and are tried again every %.0f s (a crash before "
                            "then loses them)", self.path, exc, len(self._pending),
                            FLUSH_SECONDS)
            self._refused = exc

    def _write_pending(self) -> None:
        """Append every buffered event, all or nothing (`_append_whole`); on an OSError none
        of them is on disk and all are still buffered."""
        if not self._pending:
            return
        data = "".join(line + "\n" for line in self._pending).encode("utf-8")
        with locked_journal(self.path, exclusive=True) as handle:  # new: 0600, as the journal
            start, end = _append_whole(handle.fileno(), data, self.path)
            info = os.fstat(handle.fileno())
        self._pending.clear()
        self._retry_after = 0.0
        if self._refused is not None:
            log.warning("skillbank: the use counts waiting for %s are written", self.path)
            self._refused = None
        file = (info.st_dev, info.st_ino)
        if self._file is not None and file != self._file:  # another process folded it
            if self.shared:
                self._reload()  # its events and ours, as the new file has them
            else:
                self._file, self._offset, self._own = file, end, []
                self._hold(_open_if(self.path, file))
        else:
            if self._file is None:  # (not the locked handle: a dup would keep its lock)
                self._hold(_open_if(self.path, file))
            self._file = file
            if start == self._offset or not self.shared:
                self._offset = end  # nobody else appended in between (or none reads them)
            else:
                self._own.append((start, end))
        if end > self._fold_at and can_lock_journals():
            self._fold()

    @property
    def buffered(self) -> int:
        """Events counted in memory and not yet written."""
        return len(self._pending)

    def get(self, item_id: str) -> Usage:
        if self.shared:
            with self._lock:
                self._refresh()
        usage = self._counts.get(item_id)
        return usage.model_copy() if usage else Usage()

    def all(self) -> dict[str, Usage]:
        if self.shared:
            with self._lock:
                self._refresh()
        return {k: v.model_copy() for k, v in self._counts.items()}

    def prior(self, item_id: str, scale: float = 0.004) -> float:
        """A small rank bonus or penalty from the success rate, weighted by how much we know.

        Sized against reciprocal-rank scores (~1/61 for a first place), so it reorders near
        ties but never lets a poorly matching item jump over a clearly better one.
        """
        if self.shared:
            with self._lock:
                self._refresh()
        usage = self._counts.get(item_id)
        if not usage:
            return 0.0
        judged = usage.successes + usage.failures
        if judged == 0:
            return 0.0
        confidence = judged / (judged + 3)
        return scale * (usage.successes / judged - 0.5) * 2 * confidence


def _append_whole(fd: int, data: bytes, path: Path) -> tuple[int, int]:
    """Append `data` to the file under `fd` (its exclusive lock held) and fsync it, all or
    nothing; returns where the appended bytes begin and end. A buffered write cut short by a
    full disk left ~8 KB of it (111 whole lines and a torn one) with every event still pending:
    the next flush wrote them again after the torn bytes, 300 uses counted 411 and its first
    line glued to the torn one (hunt-disk #1, session 29). Now a write or fsync that fails cuts
    the file back to where it began; a torn last line (a crash's) is ended first, as the
    experiences journal does, so it cannot swallow the first event."""
    start = os.fstat(fd).st_size
    if start:
        os.lseek(fd, start - 1, os.SEEK_SET)
        if os.read(fd, 1) != b"\n":
            data = b"\n" + data
    try:
        done = 0
        while done < len(data):
            wrote = os.write(fd, data[done:])  # (O_APPEND: each write goes to the end)
            if wrote <= 0:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
            done += wrote
        os.fsync(fd)
    except BaseException as exc:
        try:
            os.ftruncate(fd, start)
        except OSError as cut:  # (rare) the next append ends the torn line
            log.error("skillbank: could not cut %s back after a failed write: %s", path, cut)
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = str(path)  # (a write to a descriptor names no file)
        raise
    return start, start + len(data)


def _folded(lines: list[str]) -> list[str]:
    """Buffered event lines folded as the log is (`skillbank.usage_fold`): one line of plain
    uses per item, every other event kept; the same counts when replayed."""
    fold = UsageFold()
    for line in lines:
        fold.add((line + "\n").encode("utf-8"), _parsed(line.encode("utf-8")))
    return [raw.decode("utf-8").rstrip("\n") for raw in fold.lines()]


def _copied(value: Any) -> Any:
    """A copy of one entry of the counts (a `Usage`, nets, outsiders who used it, or None)."""
    if value is None:
        return None
    if isinstance(value, (dict, set)):
        return type(value)(value)
    return value.model_copy()


def _parsed(raw: bytes) -> Any:
    """A log line's JSON, or None (a torn or foreign line: skipped, never failing an open)."""
    try:
        return json.loads(raw)
    except ValueError:
        return None


_open_logs: "weakref.WeakSet[UsageLog]" = weakref.WeakSet()


def _open_if(path: Path, file: tuple[int, int]) -> int | None:
    """A read-only descriptor of `path` if it still names `file` (device, inode), else None."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    info = os.fstat(fd)
    if (info.st_dev, info.st_ino) == file:
        return fd
    os.close(fd)
    return None


_idle_flusher: threading.Thread | None = None
_idle_flusher_lock = threading.Lock()


def _start_idle_flusher() -> None:
    """One daemon thread per process writes use counts left buffered while nothing else is
    counted. The buffer was written only by the next use: an owner that went idle and was then
    killed lost every count other processes had already been shown (20 recalls, 8 s idle,
    `kill -9`: 20 uses became 0; hunt-procs #1, session 28). A forked child starts its own
    (`_after_fork_in_child`)."""
    global _idle_flusher
    if _idle_flusher is not None and _idle_flusher.is_alive():
        return
    with _idle_flusher_lock:
        if _idle_flusher is None or not _idle_flusher.is_alive():
            _idle_flusher = threading.Thread(target=_flush_idle_logs, daemon=True,
                                             name="skillbank-usage-flush")
            _idle_flusher.start()


def _after_fork_in_child() -> None:
    """A child starts with fresh locks and no inherited buffer. A fork while the flusher held a
    log's lock (writing, fsyncing, folding) left the child's first count blocked for good; a
    child with an inherited buffer never started its own flusher, and wrote the parent's
    buffered events a second time (review of session 28). The parent writes those."""
    global _idle_flusher, _idle_flusher_lock
    _idle_flusher, _idle_flusher_lock = None, threading.Lock()
    for usage_log in list(_open_logs):
        usage_log._lock = threading.Lock()
        usage_log._pending.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _flush_idle_logs() -> None:
    while True:
        time.sleep(FLUSH_SECONDS / 2)  # a count waits at most 1.5 x FLUSH_SECONDS
        for usage_log in list(_open_logs):
            try:
                usage_log.flush_if_due()
            except Exception as exc:  # noqa: BLE001 - the next use or close writes them
                log.warning("skillbank: could not write %d usage events to %s: %s",
                            usage_log.buffered, usage_log.path, exc)


@atexit.register
def _flush_at_exit() -> None:
    for usage_log in list(_open_logs):
        try:
            usage_log.flush()
        except OSError as exc:  # exiting anyway; say what was not written
            log.warning("skillbank: could not write %d usage events to %s: %s",
                        usage_log.buffered, usage_log.path, exc)
