"""Forget means gone: the bytes of a forgotten item leave every file under the root.

Removing an item from the index and journaling a `forget` event hides it, but its text stays on
disk in three places this module cleans, each right after the forget, under the root's write lock:

- **The experience journal.** An append-only journal keeps the `add` lines, and a
  conversation's later turns as `update` lines (`skillbank.store.deltas`), each with new text
  of the record. `erase_journal_lines` rewrites each journal file that holds one (temp file, fsync, rename: a crash leaves the old
  file or the new one), replacing the line by a same-length tombstone, `{"op":"erased",...}`
  padded with spaces. Same length on purpose: the index's pointers into the journal (`loc`, a
  byte offset) and the sync checkpoint (a byte offset per file) stay valid, so nothing needs
  re-indexing and a concurrent reader holding an offset never lands mid-line. Replay ignores
  the unknown op (as it always has), and the `forget` event stays: it holds ids only.
- **Chroma's SQLite file** (embedded index, `chroma.sqlite3`). Chroma 1.5 deletes a record's
  rows from `embedding_metadata` and its full-text table, but (1) its write-ahead log,
  `embeddings_queue`, keeps every upsert with the document and metadata until the vector
  segment persists and the log is purged (`automatically_purge` waits for the HNSW index's
  `sync_threshold`, 1,000 writes by default), (2) the FTS5 index keeps a deleted document's
  tokens until its segments are merged, and (3) SQLite leaves deleted rows' bytes in free pages
  and in the free space of pages (its `secure_delete` is off in Chroma's bundled build).
  `erase_from_chroma` clears the `metadata` of the forgotten ids' log rows (the vector stays,
  so a replay of the log still adds and then deletes it, as before), merges the FTS5 index
  (`'optimize'`), and `VACUUM`s the file with `secure_delete` on, which rewrites it from live
  rows only. A child process does it (`skillbank.chroma_erase`): this process's own `sqlite3`
  beside Chroma's bundled SQLite corrupted the file (hunt-mcpmany #1, session 24). With a
  Chroma server the index is not ours to rewrite: its operator purges it.
- **hnswlib's files** keep uninitialised memory in their unused capacity: zeroed at the forget
  while no Chroma call of this process runs (`skillbank.chroma_gate`: Chroma may write them
  during any call), and again when the bank closes (`scrub_vector_files`).
- **Skill drafts** drawn from a forgotten experience (pending or closed) are deleted: their
  text is made of the experiences' tasks and lessons (`erase_drafts`).
- **Guideline files.** A forgotten guideline's file is deleted (it used to move to `.trash/`),
  and `forgotten.jsonl` keeps id, kind, time and principal only (older lines are rewritten to
  those fields, and the files they moved to `.trash/` are deleted).
- **Skill folders.** `forget("skill:<name>")` deletes a bank-owned skill's folder, its
  resources and `.versions/` history included, the copies accepts kept of it
  (`skill-versions/<name>/`), its `skills.lock` entry and its versions' scan results (but what
  a remaining skill uses: the entry while a skill of that name is served from another folder,
  a scan while another skill has that version), and keeps no copy in `.trash/` (`erase_skill`): a copy kept "to restore from" would be the very text the user asked to be
  rid of. `skills.delete(name)` (`skillbank skills delete`) is the undoable removal: it keeps
  the folder in `<root>/.trash`. Every description of `forget` (docs, the `Skillbank.forget`
  docstring, the agent's tool text in `skillbank/tool_text.py`) must say so: an agent told
  the skill went to the trash would promise the user a restore that cannot happen.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import struct
import time
from pathlib import Path
from typing import Any, Iterable, Iterator

from skillbank.fsutil import atomic_write

log = logging.getLogger("skillbank.forgetting")

#: The fields `forgotten.jsonl` keeps: never text, topic or anything else an item said.
FORGOTTEN_FIELDS = ("id", "kind", "at", "principal")
_JOURNAL = re.compile(r"^\d{4}-\d{2}\.jsonl$")


# The experience journal -------------------------------------------------------------------------
def _tombstone(record_id: str, length: int) -> bytes:
    """A JSON line of exactly `length` bytes (newline excluded) saying an add was erased."""
    line = json.dumps({"op": "erased", "id": record_id}, separators=(",", ":")).encode()
    if len(line) > length:  # an add line is always longer; never write a longer one
        line = b"{}"
    return line + b" " * (length - len(line))


def erase_journal_lines(folder: Path, ids: Iterable[str]) -> list[Path]:
    """Overwrite every `add` and `update` line of `ids` in the journal files of `folder`
    (write lock held): a conversation's later turns are update lines holding its steps.

    Returns the files rewritten. Each is replaced atomically (temp + fsync + rename)."""
    wanted = {i for i in ids if isinstance(i, str) and i}
    if not wanted:
        return []
    needles = [i.encode() for i in wanted]
    changed: list[Path] = []
    try:
        names = sorted(e.name for e in os.scandir(folder) if e.is_file() and _JOURNAL.match(e.name))
    except FileNotFoundError:
        return []
    for name in names:
        path = folder / name
        data = path.read_bytes()
        if not any(n in data for n in needles):
            continue
        out: list[bytes] = []
        hit = False
        for raw in data.splitlines(keepends=True):
            body = raw.rstrip(b"\r\n")
            if any(n in body for n in needles):
                record_id = _added_id(body)
                if record_id in wanted:
                    raw = _tombstone(record_id, len(body)) + raw[len(body):]
                    hit = True
            out.append(raw)
        if hit:
            atomic_write(path, b"".join(out))
            changed.append(path)
    return changed


def _added_id(line: bytes) -> str | None:
    """The id an add or update line stores a version of (else None)."""
    from skillbank.store.deltas import updated_id

    try:
        event = json.loads(line)
    except ValueError:
        return None
    if isinstance(event, dict) and event.get("op") == "add" and isinstance(event.get("record"), dict):
        record_id = event["record"].get("id")
        return record_id if isinstance(record_id, str) else None
    return updated_id(event)


def lessons_held(event: dict[str, Any]) -> dict[str, Any] | None:
    """The part of an add or update event that holds a record's lessons: an add's record, an
    update's `set` when it sets them (None: the event holds none)."""
    if event.get("op") == "add":
        return event.get("record") if isinstance(event.get("record"), dict) else None
    changes = event.get("set")
    return changes if isinstance(changes, dict) and "lessons" in changes else None


