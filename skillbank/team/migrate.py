"""`skillbank migrate`: bring an embedded root's memory into a team deployment's PostgreSQL.

What moves, from `<root>` into the deployment's rows (`skillbank.store.postgres`):

- the experience journal (`<root>/experiences/*.jsonl`), event by event, in order — records,
  lessons, statuses, duplicate counts and forgets, exactly as a team worker would have written
  them (`PostgresExperienceLog`), so its sync indexes them into the team's Chroma;
- usage counters (`<root>/usage/*.jsonl`, trusted and untrusted apart), the audit log
  (`<root>/audit/`) and forgotten ids (`forgotten.jsonl`);
- guideline records (`<root>/guidelines/`), through the guideline store (`store.guidelines()`).

- skill drafts still pending (`<root>/drafts/<name>/`, their files) and the drafts ledger; a
  rerun makes the deployment's pending drafts follow the root's (closed when the root adopted
  or discarded them, rewritten when it edited them), keeping what the team decided meanwhile.

Skills are not rows: a team serves them from a git repository (docs/team.md).

Run twice, it changes nothing: `sb_imports` keeps, per deployment and source root (its id
file; a copy of a root, which has the same id, is a source of its own: `migrate_source`), how
far each part was imported — the journal's position, the number of audit events —
so a rerun adds only what the root gained since (usually nothing, and it says so). Usage counts
carry over by difference: `sb_imports` keeps the counts last imported per item, and a rerun adds
only what each grew since (a root imported by an older skillbank, which kept no counts, starts
counting from this run). The root's write lock is held while it is read, so a process still
running on it cannot write mid-import (it waits, or migrate says the root is busy). Everything but the guidelines is one transaction: a failure leaves
nothing half-written. Guidelines are then saved one transaction each and compared first, so a
run cut short is finished by running it again; a rerun saves only rules the root changed since
it last imported them, merged with what the team did meanwhile (`migrate_guidelines`: the
team's votes and approvals stand), never brings back a forgotten one, and removes those the
root forgot since.
"""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import AbstractSet, Any

from skillbank.errors import InvalidInputError
from skillbank.team.migrate_guidelines import import_guidelines

#: `experiences`: records new to the deployment; `experience_changes`: the other journal events
#: imported (a conversation's turn, an approval, a retire, a fold, a forget). One count of
#: events said "Imported 11 experiences" for a root of 9 records (hunt-roundtrip #4, session 33).
PARTS = ("experiences", "experience_changes", "drafts", "usage", "audit", "forgotten", "guidelines")
MEMORIES = ("skills", "experiences", "guidelines")


