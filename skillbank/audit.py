"""Who did what: an append-only audit log of every write, review, vote, prune and forget.

Each event names the principal, its role, the face it came through, whether the call was
trusted, the namespace, the action, the kind of item and its id, and the time — and never any
memory text: a forgotten item's words
must not survive in the log that records its forgetting, so an event has no free-text field at
all (`AuditEvent` only takes short identifiers, checked on the way in).

The log is behind a tiny interface (`AuditLog`: `append`, `query`) so a deployment can keep it
elsewhere; `FileAuditLog` is the embedded one: JSON lines under `<root>/audit/<yyyy-mm>.jsonl`,
one file per month (rotation that needs no renaming, and old months can be archived whole).
Every event is one `write()` on a file opened with O_APPEND and then fsync'd, so two processes
sharing a root (server mode) never interleave half lines and a crash loses at most the event
being written, never one before it.

The memories call `note(self, action, kind, ids)` at each write point: one line each, reading
the caller's scope from `skillbank.scope.current`, so no write path needs a new parameter.
A failure to audit does not undo the write and never fails the call (the write is already
durable: answering "failed" for a change that happened made callers retry it). The event is not
dropped either: the log keeps it (`UnsentEvents`) and writes it first at its next append, and
the failure is logged with the event itself (hunt-pg #1, session 28).
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator, Protocol, runtime_checkable

from skillbank.moments import stored_utc, typed_since, typed_utc

log = logging.getLogger("skillbank.audit")

#: What the log records; anything else is a programming error, caught at the write point.
ACTIONS = frozenset({
    "record", "import", "distill", "mark", "forget", "prune", "approve", "reject", "retire",
    "learn", "add", "vote", "save", "update", "rename", "delete", "adopt", "discard", "restore",
    "propose", "use", "accept",
})
KINDS = frozenset({"experience", "lesson", "guideline", "skill", "draft"})
_MONTH_FILE = re.compile(r"^(\d{4})-(\d{2})\.jsonl$")
_TOKEN = re.compile(r"^[^\x00-\x1f\x7f]{0,200}$")


@dataclass(frozen=True)
class AuditEvent:
    """One audited change. Identifiers only: no field can carry memory text."""

    at: str              # ISO 8601 UTC
    principal: str
    role: str
    face: str
    namespace: str
    action: str
    kind: str
    id: str
    #: False: the call ran untrusted (an HTTP client of a server without --trust, a token or an
    #: adapter marked untrusted; its writes wait for review, its votes are kept apart). Why a
    #: field: such a call may run under its server's own principal (the local admin), and the
    #: log must not read as if that person had done it. Lines written before it read as trusted.
    trusted: bool = True

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> "AuditEvent | None":
        if not isinstance(data, dict):
            return None
        trusted = data.get("trusted", True)
        if not isinstance(trusted, bool):
            return None
        try:
            return cls(**{name: str(data[name]) for name in cls.__dataclass_fields__
                          if name != "trusted"}, trusted=trusted)
        except (KeyError, TypeError):
            return None


@runtime_checkable
class AuditLog(Protocol):
    """Where audit events go. A store (files here, a database in team mode) implements both."""

    def append(self, events: Iterable[AuditEvent]) -> None: ...

    def query(self, *, principal: str | None = None, action: str | None = None,
              since: datetime | None = None, item_id: str | None = None,
              namespace: str | None = None, limit: int | None = None,
              namespaces: Iterable[str] | None = None,
              trusted: bool | None = None) -> list[AuditEvent]: ...


def matches(event: AuditEvent, *, principal: str | None = None, action: str | None = None,
            since: datetime | None = None, item_id: str | None = None,
            namespace: str | None = None, namespaces: Iterable[str] | None = None,
            trusted: bool | None = None) -> bool:
    """The filters every `AuditLog.query` applies (shared so implementations agree).

    `namespaces`: any of these (a browser's readable set); `trusted`: only (un)trusted calls.
    Both are filters of the query itself so a page's `limit` bounds what is read (the audit
    page read the whole log to filter them after: 14-17 s at 1M rows, hunt-pg #4, session 28)."""
    if principal is not None and event.principal != principal:
        return False
    if action is not None and event.action != action:
        return False
    if item_id is not None and event.id != item_id:
        return False
    if namespace is not None and event.namespace != namespace:
        return False
    if namespaces is not None and event.namespace not in set(namespaces):
        return False
    if trusted is not None and event.trusted != trusted:
        return False
    if since is not None:
        moment = typed_since(since)  # (a `since` that is no time: InvalidInputError)
        try:
            if _parse_time(event.at) < moment:
                return False
        except ValueError:
            return False
    return True


class UnsentEvents:
    """Events a log could not write, kept in order to go first at its next append.

    Why (hunt-pg #1, session 28): the memories note a write after its own transaction, so
    when PostgreSQL dropped (or refused the audit table) between the two, the committed write
    answered "unreachable" and its event was lost: a rule live and served that the audit never
    showed anyone adding. The call now answers done (`note`), and its event waits here until
    the log takes writes again. Kept in this process only: one that ends first has logged the
    events it held (`note`, `close`), so none is lost silently. At most `LIMIT` are kept (the
    oldest go, logged), so a log that stays down cannot grow a worker without bound.
    The lock is not held while writing: calls waiting on a database that is down must not
    queue behind each other's waits."""

    LIMIT = 10_000

    def __init__(self) -> None:
        self._events: list[AuditEvent] = []
        self._lock = threading.Lock()
        #: (kind, id) pairs forgotten while this process ran: a batch that was being written
        #: when a forget blanked the queue comes back blanked if the write fails (review).
        self._blanked: set[tuple[str, str]] = set()

    def __len__(self) -> int:
        return len(self._events)

    def send(self, write: Any, events: Iterable[AuditEvent]) -> None:
        """`write` the kept events and then `events`, in one call; on failure keep them all."""
        with self._lock:
            batch, self._events = [*self._events, *events], []
        if not batch:
            return
        try:
            write(batch)
        except BaseException as exc:
            # Only what was not written: a batch written in part (one month's file of two) was
            # kept whole and its written events written again at every append (review of s. 28).
            rest = getattr(exc, "unwritten", None)
            with self._lock:
                kept = [self._blank(e) for e in (batch if rest is None else rest)] + self._events
                self._events = kept[-self.LIMIT:]
            if len(kept) > self.LIMIT:
                log.error("skillbank: the audit log is still not writable; %d unsent events "
                          "dropped (oldest first): %s", len(kept) - self.LIMIT,
                          as_lines(kept[:-self.LIMIT]))
            raise

    def blank_ids(self, kind: str, ids: Iterable[str]) -> None:
        """Blank the ids of `kind`'s kept events, as the log blanks its written ones (a
        forgotten draft's name must not reach the log later through this queue)."""
        with self._lock:
            self._blanked.update((kind, str(i)) for i in ids)
            self._events = [self._blank(e) for e in self._events]

    def _blank(self, event: AuditEvent) -> AuditEvent:
        return replace(event, id="") if (event.kind, event.id) in self._blanked else event

    def held(self) -> list[AuditEvent]:
        with self._lock:
            return list(self._events)


def as_lines(events: Iterable[AuditEvent]) -> str:
    """What a log message shows of unsent events: how many of each action and kind, and when;
    never an id, a name or a principal. The events themselves were logged, so a draft's name
    (made of an experience's words) stayed in the worker's log after a forget, and docs/team.md
    says ids and names are never logged (review of session 28)."""
    from collections import Counter

    found = list(events)
    if not found:
        return "none"
    counts = Counter(f"{e.action} {e.kind}" for e in found)
    times = sorted(e.at for e in found)
    return (", ".join(f"{what} x{n}" for what, n in sorted(counts.items()))
            + f" ({times[0]} to {times[-1]})")


class FileAuditLog:
    """JSON lines under `<folder>/<yyyy-mm>.jsonl`: O_APPEND, one write and one fsync an event."""

    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = Path(folder)
        self._lock = threading.Lock()
        self.unsent = UnsentEvents()

    def _file_for(self, at: str) -> Path:
        return self.folder / f"{at[:7]}.jsonl"

    def append(self, events: Iterable[AuditEvent]) -> None:
        """Write `events` (after any an earlier append could not write: `UnsentEvents`)."""
        self.unsent.send(self._write, events)

    def blank_ids(self, kind: str, ids: Iterable[str]) -> int:
        """Blank the ids of `kind`'s unsent events (the written lines are blanked in place by
        `skillbank.forgetting`); returns 0: no written line is changed here."""
        self.unsent.blank_ids(kind, ids)
        return 0

    def _write(self, events: Iterable[AuditEvent]) -> None:
        # Never a month file older than the newest one: readers take name order for write
        # order (the browser's forget check reads newest first), and an event stamped after the
        # clock stepped back across a month went to an older file (left by fix-clock, s. 29).
        newest = (self.files() or [Path("")])[-1].name
        by_file: dict[Path, list[AuditEvent]] = {}
        for event in events:
            path = self._file_for(event.at)
            if newest > path.name:
                path = self.folder / newest
            by_file.setdefault(path, []).append(event)
        if not by_file:
            return
        with self._lock:
            files = list(by_file.items())
            for number, (path, month) in enumerate(files):
                try:
                    self._write_file(path, month)
                except OSError as exc:  # what is not written goes back to the queue, no more
                    exc.unwritten = [e for _, rest in files[number:] for e in rest]  # type: ignore[attr-defined]
                    raise

    def _write_file(self, path: Path, events: list[AuditEvent]) -> None:
        data = b"".join(json.dumps(e.to_json(), ensure_ascii=False, separators=(",", ":"))
                        .encode("utf-8") + b"\n" for e in events)
        self.folder.mkdir(parents=True, exist_ok=True)
        created = not path.exists()
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            written = 0
            while written < len(data):  # one write() in practice; a short one continues
                written += os.write(fd, data[written:])
            os.fsync(fd)
        finally:
            os.close(fd)
        if created:
            from skillbank.fsutil import fsync_dir

            fsync_dir(self.folder)

    def files(self) -> list[Path]:
        try:
            return sorted(self.folder / e.name for e in os.scandir(self.folder)
                          if e.is_file() and _MONTH_FILE.match(e.name))
        except FileNotFoundError:
            return []

    def events(self, since: datetime | None = None, *,
               containing: str | None = None) -> Iterator[AuditEvent]:
        """Every event, oldest first (months before `since` are not read). Bad lines skipped.

        `containing` (an action's name): only lines that hold it as a JSON string are parsed. A
        query for one action parsed every line of the month: 1.5 s at 100,000 events, paid by
        each rating of a kept context preview, which asks whether anything was forgotten since
        (hunt-ui #5, session 27)."""
        first = f"{typed_since(since):%Y-%m}" if since is not None else ""
        needle = json.dumps(containing).encode("utf-8") if containing else None
        for path in self.files():
            if path.name[:7] < first:
                continue
            try:
                handle = path.open("rb")
            except OSError:
                continue
            with handle:
                whole = (raw for raw in handle if raw.endswith(b"\n"))  # a torn last line: none
                yield from _parsed(whole, needle)

    def newest_events(self, since: datetime | None = None, *,
                      containing: str | None = None) -> Iterator[AuditEvent]:
        """`events`, newest first: each month's file read backwards from its end, a block at
        a time, so a query with a `limit` reads the tail it shows, not the whole log (the
        audit page read every line of every month at each view, hunt-pg #4, session 28)."""
        first = f"{typed_since(since):%Y-%m}" if since is not None else ""
        needle = json.dumps(containing).encode("utf-8") if containing else None
        for path in reversed(self.files()):
            if path.name[:7] < first:
                break
            yield from _parsed(_lines_backward(path), needle)

    def newest_mark(self, action: str) -> tuple[str, AuditEvent | None]:
        """Where `action` stands: the newest month file and the newest `action` event in it.

        It changes whenever an `action` event is written, and reads one month at most: events
        go to the newest file, never an older one (`_write`). The browser's preview check asked
        for the newest forget of the whole log, which on a root that never forgot read every
        month: ~2 s at 2.4 M events, paid at each rating (review of hunt-time #9, session 29)."""
        files = self.files()
        if not files:
            return "", None
        needle = json.dumps(action).encode("utf-8")
        newest = next((e for e in _parsed(_lines_backward(files[-1]), needle)
                       if e.action == action), None)
        return files[-1].name, newest

    def query(self, *, principal: str | None = None, action: str | None = None,
              since: datetime | None = None, item_id: str | None = None,
              namespace: str | None = None, limit: int | None = None,
              namespaces: Iterable[str] | None = None,
              trusted: bool | None = None) -> list[AuditEvent]:
        """Matching events, oldest first; `limit` keeps the newest `limit` of them (read from
        the end of the log: `newest_events`). `since` takes what `recall`'s does
        (`moments.typed_since`)."""
        since = None if since is None else typed_since(since)
        where = dict(principal=principal, action=action, since=since, item_id=item_id,
                     namespace=namespace, trusted=trusted,
                     namespaces=None if namespaces is None else frozenset(namespaces))
        if limit is None:
            return [e for e in self.events(since, containing=action) if matches(e, **where)]
        found: list[AuditEvent] = []
        if limit > 0:
            for e in self.newest_events(since, containing=action):
                if matches(e, **where):
                    found.append(e)
                    if len(found) >= limit:
                        break
        return found[::-1]


def _lines_backward(path: Path, block: int = 65536) -> Iterator[bytes]:
    """The complete lines of `path`, last first (a torn last line, crash mid-write, skipped)."""
    try:
        handle = path.open("rb")
    except OSError:
        return
    with handle:
        end = handle.seek(0, os.SEEK_END)
        while end > 0:  # the end of the last complete line
            start = max(0, end - block)
            handle.seek(start)
            cut = handle.read(end - start).rfind(b"\n")
            if cut >= 0:
                end = start + cut + 1
                break
            end = start
        rest = b""
        while end > 0:
            start = max(0, end - block)
            handle.seek(start)
            lines = (handle.read(end - start) + rest).split(b"\n")
            end = start
            rest = lines[0]  # its start may be in the block before
            for raw in reversed(lines[1:]):
                if raw:
                    yield raw + b"\n"
        if rest:
            yield rest + b"\n"


def open_log(root: str | os.PathLike) -> FileAuditLog:
    """The embedded audit log of a memory root."""
    return FileAuditLog(Path(root) / "audit")


def log_of(bank: Any) -> Any:
    """The audit log `bank` writes: its own (an in-process bank; team mode's PostgreSQL log), or
    the root's files (a client bank forwarding to the owner process: the log is plain files
    under the same root)."""
    audit_log = getattr(bank, "audit", None)
    return audit_log if hasattr(audit_log, "query") else open_log(bank.root)


def visible_to(caller: Any, events: Iterable[AuditEvent], what: str = "the audit log"
               ) -> list[AuditEvent]:
    """The events of `events` the scope `caller` may read: a trusted reviewer or admin sees the
    namespaces it reviews; anyone else is refused (PermissionDeniedError naming `what`).

    The one rule every face reading the log applies (MCP `skillbank://audit`, the memory
    browser's Audit page, a scoped view's `audit`). A view handed out the whole log, so a
    contributor of bob listed alice's events and ids, which every other call of the view
    answers "not found" (hunt-scope #2, session 28). `skillbank --namespace NS audit` runs as
    admin of NS, so this rule lists NS's events there too."""
    from skillbank import scope as scopes
    from skillbank.errors import PermissionDeniedError

    if not caller.trusted or not caller.role.allows(scopes.Role.REVIEWER):
        raise PermissionDeniedError(
            f"{what} is for reviewers; {caller.principal} is "
            f"{'an untrusted ' if not caller.trusted else 'a '}{caller.role.value}")
    return [e for e in events if caller.can_review(e.namespace)]


def reviewed_namespaces(caller: Any, what: str = "the audit log") -> list[str] | None:
    """The namespaces whose events `caller` may read under `visible_to`'s rule, for a query to
    filter on itself (None: every one); refused as `visible_to` refuses. A query bounded by
    `limit` must filter in the log, not after it: the newest N events of the whole log may hold
    none of the caller's."""
    from skillbank.scope import ALL

    visible_to(caller, (), what)  # refused before anything is read
    reviewable = caller.reviewable
    return None if ALL in reviewable else sorted(reviewable)  # a list: sent to an owner too


class ScopedAuditLog:
    """`bank.scoped(scope).audit`: the log as `scope` may read it (`visible_to`), never written.

    The memories write the log themselves, each event as the caller of the write; a view's
    `audit.append` wrote whatever events it was given, any principal's (hunt-scope #2,
    session 28). `scope_now` gives the scope a call runs as (a view narrows to untrusted while
    an untrusted caller is active)."""

    def __init__(self, log: Any, scope_now: Any) -> None:
        self._log = log
        self._scope_now = scope_now

    def query(self, *, principal: str | None = None, action: str | None = None,
              since: datetime | None = None, item_id: str | None = None,
              namespace: str | None = None, limit: int | None = None,
              namespaces: Iterable[str] | None = None,
              trusted: bool | None = None) -> list[AuditEvent]:
        """`AuditLog.query`, of the events this scope may read; `limit` keeps the newest
        `limit` of those."""
        caller = self._scope_now()
        reviewed = reviewed_namespaces(caller)  # refused before anything is read
        if limit is not None and limit <= 0:
            return []
        if namespaces is not None:
            asked = sorted(set(namespaces))
            reviewed = asked if reviewed is None else [n for n in asked if n in reviewed]
        return visible_to(caller, self._log.query(
            principal=principal, action=action, since=since, item_id=item_id,
            namespace=namespace, namespaces=reviewed, limit=limit, trusted=trusted))

    def append(self, events: Iterable[AuditEvent]) -> None:
        from skillbank.errors import PermissionDeniedError

        raise PermissionDeniedError(
            "the audit log is written by the memories, each event as the caller of the write; "
            "a scoped view does not append to it")


def event(action: str, kind: str, item_id: str, *, namespace: str | None = None,
          default_namespace: str = "default", at: datetime | None = None,
          trusted: bool = True) -> AuditEvent:
    """An event for the caller's scope now: `skillbank.scope.current`, narrowed by the call's
    own `trusted=False` as the write itself was (`scope.caller`)."""
    from skillbank import scope as scopes

    if action not in ACTIONS:
        raise ValueError(f"unknown audit action {action!r}")
    if kind not in KINDS:
        raise ValueError(f"unknown audit kind {kind!r}")
    caller = scopes.caller(default_namespace, trusted)
    item = str(item_id)
    if not _TOKEN.match(item):  # an id is a short identifier; anything else is not stored
        item = item[:200].translate({c: None for c in range(32)})
    when = (at or datetime.now(timezone.utc)).astimezone(timezone.utc)
    return AuditEvent(at=when.isoformat(timespec="microseconds"), principal=caller.principal,
                      role=caller.role.value, face=caller.face,
                      namespace=namespace or caller.namespace, action=action, kind=kind,
                      id=item, trusted=caller.trusted)


def kind_of(item_id: str) -> str:
    """The kind of item an id names, by its prefix (as `Skillbank.rate` and `forget` route)."""
    text = str(item_id)
    if text.startswith("lsn-"):
        return "lesson"
    if text.startswith("gl-"):
        return "guideline"
    if text.startswith("skill:"):
        return "skill"
    return "experience"


def note(owner: Any, action: str, kind: str | None, ids: Any, *,
         namespace: str | None = None, trusted: bool = True) -> None:
    """Audit `action` on `ids` (one id or several) if `owner` (a memory or the bank) has a log.

    The one helper every write point calls. `owner.audit` is the log the bank attached (None,
    or absent, when a memory is used on its own: nothing is recorded). `kind=None` tells each
    id's kind from its prefix. `trusted`: the write's own flag (`trusted=False` on a call):
    the event says the call was untrusted even when the scope it ran in is trusted.
    """
    audit_log = getattr(owner, "audit", None)
    if audit_log is None or ids is None:
        return
    if isinstance(ids, str):
        ids = [ids]
    settings = getattr(owner, "settings", None)
    default_ns = getattr(settings, "namespace", None) or "default"
    try:
        events = [event(action, kind or kind_of(i), i, namespace=namespace,
                        default_namespace=default_ns, trusted=trusted)
                  for i in dict.fromkeys(str(i) for i in ids)]
    except ValueError as exc:  # an unknown action or kind: a programming error, named
        log.error("skillbank: could not write the audit log (%s %s): %s", action, kind, exc)
        return
    try:
        audit_log.append(events)
    except Exception as exc:  # noqa: BLE001 - any failure: the write it notes is committed
        # Not OSError alone: PostgreSQL's StoreUnavailableError (or a refused INSERT) escaped
        # here and a committed write answered "unreachable" (hunt-pg #1, session 28). The log
        # keeps the events and writes them at its next append (`UnsentEvents`).
        unsent = getattr(audit_log, "unsent", None)
        log.error("skillbank: could not write the audit log (%s); %s kept to write at the next "
                  "audited change: %s", exc,
                  f"{len(unsent)} events" if unsent is not None else "not", as_lines(events))


def _parsed(lines: Iterable[bytes], needle: bytes | None) -> Iterator[AuditEvent]:
    """The events of a file's `lines` (only those holding `needle`, when given); bad lines
    skipped."""
    for raw in lines:
        if needle is not None and needle not in raw:
            continue
        try:
            event = AuditEvent.from_json(json.loads(raw))
        except ValueError:
            continue
        if event is not None:
            yield event


def _parse_time(text: str) -> datetime:
    """An event's stored `at` (UTC; one without a zone is read as UTC)."""
    return stored_utc(datetime.fromisoformat(text))


def parse_since(text: str, *, span: bool = False) -> Any:
    """`--since` values: an ISO date or time, or a span back from now such as 30m, 12h, 7d.

    A date or time without a zone is local time, as a person typing it means (and as Python
    reads a naive datetime); it was read as UTC, so `--since 1h` and the same moment typed as
    a time disagreed by the zone's offset (hunt-time #3, session 29). The result is in UTC.
    With `span`, a span is returned as the timedelta it is, for the log to count back from its
    own clock: in team mode PostgreSQL's, on which the events are stamped (review, session 30:
    a worker an hour ahead asked for events later than any there were)."""
    from datetime import timedelta

    from skillbank.errors import InvalidInputError

    value = (text or "").strip()
    back = re.fullmatch(r"(\d+)\s*([smhdw])", value)
    if back:
        seconds = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}[back.group(2)]
        try:
            spanned = timedelta(seconds=int(back.group(1)) * seconds)
            moment = datetime.now(timezone.utc) - spanned
            return spanned if span else moment
        except OverflowError:  # "99999999d": before the first year there is
            raise InvalidInputError(f"invalid time {text!r}: that span reaches back before "
                                    "year 1; use a shorter one (30m, 12h, 7d)") from None
    try:
        return typed_utc(datetime.fromisoformat(value))
    except (ValueError, OverflowError, OSError):
        raise InvalidInputError(
            f"invalid time {text!r}: use an ISO date (2026-12-01), a time "
            "(2026-12-01T08:00) or a span back from now (30m, 12h, 7d)") from None