def erase_experiences(memory: Any, ids: list[str], forgotten: Any = None) -> None:
    """After a journaled `forget` (write lock held): the journal's copies, then Chroma's file.

    The journal is the memory's store (`memory.journal`, `skillbank.store.base.ExperienceLog`):
    the files column overwrites the add lines in place, PostgreSQL deletes the rows. A forgotten
    lesson record (`forgotten.kind == "lesson"`) also leaves its source experience, whose
    `lessons` field repeated its text: that record is rewritten without it and indexed again,
    *before* the lesson's own lines go, so a crash in between leaves the lesson record for
    `finish_erasures` to read its text from (the other order lost the text to look for, and
    the parent kept it for good)."""
    parents = _drop_from_parent(memory, forgotten) if forgotten is not None else []
    memory.journal.erase(ids)
    with getattr(memory, "_cache_lock"):
        for record_id in [*ids, *parents]:
            memory._cache.pop(record_id, None)
    erase_from_chroma(memory.index, [*ids, *parents])


def _drop_from_parent(memory: Any, forgotten: Any) -> list[str]:
    """Rewrite a forgotten lesson's source experience without the lesson's text (its
    `lessons` field repeats it); the parent's id when it changed, else nothing."""
    if getattr(forgotten, "kind", None) != "lesson" or not getattr(forgotten, "source", None):
        return []
    texts = {forgotten.task, *(getattr(l, "text", "") for l in forgotten.lessons)}
    events = memory.journal.drop_lessons(forgotten.source, {t for t in texts if t})
    if not events:
        return []
    memory._apply(events)  # the parent's index entry, without the lesson's text
    return [forgotten.source]