@dataclass
class MigrateReport:
    """What one run imported, per part (0 everywhere: the deployment already had it all)."""

    source: str
    root: str
    deployment: str
    database: str
    imported: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PARTS, 0))
    skipped: list[str] = field(default_factory=list)  # what could not be read, and where
    #: The entries of `skipped` left out on purpose, each saying why (`leave_out`); the CLI
    #: called them "unreadable" too (hunt-expimport #5, session 38).
    left_out: set[str] = field(default_factory=set, repr=False)
    #: `--namespace`: the namespace every imported record and rule is put in (None: each keeps
    #: its own, an embedded root's being "default").
    into: str | None = None
    #: The namespaces the records and rules this run imported landed in.
    namespaces: set[str] = field(default_factory=set)
    #: The root's id was first imported from this other root (the root is its copy, `cp -r`):
    #: imported as a source of its own (skillbank.team.migrate_source).
    copy_of: str | None = None
    #: The root's own skills, which migrate does not import (skillbank.team.migrate_notes).
    skills_not_imported: list[str] = field(default_factory=list)
    #: What the user must see beside the counts: skills left behind, a deployment that held
    #: nothing before this run (a typo?).
    warnings: list[str] = field(default_factory=list)

    def leave_out(self, entry: str) -> None:
        """Name something not imported on purpose, `entry` saying why (under `skipped`)."""
        self.skipped.append(entry)
        self.left_out.add(entry)

    @property
    def changed(self) -> bool:
        return any(self.imported.values())

    def summary(self) -> str:
        if not self.changed:
            return (f"Nothing to import: deployment {self.deployment!r} at {self.database} "
                    f"already holds everything in {self.root} (running migrate again changes "
                    f"nothing).{self._copy_note()}")
        parts = ", ".join(f"{n} {part.replace('_', ' ')}" for part, n in self.imported.items()
                          if n)
        return (f"Imported {parts} from {self.root} into deployment {self.deployment!r} at "
                f"{self.database}. Team workers index the experiences on their next sync "
                f"(they are told now); running migrate again changes nothing."
                f"{self._where()}{self._copy_note()}")

    def _where(self) -> str:
        """Where the memory landed, and who reads it there: a team's tokens read their own
        namespaces (docs/team.md: `--reads team`), and an embedded root's memory is in
        "default", so after a migrate the team saw nothing and nothing said why."""
        if not self.namespaces:
            return ""
        names = ", ".join(repr(n) for n in sorted(self.namespaces))
        reads = ",".join(sorted(self.namespaces))
        hint = "" if self.into else " (or migrate into another one with --namespace NS)"
        return (f" Experiences and guidelines landed in namespace {names}: tokens read them "
                f"with --reads {reads}{hint}.")

    def _copy_note(self) -> str:
        if not self.copy_of:
            return ""
        return (f" {self.root} is a copy of the root at {self.copy_of} (it has that root's "
                ".skillbank-id): it was imported as a root of its own, and what both held "
                "before the copy was imported once.")

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "root": self.root, "deployment": self.deployment,
                "database": self.database, "imported": dict(self.imported),
                "changed": self.changed, "skipped": list(self.skipped),
                "copy_of": self.copy_of, "namespaces": sorted(self.namespaces),
                "skills_not_imported": list(self.skills_not_imported),
                "warnings": list(self.warnings)}


def _check_root(root: Path) -> None:
    """A clear error naming what to fix when `root` is not a readable memory root."""
    if not root.exists():
        raise InvalidInputError(f"the root to migrate, {root}, does not exist; give the folder "
                                "of the embedded memory (--from, default ~/.skillbank)")
    if not root.is_dir():
        raise InvalidInputError(f"the root to migrate, {root}, is not a folder")
    if not os.access(root, os.R_OK | os.X_OK):
        raise InvalidInputError(f"cannot read the root to migrate, {root} (permission denied); "
                                "run migrate as the user who owns it, or fix its permissions")
    known = ("experiences", "guidelines", "usage", "audit", "skills", "skillbank.toml")
    if not any((root / name).exists() for name in known):
        raise InvalidInputError(f"{root} is not a skillbank memory root (none of "
                                f"{', '.join(known)} is in it); give the root's folder")
    from skillbank import remember

    if remember.is_team(root):
        # A team worker's root keeps its memory in PostgreSQL, not in its folder: reading its
        # near-empty folders said "Nothing to import … already holds everything" (exit 0) and
        # recorded the target as a deployment in use (hunt-roundtrip #1, session 33).
        held = remember.deployment(root)
        where = f"deployment {held!r}" if held else "its team deployment"
        raise InvalidInputError(
            f"{root} is a team worker's root (team = true in its {remember.CONFIG}): its "
            f"memory is in PostgreSQL ({where}), not in its folder, so there is nothing to "
            "migrate from it; nothing was imported. Give an embedded root (--from, default "
            "~/.skillbank); to copy a deployment's experiences, run `skillbank experiences "
            "export` on this root and `experiences import` on the other")


def _unreadable(path: Path, exc: OSError) -> InvalidInputError:
    return InvalidInputError(f"cannot read {path} ({exc.strerror or exc}); nothing was "
                             "imported. Fix its permissions (or run as its owner) and run "
                             "migrate again")


