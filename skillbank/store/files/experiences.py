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
from typing import Any, Iterator

from skillbank.fsutil import append_line
from skillbank.records import utcnow

_JOURNAL = re.compile(r"^\d{4}-\d{2}\.jsonl$")


def journal_files(folder: Path) -> list[Path]:
    """The month files of an experience journal, oldest first (the journal lists them here too)."""
    try:
        names = sorted(e.name for e in os.scandir(folder)
                       if e.is_file() and _JOURNAL.match(e.name))
    except FileNotFoundError:
        return []
    return [folder / name for name in names]


class FileExperienceLog:
    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)

    def _files(self) -> list[Path]:
        return journal_files(self.folder)

    def append(self, events: list[dict[str, Any]]) -> list[str]:
        if not events:
            return []
        path = self.folder / f"{utcnow():%Y-%m}.jsonl"
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