#: Ids whose erasure has begun and not yet finished (`erasing`), in the journal's folder.
ERASING_FILE = ".erasing.json"


@contextlib.contextmanager
def erasing(memory: Any, ids: list[str]) -> Iterator[None]:
    """Mark `ids` as being erased until the block ends without error (write lock held).

    Users met it (crash hunt, session 18): a process killed after its `forget` event was
    journaled and before the erasure ended left the "forgotten" text in the journal and in
    Chroma's file for good — reopening only hid the id, and `forget` again answered "no
    experience with id". The mark is written before the event, so whatever the crash hit,
    the next `sync` finishes the erasure of the ids the journal says are forgotten
    (`finish_erasures`); an id whose event never made it is left alone."""
    path = Path(memory.folder) / ERASING_FILE
    marked = sorted(set(_marked(path)) | set(ids))
    atomic_write(path, json.dumps(marked) + "\n")
    yield
    rest = sorted(set(_marked(path)) - set(ids))
    if rest:
        atomic_write(path, json.dumps(rest) + "\n")
    else:
        path.unlink(missing_ok=True)


def _marked(path: Path) -> list[str]:
    try:
        ids = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return []
    return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []


def finish_erasures(memory: Any) -> list[str]:
    """Erase again what a crash left half-erased (see `erasing`); the ids erased. Runs in
    `sync` (write lock held); cheap when nothing is marked (one stat)."""
    path = Path(memory.folder) / ERASING_FILE
    if not path.exists():
        return []
    marked = set(_marked(path))
    forgotten: set[str] = set()
    sources: set[str] = set()  # experiences whose `lessons` repeated a forgotten lesson
    added: dict[str, Any] = {}  # the last version of each marked record still in the journal
    for _, event in memory.journal.read() if marked else ():
        if event.get("op") == "forget":
            forgotten.update(t for t in [event.get("id"), *(event.get("lessons") or [])]
                             if t in marked)
            if event.get("id") in marked and isinstance(event.get("source"), str):
                sources.add(event["source"])
        elif event.get("op") == "add" and isinstance(event.get("record"), dict) and \
                event["record"].get("id") in marked:
            added[event["record"]["id"]] = event["record"]
    if forgotten:
        log.warning("skillbank: finishing the erasure of %d forgotten records a crash cut "
                    "short", len(forgotten))
        parents = [parent for record_id in sorted(forgotten) if record_id in added
                   for parent in _drop_from_parent(memory, _lesson_of(added[record_id]))]
        memory.journal.erase(sorted(forgotten))
        memory.index.delete(sorted(forgotten))
        with getattr(memory, "_cache_lock"):
            for record_id in parents:
                memory._cache.pop(record_id, None)
        # The parent's earlier version may linger in Chroma's file whichever step the crash
        # cut: its id comes with the lesson's forget event, as the lesson's lines may be gone.
        erase_from_chroma(memory.index, sorted({*forgotten, *parents, *sources}))
        if getattr(memory, "on_forgotten", None) is not None:  # the drafts drawn from them:
            memory.on_forgotten(sorted({*forgotten, *sources}))  # hunt-drafts #2, session 26
    path.unlink(missing_ok=True)
    return sorted(forgotten)


def _lesson_of(raw: dict[str, Any]) -> Any:
    """A marked record read back from the journal, as `_drop_from_parent` reads it (None when
    it does not parse: nothing to drop)."""
    from pydantic import ValidationError

    from skillbank.records import Experience

    try:
        return Experience.model_validate(raw)
    except (ValidationError, TypeError):
        return None


def without_lessons(record: dict[str, Any], texts: set[str]) -> bool:
    """Drop from a stored record the lessons whose text is in `texts`; whether any was."""
    before = record.get("lessons") or []
    kept = [l for l in before if (l.get("text") if isinstance(l, dict) else l) not in texts]
    record["lessons"] = kept
    return len(kept) != len(before)