def migrate_root(root: str | os.PathLike, database_url: str, *, deployment: str,
                 timeout: float = 5.0, namespace: str | None = None,
                 skills_repo: str | None = None) -> MigrateReport:
    """Import `root` into `deployment` at `database_url` (see the module docstring);
    `namespace`: put every experience and guideline imported in it (None: each keeps its own);
    `skills_repo`: the team's skills repository, if it serves skills from git (the warning
    about skills left behind says what to do with them in that deployment)."""
    import psycopg

    from skillbank.store.postgres import PostgresStore
    from skillbank.store.postgres.db import masked

    root = Path(root).expanduser()
    _check_root(root)
    if not isinstance(deployment, str) or not deployment.strip():
        raise InvalidInputError("name the team deployment to import into (--deployment, or "
                                "the deployment setting / SKILLBANK_DEPLOYMENT)")
    from skillbank.locks import write_lock

    store = PostgresStore(database_url, deployment=deployment, timeout=timeout)
    if namespace is not None:
        from skillbank.scope import check_namespace

        check_namespace(namespace)
    report = MigrateReport(source="", root=str(root), deployment=deployment,
                           database=masked(database_url), into=namespace)
    # The root's own write lock while it is read: an embedded process still running on it
    # cannot write mid-import (BusyError, naming the root, when it holds it past `timeout`).
    root_lock = write_lock(root, timeout=timeout)
    try:
        try:
            root_lock.acquire()
        except PermissionError as exc:
            raise InvalidInputError(
                f"cannot take the write lock of {root} ({exc.strerror or exc}); migrate holds "
                "it while reading the root, so run it as a user who can write there") from None
        try:
            _import_rows(store, root, report)
        except PermissionError as exc:
            raise _unreadable(Path(exc.filename or root), exc) from None
        except psycopg.Error as exc:  # a value PostgreSQL refuses (a hand-edited line, …)
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise InvalidInputError(
                f"PostgreSQL at {report.database} refused part of {root} ({first}); nothing "
                "was imported. Fix that line (or remove it) and run migrate again") from None
        try:
            report.imported["guidelines"] = import_guidelines(store, root, report)
        except PermissionError as exc:
            raise _unreadable(Path(exc.filename or root), exc) from None
        _note_skills(root, report, skills_repo)
    finally:
        root_lock.release()
        store.close()
    return report


def _note_skills(root: Path, report: MigrateReport, skills_repo: str | None = None) -> None:
    """Name the root's own skills, which stay behind (docs: skills are not imported)."""
    from skillbank.team import migrate_notes

    report.skills_not_imported = migrate_notes.skills_left(root)
    said = migrate_notes.skills_warning(root, report.skills_not_imported, skills_repo)
    if said:
        report.warnings.append(said)


