"""The skill library's trust methods: review, scans, pinned versions, ratings and rollback by
outcome.

A mixin of `SkillLibrary` (like `SkillAuthoring` and `SkillDrafts`), so every face reaches
these through `bank.skills` — in process or over the client wire — and none holds trust logic.
The state itself lives in files under the root (`skills.lock`, `skill-scans/`,
`skill-versions/`), never in the index: `reindex` cannot lose a review.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import tempfile
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from skillbank import scope as scopes
from skillbank.audit import note
from skillbank.errors import InvalidInputError, NotFoundError, PermissionDeniedError
from skillbank.fsutil import open_journal
from skillbank.memories.skills import checks, pins
from skillbank.memories.skills.authoring import rates_as_outsider
from skillbank.memories.skills.staging import RESTORE_PREFIX
from skillbank.memories.skills.trust import HeldError, TrustBook, held_message
from skillbank.records import Skill, SkillVersion

#: Rollback by outcome: a changed skill is flagged when its success rate since the change is at
#: least this much below its previous version's, each judged at least `OUTCOME_MIN_JUDGED` times.
OUTCOME_DROP = 0.25
OUTCOME_MIN_JUDGED = 5
TIMELINE = "timeline.jsonl"
SUMMARY_SECONDS = 5.0


def _bundled_root() -> Path | None:
    """The skills shipped with skillbank (the same two places `bank.bundled_skills_dir` looks)."""
    candidates: list[Path] = []
    try:
        from importlib.resources import files

        candidates.append(Path(str(files("skillbank.skills"))))
    except (ImportError, ModuleNotFoundError, TypeError):
        pass
    candidates.append(Path(__file__).resolve().parents[3] / "skills")
    for folder in candidates:
        if folder.is_dir() and any(folder.glob("*/SKILL.md")):
            return folder
    return None


class SkillTrust:
    """Trust levels, review, scans, versions; mixed into SkillLibrary."""

    writable_root: Path
    index: Any
    usage: Any
    #: Set before first use to scan with a particular interpreter (tests, a separate venv);
    #: "" turns scanning off; None finds one (SKILLBANK_SCANNER_PYTHON, skillbank.toml, here).
    scanner_python: str | None = None
    scan_timeout: float | None = None

    # The book --------------------------------------------------------------------------------
    @property
    def trust_book(self) -> TrustBook:
        book = self.__dict__.get("_trust_book")
        if book is None:
            lock = self.__dict__.setdefault("_trust_lock", threading.Lock())
            with lock:
                book = self.__dict__.get("_trust_book")
                if book is None:
                    book = TrustBook(self.writable_root.parent, self.writable_root,
                                     _bundled_root(), scanner_python=self.scanner_python,
                                     scan_timeout=self.scan_timeout)
                    self.__dict__["_trust_book"] = book
        return book

    def _trusted(self, skill: Skill, fresh: bool = True) -> Skill:
        annotated = self.trust_book.annotate(skill, fresh=fresh)
        self._note_version(annotated)
        return annotated

    def _disclosable(self, skill: Skill) -> Skill:
        if skill.held:
            raise HeldError(held_message(skill))
        return skill

    def _scan_changed(self, report: Any) -> None:
        """After a sync: look at new and changed skills in the background, which queues their
        scans (a first sync of thousands of skills must not wait for digests or scans)."""
        names = list(getattr(report, "added", [])) + list(getattr(report, "changed", []))
        if not names or not self.trust_book.scanner.available:
            return

        def look() -> None:
            for name in names:
                try:
                    self._summary(name)  # type: ignore[attr-defined]
                except Exception:  # noqa: BLE001 - removed meanwhile, or unreadable: skip
                    continue

        threading.Thread(target=look, daemon=True, name="skillbank-scan-queue").start()

    def stop_scans(self) -> None:
        """Stop background scans and their worker process (the bank calls this on close)."""
        book = self.__dict__.get("_trust_book")
        if book is not None:
            book.close()

    # Review ----------------------------------------------------------------------------------
    def review_queue(self) -> list[Skill]:
        """Skills kept out of routing, waiting for a reviewer (or rejected), by name."""
        return [s for s in self.list(include_held=True) if s.held]  # type: ignore[attr-defined]

    def review_skill(self, name: str, decision: str, reason: str = "",
                     version: str | None = None) -> Skill:
        """Accept or reject a skill from a folder the bank does not fully trust (reviewers only).

        Accepting pins its files (per-file SHA-256 in `skills.lock`) and keeps a copy of that
        version; any later change sends it back to review. Rejecting keeps it out for good (until
        accepted). `version` (from `skill_versions`): the version the reviewer read; accepting
        is refused when the files are no longer that version (they changed while being read,
        and what would be pinned is not what was reviewed)."""
        from skillbank import scope

        checks.check_str(name, "name")
        checks.check_str(reason, "reason", optional=True)
        who = scope.current()
        if not who.trusted:
            raise PermissionDeniedError("an untrusted caller cannot review skills")
        who.require(scope.Role.REVIEWER, "reviewing a skill")
        if decision not in ("accept", "reject"):
            raise InvalidInputError("a review decision is 'accept' or 'reject'")
        skill = self._summary(name)  # type: ignore[attr-defined]
        if skill.trust == "own":
            raise InvalidInputError(f"skill {name!r} is the bank's own; only skills from team "
                                    "or third-party folders are reviewed")
        self.trust_book.decide(skill, decision, by=who.principal, reason=reason or "",
                               expected=version, known=self.known_versions(name))
        note(self, "approve" if decision == "accept" else "reject", "skill", f"skill:{name}")
        return self._summary(name)  # type: ignore[attr-defined]

    def known_versions(self, name: str) -> set[str]:
        """Versions `name` has had: every one seen (the outcome timeline notes each version
        as it is first looked at, `skill_versions` too) and every one accepted. A version
        never among them was mistyped, not changed since (hunt-skillteam #5, session 32)."""
        entry = self.trust_book.lock.get(name) or {}
        known = {str(item.get("version")) for item in [entry, *entry.get("history", [])]}
        known.update(v for v, _ in _timeline(self._timeline_path()).get(name, []))
        return known

    # Scans -----------------------------------------------------------------------------------
    def scan(self, name: str | None = None, wait: bool = True) -> list[Skill]:
        """Scan one skill (or all) now where no result is cached; the skills with their findings.

        With `wait=False` the scans are only queued (the background does them)."""
        checks.check_str(name, "name", optional=True)
        skills = [self._summary(name)] if name else self.list(include_held=True)  # type: ignore[attr-defined]
        book = self.trust_book
        if wait:
            for skill in skills:
                book.scan_now(skill)
            return [self._summary(s.name) for s in skills]  # type: ignore[attr-defined]
        return skills

    def scan_status(self) -> dict[str, Any]:
        scanner = self.trust_book.scanner
        return {"available": scanner.available, "python": scanner.python,
                "broken": scanner.broken, "pending": scanner.pending}

    def wait_for_scans(self, timeout: float | None = None) -> bool:
        """Block until the background scans are done (False: `timeout` passed first)."""
        return self.trust_book.scanner.wait(timeout)

    # Versions --------------------------------------------------------------------------------
    def skill_versions(self, name: str) -> list[SkillVersion]:
        """Versions of a skill, newest first: the current one, then earlier ones (the bank's own
        kept SKILL.md files, or the accepted versions of a reviewed skill)."""
        skill = self._summary(name)  # type: ignore[attr-defined]
        version, _ = self.trust_book.version(skill)
        if version != skill.version:  # changed since `_summary` noted it: the one shown is noted
            self.trust_book.versions[name] = version
            self._note_version(skill)
        try:  # when the current SKILL.md was written, not when this was asked
            saved = datetime.fromtimestamp(os.stat(skill.path).st_mtime, timezone.utc)
        except (OSError, TypeError, ValueError):
            saved = datetime.now(timezone.utc)
        out = [SkillVersion(name=name, version=version, path=skill.path, saved=saved,
                            reason=f"current ({skill.review or 'in use'})",
                            description=skill.description)]
        if skill.writable:
            out.extend(self.history(name))  # type: ignore[attr-defined]
            return out
        entry = self.trust_book.lock.get(name) or {}
        accepted = ([entry] if entry.get("decision") == "accepted" else []) + \
            list(reversed(entry.get("history", [])))
        for item in accepted:
            if item.get("version") == version:
                continue
            folder = self.writable_root.parent / pins.SNAPSHOTS / name / str(item["version"])
            out.append(SkillVersion(
                name=name, version=str(item["version"]), path=str(folder / "SKILL.md"),
                saved=_when(item.get("at")), reason=f"accepted by {item.get('by', '?')}"))
        return out

    def restore_version(self, name: str, version: str) -> Skill:
        """Make an earlier version current: the bank's own skill from its kept versions; a
        reviewed skill from the copy kept when it was accepted, into the bank's own library
        (which wins over read-only folders) — a reviewer's act, so reviewers only."""
        from skillbank import scope

        checks.check_str(name, "name")
        checks.check_str(version, "version")
        skill = self._summary(name)  # type: ignore[attr-defined]
        if skill.writable:
            return self.restore(name, version)  # type: ignore[attr-defined]
        who = scope.current()
        if not who.trusted:  # as review_skill: it makes a reviewed skill the bank's own
            raise PermissionDeniedError("an untrusted caller cannot restore a reviewed skill")
        who.require(scope.Role.REVIEWER, "restoring a reviewed skill's version")
        if not pins.re_version(version):
            raise InvalidInputError(f"{version!r} is not a version id; `skills versions {name}` "
                                    "lists them")
        source = self.writable_root.parent / pins.SNAPSHOTS / name / version
        entry = self.trust_book.lock.get(name) or {}
        pinned = next((item.get("files") for item in [entry, *entry.get("history", [])]
                       if item.get("version") == version and (item is not entry or
                                                              entry.get("decision") == "accepted")),
                      None)
        if not source.is_dir() or not isinstance(pinned, dict):
            raise NotFoundError(f"skill {name!r} has no kept version {version!r}; "
                                f"`skills versions {name}` lists them")
        with self._sync_lock, self.write_lock:  # type: ignore[attr-defined] # as every write
            target = self.writable_root / name
            if target.exists() or target.is_symlink():
                raise InvalidInputError(f"the bank's own library already has {name!r}; restore "
                                        "that one with its own versions")
            self._stage_restore(name, version, source, pinned, target)
            self._index_one(target / "SKILL.md")  # type: ignore[attr-defined]
        note(self, "restore", "skill", f"skill:{name}")
        return self._summary(name)  # type: ignore[attr-defined]

    def _stage_restore(self, name: str, version: str, source: Path, pinned: dict[str, Any],
                       target: Path) -> None:
        """Copy the kept `source` beside the library (`staging.RESTORE_PREFIX`), check the copy
        is the `pinned` version, and move it into `target` in one rename. It was copied straight
        into `skills/<name>/`: a full disk or a kill mid-copy left a half skill there, which the
        next sync indexed and served (session 33). The copy, not the kept folder, is checked:
        what lands is what was compared with the pin (hunt-skillteam #1)."""
        staging = Path(tempfile.mkdtemp(prefix=f"{RESTORE_PREFIX}{name}-",
                                        dir=self.writable_root))  # type: ignore[attr-defined]
        try:
            staged = staging / name
            shutil.copytree(source, staged)
            # The kept copy must be the version pinned: one taken while a teammate edited the
            # skill held other bytes, which a restore made the bank's own (hunt-skillteam #1).
            differences = pins.kept_differences(pinned, staged)
            if differences:
                raise InvalidInputError(
                    f"the kept copy of {name}@{version} is not the version accepted "
                    f"({', '.join(differences[:5])} differ from the pin in skills.lock); it was "
                    f"not restored. Accept that version again from its folder to keep a true "
                    f"copy")
            os.replace(staged, target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    # Ratings and rollback by outcome ---------------------------------------------------------
    def record_use(self, name: str, success: bool | None = None, *, trusted: bool = True
                   ) -> None:
        """Count that a skill was used, and whether it worked; it feeds ranking.

        An untrusted use or vote (`trusted=False`, or an untrusted scope) is kept apart and
        never moves ranking until a reviewer accepts it (`UsageLog.accept`). A verdict of a
        trusted caller who may not change the skill (a contributor rating a team, bundled or
        hand-written skill: `rates_as_outsider`) counts once, as his net judgement: users met
        fifty "it failed" of one contributor sinking a bundled skill in every ranking and
        flagging it worse since a change. Its author, a reviewer and the single local user
        count each verdict, as before; a bare use (no verdict) is a use, never a vote."""
        checks.check_flag(success, "success")
        scope = scopes.caller("default", trusted)
        summary = self._summary(name)  # type: ignore[attr-defined]
        if success is not None:
            scope.require(scopes.Role.CONTRIBUTOR, "rating a skill")
        outsider = scope.trusted and rates_as_outsider(scope, summary.path,
                                                         own=summary.writable)
        if success is not None and outsider:
            self.usage.vote(name, scope.principal, success, use=1)
        else:  # (untrusted: one net each; an outsider's bare uses count once, as his votes)
            self.usage.record(name, ok=success, trusted=scope.trusted,
                              principal=scope.principal,
                              outsider=scope.principal if outsider else None)
        if success is not None:  # a judgement (a vote); a bare use is not a change of memory
            note(self, "vote", "skill", f"skill:{name}", trusted=scope.trusted)

    def _timeline_path(self) -> Path:
        return self.writable_root.parent / "skill-scans" / TIMELINE

    def _note_version(self, skill: Skill) -> None:
        """Remember when a skill's version was first seen (what outcome rollback compares)."""
        seen = self.__dict__.setdefault("_versions_seen", None)
        if seen is None:
            seen = {name: versions[-1][0]
                    for name, versions in _timeline(self._timeline_path()).items()}
            self.__dict__["_versions_seen"] = seen
        version = self.trust_book.versions.get(skill.name, "")
        if not version or seen.get(skill.name) == version:
            return
        seen[skill.name] = version
        with open_journal(self._timeline_path()) as handle:  # private, as every journal
            handle.write((json.dumps({"name": skill.name, "version": version,
                                      "at": datetime.now(timezone.utc).isoformat()}) + "\n"
                          ).encode("utf-8"))

    def _carry_usage(self, name: str, new_name: str) -> None:
        """A renamed skill keeps its counts, votes and outcome timeline under `new_name`.

        Usage is keyed by name: users met a renamed skill starting from nothing while the next,
        unrelated skill given the old name inherited its five "did not help" and went straight
        into the review queue. The timeline gets a `{"name": new, "from": old}` line."""
        self.usage.move(name, new_name)
        self._timeline_event({"name": new_name, "from": name})

    def _drop_usage(self, name: str) -> None:
        """A deleted or forgotten skill's counts and timeline go: a later skill of its name
        starts at zero."""
        self.usage.reset(name)
        self._timeline_event({"name": name, "reset": True})

    def _timeline_event(self, line: dict[str, Any]) -> None:
        self.__dict__["_versions_seen"] = None  # re-read with the event applied
        line["at"] = datetime.now(timezone.utc).isoformat()
        with open_journal(self._timeline_path()) as handle:
            handle.write((json.dumps(line) + "\n").encode("utf-8"))

    def outcome_flags(self) -> list[dict[str, Any]]:
        """Changed skills whose success rate since the change fell well below the previous
        version's (ratings from the usage log, split at the moment the new version appeared)."""
        changes = {n: v for n, v in _timeline(self._timeline_path()).items() if len(v) >= 2}
        log_path = getattr(self.usage, "path", None)  # team mode keeps totals, not dated ratings
        if not changes or log_path is None:
            return []
        ratings = _counted_ratings(_lines(Path(log_path)), set(changes))
        flags = []
        for name, versions in changes.items():
            (old, old_at), (new, new_at) = versions[-2], versions[-1]
            before = _judged(ratings.get(name, []), old_at, new_at)
            after = _judged(ratings.get(name, []), new_at, None)
            if len(before) < OUTCOME_MIN_JUDGED or len(after) < OUTCOME_MIN_JUDGED:
                continue
            rate_before, rate_after = sum(before) / len(before), sum(after) / len(after)
            if rate_before - rate_after >= OUTCOME_DROP:
                flags.append({"name": name, "version": new, "previous": old,
                              "success_rate": round(rate_after, 3),
                              "previous_success_rate": round(rate_before, 3),
                              "judged": len(after), "previous_judged": len(before),
                              "hint": "skillbank skills restore "
                                      + shlex.quote(f"{name}@{old}")})
        return flags

    def trust_summary(self) -> dict[str, Any]:
        """Counts for `stats`: skills by trust level, held for review, flagged by outcome.

        Looks at every skill's folder (about 1 s for 1,800 skills), so a dashboard polling
        `stats` gets the same answer for `SUMMARY_SECONDS`."""
        import time

        cached = self.__dict__.get("_trust_summary_cache")
        if cached and time.monotonic() - cached[0] < SUMMARY_SECONDS:
            return cached[1]
        summary = self._trust_summary()
        self.__dict__["_trust_summary_cache"] = (time.monotonic(), summary)
        return summary

    def _trust_summary(self) -> dict[str, Any]:
        book, skills = self.trust_book, []
        for name in self.names():  # type: ignore[attr-defined]
            meta = self.index.metadata(name)
            if meta is None:
                continue
            skill = Skill(name=name, description="", path=str(meta.get("path", "")),
                          root=str(meta.get("root", "")))
            known = book.versions.get(name)  # as last seen: no walk of the folder
            skills.append(book.annotate(skill, known) if known else self._summary(name))  # type: ignore[attr-defined]
        by_level: dict[str, int] = {}
        for s in skills:
            by_level[s.trust] = by_level.get(s.trust, 0) + 1
        return {"by_trust": by_level, "held": sum(s.held for s in skills),
                "not_scanned": sum(s.scan in ("not scanned", "scan pending") or
                                   s.scan.startswith("scan failed") for s in skills
                                   if s.trust != "own"),
                "flagged_by_outcome": [f["name"] for f in self.outcome_flags()]}


def _timeline(path: Path) -> dict[str, list[tuple[str, datetime]]]:
    """Each skill's versions (version, first seen), following renames (`from`) and resets."""
    changes: dict[str, list[tuple[str, datetime]]] = {}
    for line in _lines(path):
        name = str(line.get("name"))
        if "from" in line:
            if str(line["from"]) in changes:  # a rename seen twice moves once
                changes[name] = changes.pop(str(line["from"]))
        elif line.get("reset"):
            changes.pop(name, None)
        else:
            changes.setdefault(name, []).append((str(line.get("version")), _when(line.get("at"))))
    return {name: versions for name, versions in changes.items() if versions}


#: The voter of accepted untrusted ratings that name none (`_counted_ratings`): never a
#: principal's name (no principal holds a control character).
UNNAMED_VOTER = "\x00unnamed"


def _counted_ratings(events: list[dict[str, Any]], names: set[str]
                     ) -> dict[str, list[tuple[datetime, bool, str]]]:
    """Each skill's ratings (when, ok, outsider) that count, as `UsageLog` counts them:
    trusted ones, and untrusted ones (`"u": 1`) only once a reviewer's `accept` event folded
    them in, each at the time it was given. Users met the flag decided by ratings kept apart:
    an untrusted client's six "helpful" then six "unhelpful" votes (each answered `counted:
    false`) flagged a skill as worse since a change, with a restore hint; helpful ones could
    hide a real regression. An outsider's rating (`"o": <principal>`) names him: `_judged`
    counts him once per version; so does an accepted untrusted one (`"p": <principal>`, else
    one unnamed voter), as `UsageLog.accept` counts it (hunt-trust #2, session 30)."""
    ratings: dict[str, list[tuple[datetime, bool, str]]] = {}
    waiting: dict[str, list[tuple[datetime, bool, str]]] = {}
    for event in events:
        name = event.get("id")
        if "to" in event or event.get("reset"):  # a rename or a delete (`UsageLog.move`/`reset`)
            carried = "to" in event and (name in ratings or name in waiting)
            for table in (ratings, waiting):
                moved = table.pop(name, None)
                if carried:  # as `UsageLog._move`: replaces the new name's, only when any
                    table.pop(str(event["to"]), None)
                    if moved is not None:
                        table[str(event["to"])] = moved
            continue
        if event.get("accept"):
            ratings.setdefault(name, []).extend(waiting.pop(name, []))
        elif isinstance(event.get("ok"), bool):
            untrusted = bool(event.get("u")) and "o" not in event
            voter = str(event.get("p") or UNNAMED_VOTER) if untrusted else \
                str(event.get("o") or "")
            (waiting if untrusted else ratings).setdefault(name, []).append(
                (_when(event.get("at")), event["ok"], voter))
    return {name: found for name, found in ratings.items() if name in names}


def _judged(ratings: list[tuple[datetime, bool, str]], start: datetime,
            end: datetime | None) -> list[bool]:
    """The verdicts given in [start, end): every one of a skill's own people, and one per
    outsider, the sign of his net there (`skillbank.outside_votes`): one contributor's six
    "failed" after a change must not flag a bundled skill as worse since it."""
    own: list[bool] = []
    nets: dict[str, int] = {}
    for at, ok, outsider in ratings:
        if at < start or (end is not None and at >= end):
            continue
        if outsider:
            nets[outsider] = nets.get(outsider, 0) + (1 if ok else -1)
        else:
            own.append(ok)
    return own + [net > 0 for net in nets.values() if net]


def _lines(path: Path) -> list[dict[str, Any]]:
    out = []
    try:
        with path.open("rb") as handle:
            for raw in handle:
                try:
                    value = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(value, dict):
                    out.append(value)
    except OSError:
        pass
    return out


def _when(text: Any) -> datetime:
    try:
        moment = datetime.fromisoformat(str(text))
    except ValueError:
        return datetime.fromtimestamp(0, timezone.utc)
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