def rewrite_without_lessons(folder: Path, parent_id: str, texts: set[str]
                            ) -> list[tuple[dict[str, Any], str, str]]:
    """Rewrite the `add` and `update` lines of `parent_id` in the journal files of `folder`
    without the lessons whose text is in `texts` (same-length lines); returns the rewritten
    events with their locations and digests, and the parent's last line after them (its
    current version, which an update folds from what was rewritten), for the index."""
    from skillbank.store.files.experiences import line_digest

    needle = parent_id.encode()
    events: list[tuple[dict[str, Any], str, str]] = []
    last: tuple[dict[str, Any], str, str] | None = None
    try:
        names = sorted(e.name for e in os.scandir(folder)
                       if e.is_file() and _JOURNAL.match(e.name))
    except FileNotFoundError:
        return []
    for name in names:
        path = folder / name
        data = path.read_bytes()
        if needle not in data:
            continue
        out: list[bytes] = []
        offset = 0
        hit = False
        for raw in data.splitlines(keepends=True):
            body = raw.rstrip(b"\r\n")
            if needle in body and _added_id(body) == parent_id:
                event = json.loads(body)
                last = (event, f"{name}:{offset}", line_digest(body.decode("utf-8")))
                held = lessons_held(event)
                if held is not None and without_lessons(held, texts):
                    line = json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode()
                    if len(line) <= len(body):
                        line += b" " * (len(body) - len(line))
                        raw = line + raw[len(body):]
                        last = (event, f"{name}:{offset}", line_digest(line.decode("utf-8")))
                        events.append(last)
                        hit = True
            out.append(raw)
            offset += len(raw)
        if hit:
            atomic_write(path, b"".join(out))
    if events and last is not None and last[1] != events[-1][1]:
        events.append(last)
    return events


def erase_drafts(drafts_root: Path, ids: Iterable[str], audit_folder: Path | None = None,
                 audit: Any = None, drafts: Any = None) -> int:
    """Delete the skill drafts (pending or closed) drawn from any of `ids`: a draft's text is
    made of its source experiences' tasks and lessons. Adopted skills are a person's decision
    and stay. Returns the number of drafts deleted.

    A draft's name is a slug of its experiences' words too ('repair-<word>-pipeline'), and it
    is also kept by the drafts ledger and by the audit log's draft events: those names are
    blanked in place (`_blank_draft_names`; `audit_folder` defaults to `<root>/audit` beside
    `<root>/drafts`), and by `audit` when it is another column's log (PostgreSQL's table,
    team mode: its rows' names are blanked there). A name that was adopted stays: it is a
    skill's name now. `drafts` is the store's drafts column (PostgreSQL in team mode keeps
    the drafts and their ledger in tables: their rows go, and their names leave the ledger and
    the audit table; `drafts_root` is then this worker's working copy)."""
    import shutil

    wanted = {i for i in ids if isinstance(i, str)}
    if wanted and drafts is not None:
        names = drafts.erase(wanted)
        if names and audit is not None and hasattr(audit, "blank_ids"):
            audit.blank_ids("draft", names)
    if not wanted or not drafts_root.is_dir():
        return 0
    _blank_draft_names(drafts_root, wanted,
                       audit_folder if audit_folder is not None else drafts_root.parent / "audit",
                       audit)
    folders = [p for p in drafts_root.iterdir() if p.is_dir() and p.name != ".closed"]
    closed = drafts_root / ".closed"
    if closed.is_dir():
        folders += [p for p in closed.iterdir() if p.is_dir()]
    removed = 0
    for folder in folders:
        try:
            meta = json.loads((folder / ".draft.json").read_text("utf-8"))
        except (OSError, ValueError):
            continue
        sources = meta.get("sources") if isinstance(meta, dict) else None
        if isinstance(sources, list) and wanted & {str(s) for s in sources}:
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    return removed


