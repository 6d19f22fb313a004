"""Export to and import from JSONL: moving experiences between banks without losing ids."""

from __future__ import annotations

import json
import os
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from skillbank.errors import InvalidInputError, NotFoundError
from skillbank.fsutil import atomic_write
from skillbank.records import Experience, Finding, SyncReport
from skillbank.memories.experiences.folding import _Batch
from skillbank.memories.experiences.validation import _ID

IMPORT_BATCH = 256  # import lines stored per batch (see `record_many`)


class PortabilityMixin:
    """`export` and `import_` of `ExperienceMemory`."""

    write_lock: threading.RLock

    def export(self, path: str | os.PathLike, namespace: str | None = "*",
               include_retired: bool = True) -> int:
        """Write every record (all namespaces by default) as JSONL; returns how many."""
        target = Path(path).expanduser()
        target.parent.mkdir(parents=True, exist_ok=True)
        selected = self._selected(namespace, None, include_retired)
        selected.sort(key=lambda item: (float(item[1].get("created", 0.0)), item[0]))
        atomic_write(target, (self._read_record(record_id, meta).model_dump_json() + "\n"
                              for record_id, meta in selected))
        return len(selected)

    def import_(self, path: str | os.PathLike) -> SyncReport:
        """Read records written by `export` (or any JSONL of experience dicts) and record them.

        Ids are kept when they are well-formed and not taken; a lesson's `source` follows its
        experience when that got a new id. Near-duplicates fold as in `record` (counted in
        `unchanged`); lines that are not valid records are listed in `skipped` with findings.
        Lines are stored in batches of `IMPORT_BATCH` as `record_many` stores them (one
        embedding call, journal append and index upsert each), with the same result as one by
        one.
        """
        started = time.perf_counter()
        report = SyncReport()
        source_path = Path(path).expanduser()
        if not source_path.is_file():
            raise NotFoundError(f"no file {str(source_path)!r} to import")
        renamed: dict[str, str] = {}
        has_lesson_records: set[str] = set()  # experiences whose lessons the file carries itself
        with source_path.open("rb") as handle:
            for raw in handle:
                if b'"lesson"' in raw:
                    try:
                        data = json.loads(raw)
                        if data.get("kind") == "lesson" and isinstance(data.get("source"), str):
                            has_lesson_records.add(data["source"])
                    except (ValueError, AttributeError):
                        pass
        chunk: list[tuple[dict[str, Any], Experience]] = []
        with source_path.open("rb") as handle, self.write_lock:
            for number, raw in enumerate(handle, 1):
                if not raw.strip():
                    continue
                where = f"{source_path.name}:{number}"
                try:
                    data = json.loads(raw)
                    if not isinstance(data, dict):
                        raise InvalidInputError("a line must be a JSON object")
                    kind = data.get("kind", "experience")
                    if kind not in ("experience", "lesson"):
                        raise InvalidInputError(f"unknown kind {kind!r}")
                    created = data.get("created")
                    # The id and a renamed source are settled when the line is stored.
                    record = self._prepare(
                        task=data.get("task"), outcome=data.get("outcome", "unknown"),
                        steps=data.get("steps"), score=data.get("score"),
                        feedback=data.get("feedback"), lessons=data.get("lessons"),
                        when_to_use=data.get("when_to_use", ""), tags=data.get("tags"),
                        namespace=data.get("namespace"), messages=data.get("messages"),
                        created=datetime.fromisoformat(created.replace("Z", "+00:00"))
                        if isinstance(created, str) else None,
                        kind=kind,
                        source=data.get("source") if isinstance(data.get("source"), str) else None)
                except (InvalidInputError, ValueError, TypeError) as exc:
                    report.skipped.append(where)
                    report.findings.append(Finding(severity="error", code="invalid-record",
                                                   message=str(exc), path=where))
                    continue
                chunk.append((data, record))
                if len(chunk) >= IMPORT_BATCH:
                    self._import_batch(chunk, report, renamed, has_lesson_records)
                    chunk = []
            self._import_batch(chunk, report, renamed, has_lesson_records)
        report.seconds = time.perf_counter() - started
        return report

    def _import_batch(self, chunk: list[tuple[dict[str, Any], Experience]], report: SyncReport,
                      renamed: dict[str, str], has_lesson_records: set[str]) -> None:
        """Store parsed import lines (write lock held), settling ids and sources line by line."""
        if not chunk:
            return

        def wanted_id(data: dict[str, Any]) -> str:
            return data["id"] if isinstance(data.get("id"), str) else ""

        vectors = self._embed([(record, wanted_id(data) not in has_lesson_records)
                               for data, record in chunk])
        batch = _Batch(self, vectors)
        for data, record in chunk:
            wanted = wanted_id(data)
            prefix = "lsn" if record.kind == "lesson" else "exp"
            update: dict[str, Any] = {}
            if _ID.match(wanted) and wanted.startswith(prefix) and not batch.taken(wanted):
                update["id"] = wanted
            if record.source is not None and record.source in renamed:
                update["source"] = renamed[record.source]
            if update:
                record = record.model_copy(update=update)
            status = "retired" if data.get("status") == "retired" else "active"
            stored = batch.store(record, with_lessons=wanted not in has_lesson_records,
                                 status=status)
            if wanted and wanted != stored:
                renamed[wanted] = stored
            if stored == record.id:
                report.added.append(stored)
            else:
                report.unchanged += 1
        batch.flush()
