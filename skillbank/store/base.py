"""The storage interface the memories speak to, whichever column they run in.

Each protocol is the shape today's file-backed class already has (so the files column is those
classes, unchanged), and what the PostgreSQL column implements again:

- `ChangeFeed` — "another process wrote to this memory since I last looked" (server mode's
  file log; LISTEN/NOTIFY in PostgreSQL).
- `WriteLock` — serialises writers across processes and machines (a lock file; an advisory
  lock). A context manager that raises `BusyError` when it waits too long.
- `UsageCounters` — uses / successes / failures per item, untrusted signals kept apart until
  accepted (an append-only event log; a counters table).
- `ExperienceLog` — the experience journal as events in order, read back from a cursor
  (month files with byte offsets; a table with a sequence).
- `AuditLog` — who did what (`skillbank.audit.AuditLog`: files; a table).

- `GuidelineRecords` — guideline records with their status, votes and links; pending ones
  are the proposal queue (markdown files a person can edit; a table, a write per transaction).

- `ForgottenIds` — what was forgotten, by whom and when, never its text (`forgotten.jsonl`;
  a table).

- `SkillDrafts` — skill drafts and their ledger (a folder per draft; tables, with a working
  copy in each worker's root, since a person edits a draft as files).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator, Protocol, Sequence, runtime_checkable

from skillbank.errors import SkillbankError

if TYPE_CHECKING:
    from skillbank.audit import AuditLog
    from skillbank.records import Finding, Guideline, Usage


class StoreUnavailableError(SkillbankError):
    """The store's database cannot be reached or refused us; the message names what to fix."""


@runtime_checkable
class ChangeFeed(Protocol):
    token: str

    def start(self, kind: str) -> None:
        """Everything written to `kind` so far is in what this process is about to load."""

    def wrote(self, kind: str) -> None:
        """Tell the other processes this one changed `kind` (after the write is durable)."""

    def others_wrote(self, kind: str) -> bool:
        """Whether another process wrote to `kind` since this one last asked (cheap)."""


@runtime_checkable
class WriteLock(Protocol):
    def acquire(self, timeout: float | None = None, *args: Any, **kwargs: Any) -> Any: ...

    def release(self, force: bool = False) -> None: ...

    @property
    def is_locked(self) -> bool: ...

    def __enter__(self) -> Any: ...

    def __exit__(self, *exc: object) -> None: ...


@runtime_checkable
class UsageCounters(Protocol):
    def record(self, item_id: str, *, use: int = 1, ok: bool | None = None,
               trusted: bool = True, principal: str | None = None,
               outsider: str | None = None) -> "Usage": ...

    def get(self, item_id: str) -> "Usage": ...

    def add(self, item_id: str, counts: "Usage", *, trusted: bool = True) -> None: ...

    def vote(self, item_id: str, principal: str, ok: bool, *, use: int = 0) -> "Usage":
        """An outsider's rating: counted once per principal (`skillbank.outside_votes`)."""

    def outside(self, item_id: str) -> dict[str, int]: ...

    def all(self) -> dict[str, "Usage"]: ...

    def untrusted(self, item_id: str) -> "Usage": ...

    def accept(self, item_id: str) -> "Usage": ...

    def move(self, item_id: str, new_id: str) -> None:
        """Everything counted for `item_id` is `new_id`'s now (a renamed skill)."""

    def reset(self, item_id: str) -> None:
        """Forget every count of `item_id` (a deleted skill; its name starts at zero)."""

    def prior(self, item_id: str, scale: float = 0.004) -> float: ...

    def flush(self) -> None: ...