def _blank_draft_names(drafts_root: Path, ids: set[str], audit_folder: Path,
                       audit: Any = None) -> None:
    """Blank the names of drafts drawn from `ids` in the ledger and the audit log.

    Each line is rewritten in place at the same length (the name dropped or emptied, padded
    with spaces), with a positioned write: appends by other processes (O_APPEND) go on past
    the end meanwhile, so no line written concurrently is lost, unlike a whole-file rewrite."""
    ledger = drafts_root / ".ledger.jsonl"
    names: set[str] = set()
    adopted: set[str] = set()
    try:
        lines = ledger.read_bytes().splitlines()
    except OSError:
        return
    for raw in lines:
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        if entry.get("op") == "adopted":
            adopted.add(entry["name"])
        sources = entry.get("sources")
        if isinstance(sources, list) and ids & {str(s) for s in sources}:
            names.add(entry["name"])
    names -= adopted
    names.discard("")
    if not names:
        return
    if audit is not None and hasattr(audit, "blank_ids"):  # the audit log in PostgreSQL
        audit.blank_ids("draft", sorted(names))

    def ledger_line(entry: dict[str, Any]) -> dict[str, Any] | None:
        if entry.get("name") in names:
            return {k: v for k, v in entry.items() if k not in ("name", "skill")}
        return None

    def audit_line(entry: dict[str, Any]) -> dict[str, Any] | None:
        if entry.get("kind") == "draft" and entry.get("id") in names:
            return {**entry, "id": ""}
        return None

    _rewrite_lines_in_place(ledger, ledger_line, ", ")
    try:
        months = sorted(p for p in audit_folder.iterdir() if p.suffix == ".jsonl")
    except OSError:
        months = []
    for path in months:
        _rewrite_lines_in_place(path, audit_line, ",")


def _rewrite_lines_in_place(path: Path, change: Any, separator: str) -> None:
    """Overwrite the lines `change(entry)` replaces, each at its offset and same length."""
    try:
        data = path.read_bytes()
    except OSError:
        return
    patches: list[tuple[int, bytes]] = []
    offset = 0
    for raw in data.splitlines(keepends=True):
        body = raw.rstrip(b"\r\n")
        try:
            entry = json.loads(body)
        except ValueError:
            entry = None
        new = change(entry) if isinstance(entry, dict) else None
        if new is not None:
            line = json.dumps(new, ensure_ascii=False,
                              separators=(separator, ": " if separator == ", " else ":")).encode()
            if len(line) > len(body):
                line = b"{}"
            patches.append((offset, line + b" " * (len(body) - len(line))))
        offset += len(raw)
    if not patches:
        return
    fd = os.open(path, os.O_WRONLY)
    try:
        for at, line in patches:
            os.pwrite(fd, line, at)
        os.fsync(fd)
    finally:
        os.close(fd)


def erase_skill(library: Any, name: str, trash: Path, versions: Iterable[str] = ()) -> None:
    """After `delete` moved a skill's folder to the trash: remove that copy and its index text,
    the copies of it accepts kept (`<root>/skill-versions/<name>/`), its `skills.lock` entry
    (`pins.LockFile.forget`) and the scan results of its `versions` (`<root>/skill-scans/`,
    whose findings quote its files). `versions`: the ones it had (`known_versions`), read
    before `delete` reset its timeline.

    (`skillbank skills delete` keeps the trash copy; `forget skill:<name>` means gone.) The
    kept copies and the lock entry stayed: a skill accepted, restored and forgotten kept its
    text under `skill-versions/` (hunt-skillteam #2, session 32).

    What a remaining skill still uses stays (review 1 #7, session 32): the lock entry while a
    skill of that name is served from any folder (the team or third-party skill the bank's
    own copy shadowed: it lost its accept and went back to review), and the scan result of a
    version a remaining skill has (scans are keyed by the files' digests, no name: a vendor
    skill restored as the bank's own, or copied under another name, shares them; it was left
    unscanned, held or warned about by policy until scanned again)."""
    import shutil

    from skillbank.memories.skills import pins
    from skillbank.memories.skills.scan import SCANS_DIR

    trash = Path(trash)
    holder = trash.parent  # the unique folder `_trash` made for it, inside `<root>/.trash`
    shutil.rmtree(holder if holder.name.startswith(f"{trash.name}-") else trash,
                  ignore_errors=True)
    erase_from_chroma(library.index, [name])
    root = library.writable_root.parent
    shutil.rmtree(root / pins.SNAPSHOTS / name, ignore_errors=True)
    remaining = library.list(include_held=True)  # `delete` indexed what the copy shadowed
    if not any(skill.name == name for skill in remaining):
        library.trust_book.lock.forget(name)
    kept = {skill.version for skill in remaining}
    for version in versions:
        if pins.re_version(version) and version not in kept:
            with contextlib.suppress(OSError):
                (root / SCANS_DIR / f"{version}.json").unlink()