def _import_rows(store: Any, root: Path, report: MigrateReport) -> None:
    """Experiences, usage, audit and forgotten ids: one transaction."""
    from psycopg.types.json import Jsonb

    from skillbank.store.postgres.changes import CHANNEL
    from skillbank.store.postgres.db import lock_key
    from skillbank.store.postgres.forgotten import INSERT as FORGOTTEN

    from skillbank.team import migrate_notes, migrate_source

    deployment = store.deployment
    log = store.experiences()
    with store.db.transaction(unbounded=True) as conn:  # a big root's import may run long
        conn.execute("SELECT pg_advisory_xact_lock(%s)",
                     (lock_key("skillbank", deployment, "migrate"),))
        conn.execute("SELECT pg_advisory_xact_lock(%s)",
                     (lock_key("skillbank", deployment, "experience-log"),))
        if migrate_notes.held_nothing(conn, deployment):
            others = migrate_notes.deployments_in_use(conn, near=deployment)
            report.warnings.append(migrate_notes.new_deployment_warning(deployment, others))
        found = migrate_source.resolve(conn, root, deployment)
        report.source = source = found.key
        if found.copy_of:
            report.copy_of = found.copy_of
        done = {part: position for part, position in conn.execute(
            "SELECT part, position FROM sb_imports WHERE deployment = %s AND source = %s",
            (deployment, source)).fetchall()}
        positions: dict[str, Any] = {}

        # The experience journal, from where the last run stopped.
        from skillbank.store.files.experiences import FileExperienceLog, line_digest

        journal = FileExperienceLog(root / "experiences")
        starts = dict((done.get("experiences") or {}).get("files", {}))
        events, ends = journal.events_from(starts, report.skipped)
        team_forgot = _forgotten(conn, deployment)
        # Read only when there is something to import and something forgotten: it reads the
        # whole journal while the deployment's experience log is locked.
        forgotten_lessons = _forgotten_lessons(journal, team_forgot) \
            if team_forgot and events else {}
        left_out = 0
        forgot: list[str] = []
        # A copy's history before the copy is already here, imported from the original.
        shared = migrate_source.imported_events(conn, deployment) if found.copy_of else set()
        # Which added records are new to the deployment (the summary counts records, not events).
        adding = [r.get("id") for r in (e.get("record") for e, _, _ in events
                                        if e.get("op") == "add") if isinstance(r, dict)]
        held = {row[0] for row in conn.execute(
            "SELECT id FROM sb_experiences WHERE deployment = %s AND id = ANY(%s)",
            (deployment, [i for i in adding if isinstance(i, str)]))} if adding else set()
        new_records: set[str] = set()
        from skillbank.team import migrate_versions as versions

        seen: dict[str, dict[str, Any]] = {}  # the root's versions read so far, by id
        for event, loc, _digest in events:
            before = versions.root_before(journal, event, loc, seen)
            event = _whole(journal, event, loc)
            turn = versions.record_id(event)
            if event.get("op") == "add" and isinstance(event.get("record"), dict) and \
                    event["record"].get("thread"):  # a conversation: a later turn may follow
                seen[str(event["record"].get("id"))] = copy.deepcopy(event["record"])
            lands = _place(event, report.into)
            if event.get("op") == "erased" or (shared and line_digest(_line(event)) in shared):
                continue  # a forgotten record's tombstone, or a line the original brought
            if event.get("op") != "forget" and not team_forgot.isdisjoint(_named(event)):
                left_out += 1  # the team forgot it: a later turn must not bring it back
                continue
            if turn is not None and versions.team_changed(conn, deployment, turn, before,
                                                          forgotten_lessons.get(turn)):
                # The team recorded a turn since: its version stands (hunt-expimport #3,
                # session 38; skillbank.team.migrate_versions).
                report.leave_out(versions.skipped_note(turn))
                continue
            if lands is not None:
                report.namespaces.add(lands)
            record = event.get("record")
            if isinstance(record, dict) and record.get("id") in forgotten_lessons:
                from skillbank.forgetting import without_lessons

                # A later turn of a parent writes its whole record again, with the text of a
                # lesson the team forgot (the team dropped it from the parent when it forgot).
                without_lessons(record, forgotten_lessons[record["id"]])
            parents = _lesson_parents(conn, deployment, event) if event.get("op") == "forget" \
                else {}
            log._insert(conn, event, _line(event))
            added = record.get("id") if isinstance(record, dict) and event.get("op") == "add" \
                and not event.get("update") else None
            if isinstance(added, str) and added not in held and added not in new_records:
                new_records.add(added)
            elif event.get("op") == "forget" and not new_records.isdisjoint(_forgets(event)):
                new_records.difference_update(_forgets(event))  # added and gone in this run
            else:
                report.imported["experience_changes"] += 1
            if event.get("op") == "forget":
                # Forget means gone here too, for what an earlier run imported: the root
                # rewrote in place what this run's cursor does not reread.
                forgot += [t for t in [event.get("id"), *(event.get("lessons") or [])]
                           if isinstance(t, str)]
                for parent, texts in parents.items():
                    log.drop_lessons_in(conn, parent, texts)
        report.imported["experiences"] = len(new_records)
        if forgot:
            names = store.drafts(root / "drafts").erase_in(conn, forgot)
            if names:
                conn.execute("UPDATE sb_audit SET item_id = '' WHERE deployment = %s "
                             "AND kind = 'draft' AND item_id = ANY(%s)", (deployment, names))
        if left_out:
            report.leave_out(f"{left_out} experience event(s) of records the deployment "
                                  "forgot: not imported (forget means gone)")
        positions["experiences"] = {"files": {**starts, **ends}}

        # Skill drafts: the ledger after the entries already imported, and the pending drafts.
        from skillbank.store.files.drafts import FileDrafts

        drafts_root = root / "drafts"
        ledger = FileDrafts(drafts_root).ledger()
        already = int((done.get("drafts") or {}).get("entries", 0))
        shared_ledger = migrate_source.imported_ledger(conn, deployment) if found.copy_of \
            else []
        for entry in ledger[already:]:
            if entry in shared_ledger:
                continue  # a copy's entry from before the copy: imported from the original
            if not team_forgot.isdisjoint(_sources(entry)):
                # A draft of runs the deployment forgot (see _import_pending_drafts).
                report.leave_out(f"drafts ledger entry {entry.get('op')} "
                                      f"{entry.get('name')!r}: drawn from experiences the "
                                      "deployment forgot")
                continue
            conn.execute("INSERT INTO sb_draft_ledger (deployment, entry) VALUES (%s, %s)",
                         (deployment, Jsonb(entry)))
            report.imported["drafts"] += 1
        # Closed on the root (or erased there with its forgotten runs) and proposed again since
        # the last run: a new draft, even under the name of one the team closed meanwhile (a
        # draft discarded there and proposed again from new runs). A `proposed` entry alone is
        # also written when a still-pending draft is refreshed: that is an edit of the draft the
        # team closed, and the team's decision stands.
        proposed = _proposed_anew(ledger, already)
        positions["drafts"] = {"entries": max(already, len(ledger)),
                               "pending": _import_pending_drafts(conn, deployment, drafts_root,
                                                                 done.get("drafts"), report,
                                                                 proposed, team_forgot)}

        # Usage counters: what each count grew since the last run imported it (the counts
        # imported are kept in sb_imports; an older run kept none: those count from here).
        from skillbank.usage import UsageLog

        before = (done.get("usage") or {})
        imported_counts = before.get("counts") if isinstance(before, dict) else None
        baseline_only = "usage" in done and not isinstance(imported_counts, dict)
        imported_counts = imported_counts if isinstance(imported_counts, dict) else {}
        logs = [(memory, UsageLog(root / "usage" / f"{memory}.jsonl")) for memory in MEMORIES
                if (root / "usage" / f"{memory}.jsonl").is_file()]
        # The outsiders' nets behind those counters, merged so each counts once (migrate_votes).
        from skillbank.team.migrate_votes import import_nets, root_nets, sign_moves

        nets_then = before.get("nets") if isinstance(before, dict) else None
        nets_then = nets_then if isinstance(nets_then, dict) else {}
        nets_now = root_nets(logs, team_forgot)
        moves = sign_moves(nets_now, nets_then)  # (memory, item) -> what outsiders moved
        rows, counts_now = [], {}
        for memory, counts in logs:
            for trusted, table in ((True, counts._counts), (False, counts._untrusted)):
                for item_id, usage in table.items():
                    if item_id in team_forgot:
                        continue  # counts of what the deployment forgot: not brought back
                    key = f"{memory}\t{item_id}\t{int(trusted)}"
                    now = [int(usage.uses), int(usage.successes), int(usage.failures)]
                    counts_now[key] = now
                    then = imported_counts.get(key) or [0, 0, 0]
                    if baseline_only:
                        continue
                    grew = _grown(now, then, moves.get((memory, item_id)) if trusted else None)
                    if any(grew):
                        rows.append((deployment, memory, item_id, trusted, *grew,
                                     usage.last_used))
        with conn.cursor() as cur:
            cur.executemany(
                """INSERT INTO sb_usage (deployment, memory, item_id, trusted, uses,
                       successes, failures, last_used) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
                   ON CONFLICT (deployment, memory, item_id, trusted) DO UPDATE SET
                       uses = sb_usage.uses + excluded.uses,
                       successes = greatest(0, sb_usage.successes + excluded.successes),
                       failures = greatest(0, sb_usage.failures + excluded.failures),
                       last_used = greatest(sb_usage.last_used, excluded.last_used)""", rows)
        if not baseline_only:
            import_nets(conn, deployment, nets_now, nets_then)
        report.imported["usage"] = len(rows)
        if counts_now != imported_counts or nets_now != nets_then:
            positions["usage"] = {"items": len(counts_now), "counts": counts_now,
                                  "nets": nets_now}

        # The audit log: the events after those already imported (files keep their order).
        from skillbank.audit import FileAuditLog

        audit_events = FileAuditLog(root / "audit").query()
        already = int((done.get("audit") or {}).get("events", 0))
        fresh = audit_events[already:]
        if found.copy_of:  # the events from before the copy came with the original
            seen = migrate_source.imported_audit(conn, deployment)
            fresh = [e for e in fresh if migrate_source.audit_key(e) not in seen]
        if fresh:
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO sb_audit (deployment, at, principal, role, face, namespace, "
                    "action, kind, item_id, trusted) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    [(deployment, e.at, e.principal, e.role, e.face, e.namespace, e.action,
                      e.kind, e.id, e.trusted) for e in fresh])
        report.imported["audit"] = len(fresh)
        positions["audit"] = {"events": max(already, len(audit_events))}

        # Forgotten ids: a row per id, never twice.
        from skillbank.store.files.forgotten import FileForgottenIds

        for entry in FileForgottenIds(root / "guidelines" / ".trash" / "forgotten.jsonl").list():
            cur = conn.execute(FORGOTTEN.split(" ON CONFLICT")[0] + " ON CONFLICT DO NOTHING",
                               (deployment, entry["id"], entry.get("kind") or "guideline",
                                entry.get("at") or "now", entry.get("principal") or ""))
            report.imported["forgotten"] += cur.rowcount

        for part, position in positions.items():
            conn.execute(
                "INSERT INTO sb_imports (deployment, source, part, position) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (deployment, source, part) "
                "DO UPDATE SET position = excluded.position, at = now()",
                (deployment, source, part, Jsonb(position)))
        if report.imported["experiences"] or report.imported["experience_changes"]:
            # the workers sync the new events into the index
            conn.execute("SELECT pg_notify(%s, %s)",
                         (CHANNEL, f"{deployment}\texperiences\tmigrate\t*"))


