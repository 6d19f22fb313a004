"""The experience journal as an event log: `<folder>/<yyyy-mm>.jsonl`, one JSON event a line.

The same files and format `skillbank.memories.experiences.journal` writes and replays; a cursor
is `<file name>:<byte offset after the event>`, so a reader resumes where it stopped (as the
journal's checkpoint does). A torn last line (a crash mid-append) is never returned, and the
next append ends it first so it cannot swallow the new event.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from skillbank.fsutil import append_line
from skillbank.records import utcnow

if TYPE_CHECKING:
    from skillbank.store.deltas import Version

_JOURNAL = re.compile(r"^\d{4}-\d{2}\.jsonl$")
_FORGET = b'"forget"'  # in every forget event's line, however its JSON is spaced


def journal_files(folder: Path) -> list[Path]:
    """The month files of an experience journal, oldest first (the journal lists them here too)."""
    try:
        names = sorted(e.name for e in os.scandir(folder)
                       if e.is_file() and _JOURNAL.match(e.name))
    except FileNotFoundError:
        return []
    return [folder / name for name in names]


def month_file(folder: Path) -> Path:
    """The month file the next event is appended to: this month's by the clock, unless a newer
    month's file exists (the clock stepped back across a month, or a process ran ahead), then
    that newest file.

    Replay reads the files in name order, so name order must be append order: an update
    written to `2026-12.jsonl` after its record's add in `2027-01.jsonl` was replayed before
    the add, which then replaced it; `skillbank reindex` dropped a conversation's second turn
    (hunt-time #4, session 29)."""
    path = folder / f"{utcnow():%Y-%m}.jsonl"
    existing = journal_files(folder)
    if existing and existing[-1].name > path.name:
        return existing[-1]
    return path


# The journal's own operations (`skillbank.store.base.ExperienceLog`): what the experience
# memory's `sync`, write path, reads and forget need, kept exactly as the journal did them when
# it read its files itself (same files, same byte-offset locations, same checkpoint file).
CHECKPOINT = ".indexed.json"
Parsed = tuple[dict[str, Any], str, str]  # (event, location "<file>:<offset of its line>", digest)


def line_digest(line: str) -> str:
    """The digest of one journal line (the index keeps it to skip re-embedding the same text)."""
    import hashlib

    return hashlib.sha256(line.encode("utf-8")).hexdigest()[:32]


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"


class _JournalFiles:
    folder: Path

    def _files(self) -> list[Path]:  # pragma: no cover - FileExperienceLog's
        raise NotImplementedError

    def positions(self) -> dict[str, int]:
        """How far the journal reaches: each month file's size."""
        return {p.name: p.stat().st_size for p in self._files()}

    def write(self, events: list[dict[str, Any]], max_line_bytes: int | None = None
              ) -> tuple[list[Parsed], dict[str, int], dict[str, int]]:
        """Append events to the newest month's file (`month_file`; one fsync); returns them
        parsed, and the journal's positions before and after (a torn last line is ended
        first)."""
        from skillbank.errors import InvalidInputError

        self.folder.mkdir(parents=True, exist_ok=True)
        path = month_file(self.folder)
        size = path.stat().st_size if path.exists() else 0
        if size and not _ends_with_newline(path):
            append_line(path, "")  # end a torn last line so it cannot swallow this event
            size = path.stat().st_size
        lines = [json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in events]
        if max_line_bytes is not None:
            for line in lines:
                if len(line.encode("utf-8")) > max_line_bytes:
                    raise InvalidInputError("record is too large to store")
        before = {**self.positions(), path.name: size}
        append_line(path, "\n".join(lines))
        parsed, offset = [], size
        for line, event in zip(lines, events):
            parsed.append((event, f"{path.name}:{offset}", line_digest(line)))
            offset += len(line.encode("utf-8")) + 1
        return parsed, before, {**before, path.name: path.stat().st_size}

    def events_from(self, starts: dict[str, int], skipped: list[str]
                    ) -> tuple[list[Parsed], dict[str, int]]:
        """Complete events after `starts` (a position per file); returns them and the ends.
        A last line without its newline is left for later (it may be a crash's torn write)."""
        events: list[Parsed] = []
        ends: dict[str, int] = {}
        for path in self._files():
            start = int(starts.get(path.name, 0))
            offset = start
            with path.open("rb") as handle:
                handle.seek(start)
                for raw in handle:
                    if not raw.endswith(b"\n"):
                        break
                    line_offset = offset
                    offset += len(raw)
                    text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                    if not text.strip():
                        continue
                    try:
                        event = json.loads(text)
                        if not isinstance(event, dict):
                            raise ValueError("not an object")
                    except ValueError:
                        skipped.append(f"{path.name}:{line_offset}")
                        continue
                    events.append((event, f"{path.name}:{line_offset}", line_digest(text)))
            ends[path.name] = offset
        return events, ends

    def load(self, record_id: str, loc: str) -> dict[str, Any] | None:
        """The record as the version at `loc` holds it (see `load_version`)."""
        version = self.load_version(record_id, loc)
        return version.record if version is not None else None

    def load_version(self, record_id: str, loc: str) -> "Version | None":
        """`record_id`'s version at `loc`: its add line (one seek), or its update folded onto
        the versions its `base` names (`skillbank.store.deltas`); else a scan for its latest
        version (a stale pointer, e.g. a hand-edited journal, or none: the index did not
        answer); None when the journal does not hold it."""
        version = self._version_at(record_id, loc) if loc else None
        if version is None:
            latest = self._latest_loc(record_id)
            version = self._version_at(record_id, latest) if latest else None
        return version

    def _version_at(self, record_id: str, loc: str) -> "Version | None":
        from skillbank.store.deltas import resolve

        handles: dict[str, Any] = {}

        def read(at: str) -> tuple[dict[str, Any], int, str] | None:
            name, _, offset = at.rpartition(":")
            path = self.folder / name
            if not (_JOURNAL.match(name) and offset.isdigit() and path.is_file()):
                return None
            if name not in handles:
                handles[name] = path.open("rb")
            handle = handles[name]
            handle.seek(int(offset))
            text = handle.readline().decode("utf-8", errors="replace").rstrip("\r\n")
            try:
                event = json.loads(text)
            except ValueError:
                return None
            if not isinstance(event, dict):
                return None
            # The digest as `events_from` and `write` make it: a version's digest chains them.
            return event, len(text.encode("utf-8")), line_digest(text)

        try:
            return resolve(record_id, loc, read)
        finally:
            for handle in handles.values():
                handle.close()

    def _latest_loc(self, record_id: str) -> str | None:
        """Where the newest file holding `record_id` has its last add or update line."""
        needle = record_id.encode()
        for path in reversed(self._files()):  # newest file first, its last version of it
            latest, offset = None, 0
            with path.open("rb") as handle:
                for raw in handle:
                    if needle in raw and _names(raw) == record_id:
                        latest = f"{path.name}:{offset}"
                    offset += len(raw)
            if latest is not None:
                return latest
        return None

    def lessons_of(self, source_id: str) -> None:
        """No table of records: the index, brought up to date by the journal's sync, names an
        experience's lessons (None)."""
        return None

    def search(self, text: str, limit: int, namespaces: tuple[str, ...] | None = None) -> None:
        """No full-text search of its own: the index's keyword side answers (None)."""
        return None

    # The sync checkpoint ------------------------------------------------------------------------
    def read_checkpoint(self) -> dict[str, Any]:
        try:
            data = json.loads((self.folder / CHECKPOINT).read_text("utf-8"))
            if isinstance(data, dict) and isinstance(data.get("files"), dict):
                return data
        except (OSError, ValueError):
            pass
        return {"collection": "", "files": {}}

    def write_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        from skillbank.fsutil import atomic_write

        atomic_write(self.folder / CHECKPOINT, json.dumps(checkpoint, sort_keys=True))

    # Forget means gone --------------------------------------------------------------------------
    def erase(self, ids: list[str]) -> None:
        """Overwrite the forgotten ids' add lines in place (same-length tombstones)."""
        from skillbank.forgetting import erase_journal_lines

        erase_journal_lines(self.folder, ids)

    def drop_lessons(self, parent_id: str, texts: set[str]) -> list[Parsed]:
        """Rewrite `parent_id`'s add lines without the lessons whose text is in `texts`
        (same-length lines); returns the rewritten events to apply to the index."""
        from skillbank.forgetting import rewrite_without_lessons

        return rewrite_without_lessons(self.folder, parent_id, texts)

    def forgotten_ids(self) -> set[str]:
        """The ids the journal's `forget` events name (they stay, ids only, after the forgotten
        records' lines became tombstones): one read of the month files, a line at a time,
        parsing only the lines that hold a forget event."""
        out: set[str] = set()
        for path in self._files():
            try:
                handle = path.open("rb")
            except FileNotFoundError:
                continue
            with handle:
                for raw in handle:
                    if _FORGET not in raw:
                        continue
                    try:
                        event = json.loads(raw)
                    except ValueError:
                        continue
                    if isinstance(event, dict) and event.get("op") == "forget":
                        lessons = event.get("lessons") \
                            if isinstance(event.get("lessons"), list) else []
                        out.update(t for t in [event.get("id"), *lessons]
                                   if isinstance(t, str))
        return out


def _names(raw: bytes) -> str | None:
    """The id an add or update line writes a version of, else None."""
    from skillbank.store.deltas import updated_id

    try:
        event = json.loads(raw)
        if event.get("op") == "add":
            record_id = event["record"].get("id")
            return record_id if isinstance(record_id, str) else None
        return updated_id(event)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


class FileExperienceLog(_JournalFiles):
    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)

    def _files(self) -> list[Path]:
        return journal_files(self.folder)

    def append(self, events: list[dict[str, Any]]) -> list[str]:
        if not events:
            return []
        path = month_file(self.folder)
        size = path.stat().st_size if path.exists() else 0
        if size:
            with path.open("rb") as handle:
                handle.seek(-1, os.SEEK_END)
                if handle.read(1) != b"\n":
                    append_line(path, "")  # end a torn last line
                    size = path.stat().st_size
        lines = [json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in events]
        append_line(path, "\n".join(lines))  # one write, one fsync
        cursors, offset = [], size
        for line in lines:
            offset += len(line.encode("utf-8")) + 1
            cursors.append(f"{path.name}:{offset}")
        return cursors

    def read(self, after: str | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
        start_name, start = "", 0
        if after:
            start_name, _, offset = after.rpartition(":")
            start = int(offset) if offset.isdigit() else 0
        for path in self._files():
            if path.name < start_name:
                continue
            offset = start if path.name == start_name else 0
            with path.open("rb") as handle:
                handle.seek(offset)
                for raw in handle:
                    offset += len(raw)
                    if not raw.endswith(b"\n"):
                        return  # torn last line: not an event (yet)
                    try:
                        event = json.loads(raw)
                    except ValueError:
                        continue
                    if isinstance(event, dict):
                        yield f"{path.name}:{offset}", event