# Chroma's SQLite --------------------------------------------------------------------------------
def chroma_sqlite_path(index: Any) -> Path | None:
    """The SQLite file of an embedded (persistent) Chroma behind `index`, else None."""
    client = getattr(index, "client", None)
    try:
        settings = client.get_settings()
    except Exception:  # noqa: BLE001 - not a Chroma client we can look into
        return None
    if not getattr(settings, "is_persistent", False):
        return None
    folder = getattr(settings, "persist_directory", None)
    path = Path(folder) / "chroma.sqlite3" if folder else None
    return path if path is not None and path.is_file() else None


def _collection_id(index: Any) -> str | None:
    try:
        return str(index.client.get_collection(index.name).id)
    except Exception:  # noqa: BLE001 - no collection: nothing of it to erase
        return None


def erase_from_chroma(index: Any, ids: Iterable[str], *, timeout: float = 30.0) -> bool:
    """Remove the forgotten ids' text from an embedded Chroma's SQLite file (see module doc).

    Call after the index delete. Returns False when there is nothing of ours to rewrite (a
    Chroma server). A failure is logged, not raised: the item is already forgotten (hidden
    and journaled), and the next forget or `skillbank reindex` vacuums again.

    The file is rewritten by a child process (`skillbank.chroma_erase`), never through this
    process's `sqlite3` module: Chroma has it open here through a second copy of SQLite, and
    the two corrupted it for good under concurrent calls (hunt-mcpmany #1, session 24).
    hnswlib's files are zeroed between Chroma's calls (`skillbank.chroma_gate`), which may
    write them on any thread."""
    from skillbank.chroma_erase import erase_in_child
    from skillbank.chroma_gate import gate_of

    path = chroma_sqlite_path(index)
    wanted = [i for i in ids if isinstance(i, str) and i]
    if path is None or not wanted:
        return False
    collection = _collection_id(index)
    started = time.perf_counter()
    drop_snapshot(path.parent.parent / ".cache" / "index" / str(getattr(index, "name", "")))
    failed = erase_in_child(path, collection, wanted, timeout=timeout)
    if failed is not None:
        log.error("skillbank: could not erase forgotten text from %s: %s", path, failed)
        return False
    gate = gate_of(index.client)
    with gate.alone() if gate is not None else contextlib.nullcontext(False) as alone:
        if alone:  # else the bank's close zeroes them
            scrub_vector_files(path.parent)
        else:
            log.info("skillbank: hnswlib's unused capacity is zeroed at close: Chroma calls "
                     "did not pause")
    log.debug("erased %d ids from %s in %.3f s", len(wanted), path, time.perf_counter() - started)
    return True


def drop_snapshot(folder: Path) -> None:
    """Delete an index's saved keyword snapshots (they hold every text they index).

    Marked dirty first, as any write does, so a crash in between never restores one; the bank
    saves a fresh snapshot (without the forgotten text) when it closes."""
    import shutil

    if not folder.name or not folder.is_dir():
        return
    try:
        atomic_write(folder / "DIRTY", b"a forget removed the snapshot\n")
        (folder / "CURRENT").unlink(missing_ok=True)
    except OSError as exc:
        log.error("skillbank: could not mark %s dirty: %s", folder, exc)
        return
    for old in folder.iterdir():
        if old.is_dir():
            shutil.rmtree(old, ignore_errors=True)