def _whole(journal: Any, event: dict[str, Any], loc: str) -> dict[str, Any]:
    """A conversation's `update` event as the whole record it makes (an `add` flagged
    "update"): its `base` is a place in the root's files, which means nothing in the
    deployment's log. Any other event as it is."""
    from skillbank.store.deltas import UPDATE, updated_id

    record_id = updated_id(event)
    if event.get("op") != UPDATE or record_id is None:
        return event
    version = journal.load_version(record_id, loc)
    if version is None or version.loc != loc:
        return event  # its base is gone (erased): the deployment ignores it as well
    return {"op": "add", "record": version.record, "update": True}


def _place(event: dict[str, Any], into: str | None) -> str | None:
    """Put an added record in `--namespace` (when given, before anything compares the
    event); the namespace it lands in (None: the event adds no record)."""
    record = event.get("record") if event.get("op") == "add" else None
    if not isinstance(record, dict):
        return None
    if into is not None:
        record["namespace"] = into
    return str(record.get("namespace") or "default")


def _line(event: dict[str, Any]) -> str:
    """An event as the deployment's journal stores it (and digests it)."""
    return json.dumps(event, ensure_ascii=False, separators=(",", ":"))


def _proposed_anew(ledger: list[dict[str, Any]], already: int) -> set[str]:
    """The names the root's ledger entries after `already` propose as a new draft: closed
    (adopted, discarded) and then proposed again, or proposed when no entry before names
    them any more.

    The ledger notes `proposed` both for a new draft and for a refresh of a draft still
    pending (new runs joined its group): only a close before the proposal tells a new draft
    from an edit of the one a run imported. A draft erased with its forgotten experiences has
    no close: forgetting blanks its name in every entry (the name is a slug of the forgotten
    words, `skillbank.forgetting`), so a proposal no earlier entry names is a new draft too.
    A name no run imported is written as new whatever this says."""
    closed: set[str] = set()
    named: set[str] = set()
    anew: set[str] = set()
    for position, entry in enumerate(ledger):
        name, op = entry.get("name"), entry.get("op")
        if not isinstance(name, str):
            continue  # blanked by a forget
        if position >= already:
            if op in ("adopted", "discarded"):
                closed.add(name)
            elif op == "proposed" and (name in closed or name not in named):
                anew.add(name)
        named.add(name)
    return anew