@runtime_checkable
class ExperienceLog(Protocol):
    """The experience journal's events (`{"op": "add", "record": {...}}`, a conversation's
    `update` deltas (`skillbank.store.deltas`), `retire`, …)."""

    def append(self, events: list[dict[str, Any]]) -> list[str]:
        """Append events durably, in order; returns each one's cursor."""

    def read(self, after: str | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
        """Events after the cursor `after` (all when None), oldest first, with their cursors."""

    # What the experience memory's journal needs (its `sync`, write path, reads and forget).
    # A location is where an event is ("<month file>:<offset of its line>"; a sequence number)
    # and a position how far the journal reaches ({month file: size}; {"seq": last}).
    def positions(self) -> dict[str, int]:
        """How far the journal reaches now."""

    def write(self, events: list[dict[str, Any]], max_line_bytes: int | None = None
              ) -> tuple[list[tuple[dict[str, Any], str, str]], dict[str, int], dict[str, int]]:
        """Append durably; (each event with its location and digest, positions before, after)."""

    def events_from(self, starts: dict[str, int], skipped: list[str]
                    ) -> tuple[list[tuple[dict[str, Any], str, str]], dict[str, int]]:
        """Events after `starts` with their locations and digests, and the positions reached;
        unreadable ones are named in `skipped`."""

    def load(self, record_id: str, loc: str) -> dict[str, Any] | None:
        """A record as its version at `loc` stored it (an `add`, or an `update` folded onto the
        versions before it), its latest when `loc` is not one (None: not in the journal)."""

    def load_version(self, record_id: str, loc: str) -> Any:
        """`load`, with what a conversation's next turn needs to journal a delta on it
        (`skillbank.store.deltas.Version`), or None."""

    def search(self, text: str, limit: int, namespaces: "tuple[str, ...] | None" = None
               ) -> list[dict[str, Any]] | None:
        """Active records by the column's own full-text search, for when the index does not
        answer (None: this column has none; the index's keyword side answers). `namespaces`
        (None: all) filters before the limit, so other namespaces cannot crowd a caller out."""

    def lessons_of(self, source_id: str) -> "list[tuple[str, str]] | None":
        """(id, status) of the lessons an experience brought, as the column holds them now
        (None: it keeps no table of records; the index names them)."""

    def read_checkpoint(self) -> dict[str, Any]:
        """How far the index has been brought (shared by every worker of an index)."""

    def write_checkpoint(self, checkpoint: dict[str, Any]) -> None: ...

    def erase(self, ids: list[str]) -> None:
        """Forget means gone: no copy of these records' text stays in the journal."""

    def drop_lessons(self, parent_id: str, texts: set[str]
                     ) -> list[tuple[dict[str, Any], str, str]]:
        """Rewrite a record without the lessons whose text is in `texts` (a forgotten lesson)."""

    def forgotten_ids(self) -> set[str]:
        """Every experience and lesson id a `forget` event (a forget, a reject) removed here:
        what an import must not store again (forget means gone)."""


@dataclass
class LoadedGuidelines:
    """Every guideline record a column holds, as `GuidelineRecords.load` returns them."""

    records: "dict[str, tuple[Guideline, str]]" = field(default_factory=dict)  # id -> (rule, digest)
    findings: "list[Finding]" = field(default_factory=list)  # what could not be read, and why
    skipped: list[str] = field(default_factory=list)  # where the unreadable ones are


class RecordMovedError(Exception):
    """A record changed under a write based on what it was before (a person's hand edit of a
    rule file, which takes no lock): nothing was written. `GuidelineStore._save` reads the
    record again and applies its change to what it reads."""


@runtime_checkable
class GuidelineRecords(Protocol):
    """Guideline records: what the guideline memory keeps, whichever column holds it.

    The memory holds the map and the index; this holds the truth. A `digest` identifies one
    version of one record (the index stores it, so a stale entry is seen). Every `save` and
    `delete` is durable and whole when it returns (an atomic file write; one transaction)."""

    def load(self) -> LoadedGuidelines:
        """Every record, read afresh (bad ones reported in `findings`, never raised)."""

    def stale(self) -> bool:
        """Whether anything changed since this object last loaded or wrote (cheap)."""

    def changed(self, guideline: "Guideline") -> bool:
        """Whether this record changed since this object last read or wrote it."""

    def changed_among(self, guidelines: "Sequence[Guideline]") -> bool:
        """Whether any of these records changed since this object last read or wrote them:
        one cheap check of what a search is about to serve (a rule a person retired, rewrote
        or deleted by hand must not be served from memory)."""

    def edited_by_hand(self, guideline: "Guideline") -> bool:
        """Whether a person changed this record after the bank last wrote it (a file whose
        bytes differ from those the bank last wrote); False where records are not edited by
        hand."""

    def save(self, guideline: "Guideline",
             previous: "Guideline | None" = None) -> "tuple[Guideline, str]":
        """Write one record (replacing `previous`); returns it as stored and its digest.
        Raises `RecordMovedError` where `previous` was changed by hand since it was read."""

    def delete(self, guideline: "Guideline") -> "list[str] | None":
        """Remove one record for good, with every other copy of its id the column holds (a
        file copied into a second topic folder); returns where those copies were, if any."""

    def search_text(self, query: str, limit: int, namespaces: "tuple[str, ...] | None" = None,
                    topic: "str | None" = None) -> "dict[str, float] | None":
        """Active records by the column's own full-text search (id -> share of the query's
        words matched, 0..1), for when the index cannot answer; None: this column has none.
        `namespaces` (None: all) and `topic` filter before the limit, as the index's `where`."""


@runtime_checkable
class ForgottenIds(Protocol):
    """What was forgotten, by whom and when — ids only, never what an item said (a line per
    forget in `forgotten.jsonl`; `sb_forgotten` rows)."""

    def add(self, item_id: str, kind: str, at: str, principal: str | None = None) -> None: ...

    def list(self) -> list[dict[str, Any]]: ...


@runtime_checkable
class SkillDrafts(Protocol):
    """Skill drafts and their ledger (`<root>/drafts/`; `sb_drafts` and `sb_draft_ledger`). A
    person edits a draft as files, so the memory works on a folder; a column that keeps drafts
    elsewhere mirrors them there (`refresh`) and is written through (`put`, `close`)."""

    def ledger(self) -> list[dict[str, Any]]: ...

    def note(self, entry: dict[str, Any]) -> None: ...

    def refresh(self) -> None: ...

    def put(self, name: str, files: dict[str, str], sources: list[str]) -> None: ...

    def close(self, name: str, status: str) -> None: ...

    def erase(self, ids: set[str]) -> list[str]:
        """Forget means gone: drafts drawn from `ids` are deleted; returns names blanked."""


@runtime_checkable
class Store(Protocol):
    """One column's implementation of everything above."""

    def change_feed(self) -> ChangeFeed: ...

    def write_lock(self, timeout: float = 60.0) -> WriteLock: ...

    def usage(self, memory: str) -> UsageCounters: ...

    def experiences(self) -> ExperienceLog: ...

    def audit(self) -> "AuditLog": ...

    def guidelines(self) -> GuidelineRecords: ...

    def forgotten(self) -> "ForgottenIds": ...

    def drafts(self, folder: Any) -> "SkillDrafts": ...

    def close(self) -> None: ...