# Chroma's vector files --------------------------------------------------------------------------
#: hnswlib's header as Chroma 1.5 writes it (`header.bin`): a u32 version, then u64 fields.
_HEADER = struct.Struct("<IQQQQQQ")


def scrub_vector_files(chroma_dir: Path) -> int:
    """Zero the unused capacity of every HNSW segment file under `chroma_dir`.

    hnswlib allocates room for `max_elements` with malloc and writes the whole allocation to
    `data_level0.bin`; the slots past `cur_element_count` are uninitialised memory, which we
    found holding text the process had handled (a forgotten record's feedback among it). Used
    slots are zeroed by hnswlib when a point is added, so only the tail needs clearing; Chroma
    never reads it. Call only while no Chroma call of this process runs (`forget` holds
    `skillbank.chroma_gate`'s gate alone) or after the index is closed: Chroma writes these
    files in place during any call that applies its log, a search's too, and a tail zeroed
    meanwhile could wipe vectors it had just written (hunt-mcpmany #1, session 24). Returns
    the number of files changed; unknown layouts are left alone."""
    changed = 0
    try:
        folders = [p for p in Path(chroma_dir).iterdir() if p.is_dir()]
    except OSError:
        return 0
    for folder in folders:
        header = folder / "header.bin"
        try:
            raw = header.read_bytes()
            if len(raw) < _HEADER.size:
                continue
            version, offset0, max_elements, count, per_element, _label, _offset = \
                _HEADER.unpack_from(raw)
            if version != 1 or offset0 != 0 or not 0 <= count <= max_elements or \
                    per_element <= 0:
                continue  # not the layout we know: never guess
            # data_level0.bin: one slot of `per_element` bytes per element; length.bin: one
            # 4-byte level per element. Both are dumped at full capacity.
            for name, width in (("data_level0.bin", per_element), ("length.bin", 4)):
                changed += _zero_tail(folder / name, count * width, max_elements * width)
        except OSError as exc:
            log.debug("could not scrub %s: %s", folder, exc)
    return changed


def _zero_tail(path: Path, start: int, size: int) -> int:
    """Zero `path` from `start` when it is exactly `size` bytes long; 1 if it changed."""
    if not path.is_file() or path.stat().st_size != size or start >= size:
        return 0
    with path.open("r+b") as handle:
        handle.seek(start)
        tail = handle.read()
        if not tail.strip(b"\0"):
            return 0
        handle.seek(start)
        handle.write(bytes(len(tail)))
        handle.flush()
        os.fsync(handle.fileno())
    return 1


# Guidelines -------------------------------------------------------------------------------------
def note_forgotten(log_path: Path, item_id: str, kind: str, at: str,
                   principal: str | None = None) -> None:
    """Append one `forgotten.jsonl` line (id, kind, time, principal) and rewrite older lines to
    those fields only; files an older version moved to the trash for these ids are deleted.

    `principal` defaults to the caller's (`skillbank.scope.current`)."""
    if principal is None:
        from skillbank import scope as scopes

        principal = scopes.current().principal
    log_path.parent.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    ids: set[str] = {item_id}
    try:
        old = log_path.read_text("utf-8").splitlines()
    except FileNotFoundError:
        old = []
    for raw in old:
        try:
            data = json.loads(raw)
        except ValueError:
            continue  # a torn or foreign line: not kept (it could hold text)
        if not isinstance(data, dict) or not isinstance(data.get("id"), str):
            continue
        ids.add(data["id"])
        data.setdefault("kind", "guideline")
        lines.append(json.dumps({k: data.get(k) for k in FORGOTTEN_FIELDS}, ensure_ascii=False))
    lines.append(json.dumps({"id": item_id, "kind": kind, "at": at, "principal": principal},
                            ensure_ascii=False))
    atomic_write(log_path, "\n".join(lines) + "\n")
    for leftover in log_path.parent.glob("*.md"):
        if any(leftover.name.startswith(f"{gid}-") for gid in ids):
            try:
                leftover.unlink()
            except OSError as exc:
                log.error("skillbank: could not delete %s: %s", leftover, exc)
