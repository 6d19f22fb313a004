"""Export to and import from JSONL: moving experiences between banks without losing ids."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from skillbank.audit import note
from skillbank.errors import InvalidInputError, NotFoundError, PermissionDeniedError, QueueFullError
from skillbank.fsutil import atomic_write
from skillbank.index import HybridIndex
from skillbank.moments import imported_time
from skillbank.records import Experience, Finding, SyncReport, Usage
from skillbank.memories.experiences.folding import _Batch
from skillbank.memories.experiences.threads import CLOSING_OUTCOMES, check_thread
from skillbank.memories.experiences.validation import _ID

IMPORT_BATCH = 256  # import lines stored per batch (see `record_many`)


class PortabilityMixin:
    """`export` and `import_` of `ExperienceMemory`."""

    index: HybridIndex
    write_lock: threading.RLock

    def export(self, path: str | os.PathLike, namespace: str | None = "*",
               include_retired: bool = True) -> int:
        """Write every record (all namespaces by default) as JSONL; returns how many.

        `path` is a file, replaced atomically; a directory is refused (InvalidInputError naming
        a file to give instead) rather than guessing a name inside it. Every status is
        exported unless `include_retired=False` (then active records only); a record keeps its
        status, so a pending one stays pending when imported.
        """
        target = _path(path, "export")
        if target.is_dir():
            raise InvalidInputError(
                f"{str(target)!r} is a directory; export writes one JSONL file: give a file "
                f"path such as {str(target / 'experiences.jsonl')!r}")
        if not isinstance(include_retired, bool):
            raise InvalidInputError("include_retired must be true or false")
        selected = self._selected(namespace, None, include_retired)
        selected.sort(key=lambda item: (float(item[1].get("created", 0.0)), item[0]))
        atomic_write(target, (self._exported(record_id, meta).model_dump_json() + "\n"
                              for record_id, meta in selected))
        return len(selected)

    def _exported(self, record_id: str, meta: Any) -> Experience:
        """A record as export writes it: its usage with the outsiders' nets behind the counts
        (as `get` shows them), so import counts each outsider once again; the line said
        `"outside": {}` and his next mark after the move counted a second time
        (hunt-roundtrip #3, session 33)."""
        record = self._read_record(record_id, meta)  # type: ignore[attr-defined]
        nets = self.usage.outside(record_id)  # type: ignore[attr-defined]
        if not nets:
            return record
        return record.model_copy(update={"usage": record.usage.model_copy(
            update={"outside": nets})})

    def import_(self, path: str | os.PathLike) -> SyncReport:
        """Read records written by `export` (or any JSONL of experience dicts) and record them.

        Ids are kept when they are well-formed and not taken, for a caller who reads every
        namespace; any other caller's records get ids derived from the file's ids and their
        namespace (`_derived_id`), so the outcome never shows whether an id exists where it
        cannot read. A lesson's `source` follows its experience when that got a new id, wherever
        the lesson's line is in the file (one before its experience's waits for it). A line
        whose id is already stored with the same content is skipped (counted in `unchanged`),
        so importing one export again adds nothing; the stored record's status is kept. What this bank forgot stays gone: a line
        of a record forgotten here, or a lesson of one, is left out with a warning finding
        "forgotten", and an experience's forgotten lesson text is dropped from its line
        (`_forgotten_lines`). A line's `usage` counts (as export writes
        them) come with a record this import adds (untrusted apart for an untrusted caller), so
        moving memory keeps what helped; counts that are not counts (negative, over 10**9,
        not numbers) name the line as not read (`_usage`). Near-duplicates fold as in `record`
        (counted in `unchanged`); lines that are not valid records are listed in `skipped`
        with findings. A line's status "retired" or "pending" is kept.
        A line's `created` is an ISO date or time (one without a zone is UTC, as in guideline
        files) or unix seconds; any other value, or a date before 1970 or after 2999, names
        the line as not read: a zone-less time was stored naive and broke `skills propose`,
        a number became "now" silently (hunt-time #7 and #8, session 29).
        A line's `updated` (a conversation's last turn time, read as `created` is) is kept: it
        was dropped, so a moved conversation looked as old as its first turn to
        `thread_pickup_seconds`, and importing a bank's own export warned "other-version" for
        each conversation that had a later turn (session 33); a line without it (an older
        export) imports as before, its last turn taken for its `created`.
        A line's `thread` is kept, so a conversation moved to another bank goes on in its
        record there, and its `duplicates` (the runs folded into it) come with a record this
        import adds, or fold along with it, for a trusted caller; both were dropped, so the
        moved conversation's next turn started a second record and importing a bank's own
        export folded each conversation into itself, one more run each time (hunt-exp #1,
        session 27). A line whose id is stored as another version of the same conversation
        (the thread went on in one of the banks) leaves the stored one as it is: counted in
        `unchanged`, with a warning finding "other-version" naming it; so does a line whose id
        is stored (where the caller reads it) as another version of its record, the same task
        and `created` (a lesson forgotten in the other bank), never stored beside it or folded
        into it (`_other_version`). A line that only shares an id with a different record gets
        a new id as before.
        Lines are stored in batches of `IMPORT_BATCH` as `record_many` stores them (one
        embedding call, journal append and index upsert each), with the same result as one by
        one.
        """
        started = time.perf_counter()
        report = SyncReport()
        source_path = _path(path, "import")
        if source_path.is_dir():
            raise InvalidInputError(
                f"{str(source_path)!r} is a directory; import reads one JSONL file written by "
                "export (`skillbank experiences export FILE`)")
        if not source_path.is_file():
            raise NotFoundError(f"no file {str(source_path)!r} to import")
        renamed: dict[str, str] = {}
        kept: dict[str, dict[str, Any]] = {}  # ids this import stored as given -> their content
        #: Experiences whose lessons the file carries itself -> those lesson lines (id, texts).
        lesson_lines: dict[str, list[tuple[Any, set[str]]]] = {}
        with source_path.open("rb") as handle:
            for raw in handle:
                if b'"lesson"' in raw:
                    try:
                        data = json.loads(raw)
                        if data.get("kind") == "lesson" and isinstance(data.get("source"), str):
                            lesson_lines.setdefault(data["source"], []).append(
                                (data.get("id"), _lesson_texts(data)))
                    except (ValueError, AttributeError):
                        pass
        chunk: list[tuple[dict[str, Any], Experience, str]] = []
        # A lesson line before its experience's line waits until the rest is stored: its
        # `source` follows the experience's id only once that is settled, so it kept the file's
        # id while the experience got a derived one (a scoped caller) or a new one (a taken
        # id): the lesson dangled, or hung on another record, and a forget of the experience
        # left its text recallable (hunt-expimport #4, session 38). Lines in export's order
        # are stored in file order as before (folding follows that order).
        seen: set[str] = set()  # ids of the experience lines read so far
        later: list[tuple[dict[str, Any], Experience, str]] = []
        full: QueueFullError | None = None
        with source_path.open("rb") as handle, self.write_lock:
            forgotten = self.journal.forgotten_ids()  # type: ignore[attr-defined]
            for number, raw in enumerate(handle, 1):
                if not raw.strip():
                    continue
                where = f"{source_path.name}:{number}"
                if full is not None:  # the review queue filled: the rest waits, each line named
                    report.skipped.append(where)
                    continue
                parsed = self._import_line(raw, where, report)
                if parsed is None:
                    continue
                data, record = parsed
                if record.kind == "experience" and isinstance(data.get("id"), str):
                    seen.add(data["id"])
                elif record.source is not None and record.source not in seen:
                    later.append((data, record, where))
                    continue
                chunk.append((data, record, where))
                if len(chunk) >= IMPORT_BATCH:
                    full = self._import_batch(chunk, report, renamed, lesson_lines, kept,
                                              forgotten)
                    chunk = []
            for lines in [chunk] + [later[i:i + IMPORT_BATCH]
                                    for i in range(0, len(later), IMPORT_BATCH)]:
                if full is None:
                    full = self._import_batch(lines, report, renamed, lesson_lines, kept,
                                              forgotten)
                else:  # the review queue filled: a waiting lesson is named as the rest
                    report.skipped.extend(where for _, _, where in lines)
        # in file order: a lesson line that waited for its experience is named in its place
        report.skipped.sort(key=lambda where: int(where.rpartition(":")[2]))
        note(self, "import", None, report.added)
        report.seconds = time.perf_counter() - started
        return report

    def _import_line(self, raw: bytes, where: str, report: SyncReport
                     ) -> tuple[dict[str, Any], Experience] | None:
        """One import line read into a record (its id and a renamed source are settled when
        it is stored), or None when it is not one: then it is named in `report`."""
        data: Any = None
        try:
            data = json.loads(raw)
            if not isinstance(data, dict):
                raise InvalidInputError("a line must be a JSON object")
            kind = data.get("kind", "experience")
            if kind not in ("experience", "lesson"):
                raise InvalidInputError(f"unknown kind {kind!r}")
            created = data.get("created")
            thread = data.get("thread")
            if thread is not None and kind == "experience":
                thread = check_thread(thread)
            # The id and a renamed source are settled when the line is stored.
            record = self._prepare(
                task=data.get("task"), outcome=data.get("outcome", "unknown"),
                steps=data.get("steps"), score=data.get("score"),
                feedback=data.get("feedback"), lessons=data.get("lessons"),
                when_to_use=data.get("when_to_use", ""), tags=data.get("tags"),
                namespace=data.get("namespace"), messages=data.get("messages"),
                created=imported_time(created),
                kind=kind,
                source=data.get("source") if isinstance(data.get("source"), str) else None)
            if thread is not None and kind == "experience":
                record = record.model_copy(update={"thread": thread})
            try:
                updated = imported_time(data.get("updated"), "updated")
            except (InvalidInputError, ValueError, TypeError) as exc:
                # the record comes all the same, its last turn its `created` (review
                # of session 33: the whole line was dropped for a bad `updated`)
                updated = None
                report.findings.append(Finding(
                    severity="warning", code="invalid-updated", path=where,
                    message=f"{exc}; the record is imported without it"))
            if updated is not None:  # a conversation's last turn time comes along
                record = record.model_copy(update={"updated": updated})
            _usage(data.get("usage"))  # bad counts name the line (hunt-expscale #3)
        except (InvalidInputError, PermissionDeniedError, ValueError, TypeError) as exc:
            # A line for a namespace the caller may not write is skipped, named as
            # such ("other-namespace"): the CLI called an export's own lines "not
            # experiences written by export" (hunt-skillteam #3, session 32).
            report.skipped.append(where)
            other = isinstance(exc, PermissionDeniedError) and isinstance(data, dict) \
                and data.get("namespace") not in (None, self._scope().namespace)  # type: ignore[attr-defined]
            report.findings.append(Finding(
                severity="error", code="other-namespace" if other else "invalid-record",
                message=str(exc), path=where))
            return None
        return data, record

    def _import_batch(self, chunk: list[tuple[dict[str, Any], Experience, str]],
                      report: SyncReport, renamed: dict[str, str],
                      lesson_lines: dict[str, list[tuple[Any, set[str]]]],
                      kept: dict[str, dict[str, Any]], forgotten: set[str]
                      ) -> QueueFullError | None:
        """Store parsed import lines (write lock held), settling ids and sources line by line.

        A line whose id is already stored (before this import, or by it under that id) with
        the same content is skipped, so the same file imported again, or twice in one go,
        adds nothing. A line of a record forgotten here (`forgotten`: `ExperienceLog.
        forgotten_ids`) is left out (`_forgotten_lines`). An untrusted import that fills the
        review queue stores the lines before the one that did not fit and returns the refusal:
        the import's report still says what was stored (it was lost with the error, the lines
        stored before it kept)."""

        def wanted_id(data: dict[str, Any]) -> str:
            return data["id"] if isinstance(data.get("id"), str) else ""

        # Read again each batch: in team mode another worker's forget since the import began
        # is in sb_forgotten, and this process's write lock does not hold that worker off
        # (review 3, session 35).
        forgotten |= self.journal.forgotten_ids()  # type: ignore[attr-defined]
        chunk = _forgotten_lines(chunk, report, lesson_lines, forgotten)
        if not chunk:
            return None
        vectors = self._embed([(record, wanted_id(data) not in lesson_lines)
                               for data, record, _ in chunk])
        batch = _Batch(self, vectors)
        batch.capped = not self._scope().trusted  # type: ignore[attr-defined]
        usage: list[tuple[str, Usage]] = []  # records added, with the counts their line carries
        reads_all = self._scope().reads_all  # type: ignore[attr-defined]
        trusted = self._scope().trusted  # type: ignore[attr-defined]
        full: QueueFullError | None = None
        for position, (data, record, where) in enumerate(chunk):
            wanted = wanted_id(data)
            prefix = "lsn" if record.kind == "lesson" else "exp"
            if record.source is not None and record.source in renamed:
                record = record.model_copy(update={"source": renamed[record.source]})
            detached = False
            if record.thread is not None and record.kind == "experience" \
                    and record.outcome not in CLOSING_OUTCOMES:
                ids = {wanted, _derived_id(prefix, wanted, record.namespace)} \
                    if _ID.match(wanted) else set()
                here = self._open_in_thread(record, ids)
                if here is not None:
                    detached = True
                    record = record.model_copy(update={"thread": None})
                    report.findings.append(Finding(
                        severity="warning", code="thread-taken",
                        message=f"conversation {data.get('thread')!r} is open here already "
                        f"({here}); this record is imported as a past run, not continued",
                        path=where))
            if _ID.match(wanted) and wanted.startswith(prefix):
                # Ids are one space across namespaces, so "keep the id unless it is taken" would
                # tell a caller whether an id exists in a namespace it cannot read (issue 22).
                # A caller who reads every namespace (the bank's own user) keeps the file's ids
                # as before: nothing is hidden from it. Any other caller always gets an id
                # derived from the file's id and the target namespace, whether or not the
                # file's id is taken anywhere; derived, not random, so re-importing the same
                # file (or its own export, whose ids are already derived) adds nothing.
                target = wanted if reads_all else _derived_id(prefix, wanted, record.namespace)
                contents = {}
                for candidate in dict.fromkeys((wanted, target)):
                    contents[candidate] = self._dump(record.model_copy(update={"id": candidate}))
                    if kept[candidate] == contents[candidate] if candidate in kept \
                            else self._stored_as(candidate, contents[candidate]):
                        break
                else:
                    candidate = None
                if candidate is None:
                    dated = data.get("created") is not None
                    candidate = next((c for c in contents if self._other_version(
                        c, contents[c], record, kept, dated)), None)
                    if candidate is not None:
                        what = f"conversation {record.thread!r}" if record.thread is not None \
                            else "this record (the same task and time)"
                        report.findings.append(Finding(
                            severity="warning", code="other-version",
                            message=f"{candidate} is stored already as another version of "
                            f"{what}; the stored one is kept", path=where))
                if candidate is not None:
                    report.unchanged += 1  # this very record is here already: importing again
                    if candidate != wanted:
                        renamed[wanted] = candidate  # its lessons' source follows it
                    continue
                if not batch.taken(target):
                    record = record.model_copy(update={"id": target})
                    kept[target] = contents[target]
            status = data.get("status") if data.get("status") in ("retired", "pending") \
                else "active"
            if status == "active" and not trusted:
                status = "pending"  # an untrusted caller's import waits for review
            repeats = _repeats(data.get("duplicates")) if trusted else 0
            try:
                stored = batch.store(record, with_lessons=wanted not in lesson_lines,
                                     status=status, repeats=repeats, fold=not detached)
            except QueueFullError as refused:
                full = refused
                report.skipped.extend(line for _, _, line in chunk[position:])
                report.findings.append(Finding(severity="error", code="queue-full",
                                               message=f"{refused}; this line and the ones "
                                               "after it were not imported", path=where))
                break
            if wanted and wanted != stored:
                renamed[wanted] = stored
            if stored == record.id:
                report.added.append(stored)
                counts = _usage(data.get("usage"))
                if counts is not None:
                    usage.append((stored, counts))
            else:
                report.unchanged += 1
        batch.flush()
        for record_id, counts in usage:  # once its record is stored; untrusted counts apart
            self.usage.add(record_id, counts, trusted=trusted)  # type: ignore[attr-defined]
        return full

    def _stored_as(self, record_id: str, content: dict[str, Any]) -> bool:
        """Whether the index holds `record_id` with this content (`_dump` of a record), where
        the caller reads it (a record it cannot read is never compared: no existence oracle)."""
        meta = self.index.metadata(record_id)
        if meta is None or not self._scope().can_read(meta.get("namespace")):  # type: ignore[attr-defined]
            return False
        try:
            return self._dump(self._read_record(record_id, meta)) == content
        except NotFoundError:
            return False

    def _open_in_thread(self, record: Experience, ids: set[str]) -> str | None:
        """The id of an open episode of `record`'s thread in its namespace here, if any. An
        imported open record beside it took this bank's own next turns (the thread's newest
        open record is the one a turn updates): a LangGraph thread "1" of another bank is not
        this one's (review2 #2, session 27). `ids`: the record's own (a version of it is its
        own conversation, `_same_conversation`)."""
        where = {"$and": [{"thread": record.thread}, {"namespace": record.namespace},
                          {"kind": "experience"}]}
        for found in self.index.ids_where(where):
            meta = self.index.metadata(found)
            if found not in ids and meta is not None and meta.get("thread") == record.thread \
                    and meta.get("outcome") not in CLOSING_OUTCOMES \
                    and meta.get("status") != "retired":
                return found
        return None

    def _other_version(self, record_id: str, content: dict[str, Any], record: Experience,
                       kept: dict[str, dict[str, Any]], dated: bool) -> bool:
        """Whether `record_id` is stored (by an earlier import, or by this one: `kept`) where
        the caller reads it as another version of the line's record (`content`, its `_dump`
        under that id): a version of its conversation (`_same_conversation`), or the same
        kind, namespace, task and `created` as a line that says its `created` (an export line:
        a line without one is "now" and names no stored run). Importing keeps the stored one
        and neither stores the line beside it nor folds it in.

        Why: another bank's version of a moved record (a lesson forgotten there, a conversation
        that became a past run there) was stored as a second copy of the run under a new id,
        and every later import of the file folded it into that copy, one more run each time,
        while the report said "unchanged" (hunt-expimport #1, session 38). A different record
        whose id only collides (another task or time, a hand-made line) is still imported
        under a new id, and an id stored where the caller cannot read it is never compared."""
        if record_id in kept:
            stored = kept[record_id]
        else:
            meta = self.index.metadata(record_id)
            if meta is None or not self._scope().can_read(meta.get("namespace")):  # type: ignore[attr-defined]
                return False
            if self._same_conversation(record_id, record):
                return True
            try:
                stored = self._dump(self._read_record(record_id, meta))
            except NotFoundError:
                return False
        if record.thread is not None and stored.get("thread") == record.thread \
                and stored.get("namespace") == record.namespace:
            return True
        return dated and all(stored.get(key) == content.get(key)
                             for key in ("kind", "namespace", "task", "created"))

    def _same_conversation(self, record_id: str, record: Experience) -> bool:
        """Whether the index holds `record_id` as a version of `record`'s conversation (the
        same thread and namespace) where the caller reads it: a later or earlier turn of it,
        which importing must neither fold into it nor store beside it as a second open
        record of the thread."""
        if record.thread is None:
            return False
        meta = self.index.metadata(record_id)
        return meta is not None and meta.get("thread") == record.thread \
            and meta.get("namespace") == record.namespace \
            and self._scope().can_read(meta.get("namespace"))  # type: ignore[attr-defined]


def _forgotten_lines(chunk: list[tuple[dict[str, Any], Experience, str]], report: SyncReport,
                     lesson_lines: dict[str, list[tuple[Any, set[str]]]], forgotten: set[str]
                     ) -> list[tuple[dict[str, Any], Experience, str]]:
    """The lines of `chunk` to store, forget meaning gone: a line of a record forgotten here
    (under its id, or the id `_derived_id` gives it) is left out, and so is a lesson of an
    experience forgotten here, each with a warning finding "forgotten" naming its id only; an
    experience whose lesson was forgotten here is kept without that lesson's text (the file's
    lesson line says it). Before anything is embedded: the forgotten text goes nowhere.

    Users met it (hunt-teamport #2, session 35): importing a backup taken before a forget
    brought the forgotten experience back under its id, and after forgetting one lesson, the
    same import stored the experience again under a new id, the forgotten lesson in it, and
    the lesson itself back under its forgotten id.

    Both the file's id and the one `_derived_id` gives it count, for every caller: a scoped
    caller's own records keep their ids, and counting only the derived one brought back what
    it had forgotten, secret lesson and all (review 6, session 35). The forget events say no
    namespace, so a scoped caller whose file shares an id with a record forgotten in another
    namespace has that line left out too, and told so (review 3): ids are 48 random bits, so
    such a file came from this deployment's own export.

    A forgotten lesson's text is known from the file's lesson lines: an experience line from
    a file without them (written by hand, filtered) is stored with it again."""
    if not forgotten:
        return chunk

    def gone(record_id: Any, prefix: str, namespace: str) -> bool:
        return isinstance(record_id, str) and _ID.match(record_id) is not None and (
            record_id in forgotten or _derived_id(prefix, record_id, namespace) in forgotten)

    out = []
    for data, record, where in chunk:
        wanted = data.get("id")
        prefix = "lsn" if record.kind == "lesson" else "exp"
        source = data.get("source") if record.kind == "lesson" else None
        if gone(wanted, prefix, record.namespace):
            said = f"{wanted} was forgotten here"
        elif gone(source, "exp", record.namespace):
            said = f"{wanted if isinstance(wanted, str) else 'this lesson'} is a lesson of " \
                f"{source}, which was forgotten here"
        else:
            said = ""
        if said:
            report.findings.append(Finding(
                severity="warning", code="forgotten", path=where,
                message=f"{said}: not imported (forget means gone)"))
            continue
        texts = set().union(*(t for lesson, t in lesson_lines.get(wanted, ())
                              if gone(lesson, "lsn", record.namespace))) \
            if isinstance(wanted, str) and record.kind == "experience" else set()
        if texts:
            record = record.model_copy(update={"lessons": [
                lesson for lesson in record.lessons if lesson.text not in texts]})
        out.append((data, record, where))
    return out


def _lesson_texts(data: dict[str, Any]) -> set[str]:
    """The texts a lesson line holds (its task, its lessons'): what its experience's own
    `lessons` repeat, and what a forget of it removes from there (`forgetting._drop_from_parent`)."""
    lessons = data.get("lessons") if isinstance(data.get("lessons"), list) else []
    texts = {data.get("task"), *((l.get("text") if isinstance(l, dict) else l) for l in lessons)}
    return {t for t in texts if isinstance(t, str) and t}


def _repeats(value: Any) -> int:
    """The runs an export line says were folded into its record (`duplicates`), or 0 when it
    says none or it is not a count (the record is still imported, counted once)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= 10**9:
        return 0
    return value


def _usage(value: Any) -> Usage | None:
    """The usage counts an export line carries (`{"uses", "successes", "failures",
    "last_used"}`), or None when it carries none (absent, null, or all zero).

    Counts that are not counts (a negative or absurd number, a word, not an object) raise
    InvalidInputError, so the line is named and not read, as for any other bad field: they
    were reset to zero without a word, exit 0, and a damaged backup lost the help counts
    `prune` reads (hunt-expscale #3, session 37)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidInputError(f"usage must be an object of counts, not {value!r:.80}")
    try:
        counts = Usage.model_validate(value)
    except ValueError as exc:
        raise InvalidInputError(f"usage is not counts: {value!r:.200}") from exc
    numbers = (counts.uses, counts.successes, counts.failures)
    if any(isinstance(value.get(k), bool) for k in ("uses", "successes", "failures")) \
            or any(n < 0 or n > 10**9 for n in numbers):
        raise InvalidInputError(
            "usage counts must be whole numbers from 0 to 1,000,000,000, not "
            f"uses={value.get('uses')!r:.40}, successes={value.get('successes')!r:.40}, "
            f"failures={value.get('failures')!r:.40}")
    return counts if any(numbers) else None


def _derived_id(prefix: str, record_id: str, namespace: str) -> str:
    """The id a record imported as `record_id` gets in `namespace` (callers who do not read
    every namespace): the same for the same file line, unrelated to any other namespace."""
    digest = hashlib.sha256(f"{namespace}\0{record_id}".encode("utf-8")).hexdigest()
    return f"{prefix}-{digest[:12]}"


def _path(path: Any, verb: str) -> Path:
    if not isinstance(path, (str, os.PathLike)) or not str(path).strip():
        raise InvalidInputError(f"{verb} takes a file path, not {path!r}")
    return Path(path).expanduser()