def _grown(now: list[int], then: list[int], moved: tuple[int, int] | None) -> list[int]:
    """What each count (uses, successes, failures) grew since the last import. A count that
    shrank means the root's usage was reset: all of it is new. Unless outsiders explain it: a
    net back at zero or turned takes one vote away (second review of session 20: the team then
    kept a vote its outsider had withdrawn), so the counts go down by what they moved."""
    if moved is not None:
        natural = [n - t for n, t in zip(now, then)]
        local = [natural[1] - moved[0], natural[2] - moved[1]]
        if natural[0] >= 0 and min(local) >= 0:
            return natural
    return [n - t if n >= t else n for n, t in zip(now, then)]


def _forgotten(conn: Any, deployment: str) -> set[str]:
    """Every id the deployment forgot (by a team worker, or by an earlier run's import)."""
    return {row[0] for row in conn.execute(
        "SELECT id FROM sb_forgotten WHERE deployment = %s", (deployment,))}


def _named(event: dict[str, Any]) -> set[str]:
    """The experience ids a journal event is about: its record (and, for a lesson, the
    experience it was distilled from), or the id it retires, folds, approves."""
    record = event.get("record")
    ids = {event.get("id"), event.get("of")}
    if isinstance(record, dict):
        ids.add(record.get("id"))
        if record.get("kind") == "lesson":
            ids.add(record.get("source"))
    return {i for i in ids if isinstance(i, str) and i}


