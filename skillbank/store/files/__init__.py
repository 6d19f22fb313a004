"""The files column: a memory root's own files, exactly as the embedded default keeps them.

Each part is today's class, unchanged (`skillbank.changes.ChangeFeed`,
`skillbank.locks.WriteLock`, `skillbank.usage.UsageLog`, `skillbank.audit.FileAuditLog`), plus
`FileExperienceLog`, the experience journal's month files read and appended as events.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skillbank.store.files.experiences import FileExperienceLog


class FileStore:
    """The store of one memory root on disk (`skillbank.store.base.Store`)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).expanduser()
        self._usage: dict[str, Any] = {}

    def change_feed(self) -> Any:
        try:
            from skillbank.changes import ChangeFeed
        except ImportError:  # before the feed moved out of skillbank.sharing
            from skillbank.sharing.changes import ChangeFeed  # type: ignore[no-redef]

        return ChangeFeed(self.root)

    def write_lock(self, timeout: float = 60.0) -> Any:
        from skillbank.locks import write_lock

        return write_lock(self.root, timeout=timeout)

    def usage(self, memory: str) -> Any:
        from skillbank.usage import UsageLog

        if memory not in self._usage:
            self._usage[memory] = UsageLog(self.root / "usage" / f"{memory}.jsonl")
        return self._usage[memory]

    def experiences(self) -> FileExperienceLog:
        return FileExperienceLog(self.root / "experiences")

    def audit(self) -> Any:
        from skillbank.audit import open_log

        return open_log(self.root)

    def guidelines(self) -> Any:
        """The guideline records: `<root>/guidelines/<topic>/<id>.md`, as always."""
        from skillbank.store.files.guidelines import FileGuidelineRecords

        return FileGuidelineRecords(self.root / "guidelines")

    def drafts(self, folder: Any = None) -> Any:
        """Skill drafts: `<root>/drafts/<name>/` and its `.ledger.jsonl`, as always."""
        from skillbank.store.files.drafts import FileDrafts

        return FileDrafts(folder if folder is not None else self.root / "drafts")

    def forgotten(self) -> Any:
        """Forgotten ids (id, kind, time, principal): the guidelines' `forgotten.jsonl`."""
        from skillbank.store.files.forgotten import FileForgottenIds

        return FileForgottenIds(self.root / "guidelines" / ".trash" / "forgotten.jsonl")

    def close(self) -> None:
        for counters in self._usage.values():
            counters.flush()

    def __enter__(self) -> "FileStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