def _forgets(event: dict[str, Any]) -> set[str]:
    """The ids a `forget` event removes: its record and the lessons distilled from it."""
    lessons = event.get("lessons") if isinstance(event.get("lessons"), list) else []
    return _named(event) | {t for t in lessons if isinstance(t, str)}


def _forgotten_lessons(journal: Any, forgotten: AbstractSet[str]) -> dict[str, set[str]]:
    """Parent experience id -> the texts of its lesson records the deployment forgot, read off
    the root's whole journal (the team keeps ids only, never what they said)."""
    out: dict[str, set[str]] = {}
    events, _ = journal.events_from({}, [])
    for event, _loc, _digest in events:
        record = event.get("record") if event.get("op") == "add" else None
        if not isinstance(record, dict) or record.get("kind") != "lesson" or \
                record.get("id") not in forgotten or not isinstance(record.get("source"), str):
            continue
        texts = {record.get("task"), *((l.get("text") if isinstance(l, dict) else l)
                                       for l in record.get("lessons") or [])}
        out.setdefault(record["source"], set()).update(
            t for t in texts if isinstance(t, str) and t)
    return out


def _sources(entry: dict[str, Any]) -> set[str]:
    sources = entry.get("sources")
    return {str(s) for s in sources} if isinstance(sources, list) else set()


def _import_pending_drafts(conn: Any, deployment: str, drafts_root: Path, before: Any,
                           report: MigrateReport, proposed: AbstractSet[str] = frozenset(),
                           forgotten: AbstractSet[str] = frozenset()) -> dict[str, str]:
    """Make the deployment's pending drafts follow the root's; returns what `sb_imports`
    keeps (name -> digest of the root's files as imported).

    A draft new on the root, or edited there since the last run, is written (as pending) —
    unless the team closed it meanwhile (its row is gone though a run imported it): what the
    team decided stands. A name the root's ledger closed and then proposed again since the last
    run (`proposed`) is a new draft, not an edit of the closed one: it is written. A draft a run imported that the
    root no longer has pending (adopted, discarded, forgotten there) is closed in the
    deployment too, if the deployment's row is still the one imported (not edited or proposed
    anew by the team). A draft the root did not change since is left as the team has it (an
    edit, a decision). A draft drawn from runs the deployment forgot (`forgotten`) is left out,
    and closed there if a run imported it."""
    from psycopg.types.json import Jsonb

    from skillbank.store.postgres.drafts import digest

    imported = before.get("pending") if isinstance(before, dict) else None
    imported = imported if isinstance(imported, dict) else {}
    rows = {name: digest(files) for name, files in conn.execute(
        "SELECT name, files FROM sb_drafts WHERE deployment = %s AND NOT closed", (deployment,))}
    held = set(rows)
    now: dict[str, str] = {}
    for folder in sorted(drafts_root.iterdir()) if drafts_root.is_dir() else []:
        meta_path = folder / ".draft.json"
        if folder.name.startswith(".") or folder.is_symlink() or not meta_path.is_file():
            continue
        files = {p.relative_to(folder).as_posix(): p.read_text("utf-8", errors="replace")
                 for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink()}
        try:
            sources = [str(s) for s in json.loads(files[".draft.json"]).get("sources") or []]
        except (ValueError, AttributeError):
            report.skipped.append(str(meta_path))
            continue
        if not forgotten.isdisjoint(sources):
            # Drawn from runs the deployment forgot (the root still holds them): importing
            # it would bring what they said back to the team.
            report.leave_out(f"{folder}: drawn from experiences the deployment forgot")
            continue
        name, now[folder.name] = folder.name, digest(files)
        if imported.get(name) == now[name]:
            continue  # as last imported: the deployment's copy stands
        if name in imported and name not in held and name not in proposed:
            continue  # the team adopted or discarded it since: that stands
        cur = conn.execute(
            "INSERT INTO sb_drafts (deployment, name, closed, files, sources) "
            "VALUES (%s, %s, false, %s, %s) ON CONFLICT (deployment, name, closed) DO UPDATE "
            "SET files = excluded.files, sources = excluded.sources, at = now() "
            "WHERE sb_drafts.files IS DISTINCT FROM excluded.files",
            (deployment, name, Jsonb(files), sources))
        report.imported["drafts"] += cur.rowcount
    # Decided (or forgotten) on the root since a run imported them: closed here too, unless
    # the row is no longer the one imported (the team edited it, or has a new draft of that
    # name, e.g. a revision named after its skill): that is the team's.
    closed = sorted(n for n in (set(imported) - set(now)) & held if rows[n] == imported[n])
    if closed:
        cur = conn.execute("DELETE FROM sb_drafts WHERE deployment = %s AND name = ANY(%s)",
                           (deployment, closed))
        report.imported["drafts"] += cur.rowcount
    return now


def _lesson_parents(conn: Any, deployment: str, event: dict[str, Any]) -> dict[str, set[str]]:
    """For a `forget` event: the experiences whose stored `lessons` repeat the text of a
    lesson record it forgets (parent id -> the texts), read before the forget deletes them,
    as `skillbank.forgetting.erase_experiences` does for a forget made in team mode."""
    targets = [t for t in [event.get("id"), *(event.get("lessons") or [])] if isinstance(t, str)]
    out: dict[str, set[str]] = {}
    for (record,) in conn.execute(
            "SELECT record FROM sb_experiences WHERE deployment = %s AND id = ANY(%s)",
            (deployment, targets)).fetchall():
        if not isinstance(record, dict) or record.get("kind") != "lesson" or \
                not isinstance(record.get("source"), str):
            continue
        texts = {record.get("task"), *((l.get("text") if isinstance(l, dict) else l)
                                       for l in record.get("lessons") or [])}
        out.setdefault(record["source"], set()).update(t for t in texts if isinstance(t, str) and t)
    return out
