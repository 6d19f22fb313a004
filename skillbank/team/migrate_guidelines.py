"""`skillbank migrate`'s guideline records (`skillbank.team.migrate`): what the root gained or
changed since a run last imported it, merged with what the team did meanwhile.

`sb_imports` keeps, per rule, the digest of the root's copy last imported (part `guidelines`)
and that copy's fields and vote counts (part `guideline_fields`). A rerun leaves a rule alone
while the root's copy is as imported. When the root changed it, the rule is merged three ways
(`merged`): each count (votes, reinforcements) gets what the root's grew since the last import
added to the team's, and each other field (text, status, supersession, ...) takes the root's
value only where the root changed it. Users met the whole-record replace this was before: after
the team voted a rule helpful 4 times and retired another, one local vote on each rule and a
rerun set the team's 4 votes to 0 and made the retired rule active again (docs/team.md says
"the team's votes and approvals stand"). A rule's save and its note in `sb_imports` are one
PostgreSQL transaction, so a run cut short is finished exactly by running it again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

#: Counts: the team's plus what the root's grew since the last import.
COUNTS = ("helpful", "harmful", "untrusted_helpful", "untrusted_harmful", "reinforcements")
#: Fields: the root's value only where the root changed it since the last import. Never
#: `namespace`: where a rule lives in the deployment is the run's that first imported it
#: (`--namespace`). Users met it merged: `migrate --namespace team`, one local vote, then a rerun
#: without `--namespace` took the root's `default` for a change the root made and moved the
#: team's rule out of every `--reads team` token.
FIELDS = ("topic", "text", "when_to_use", "status", "supersedes", "superseded_by", "related",
          "overrides", "sources")


def snapshot(record: dict[str, Any]) -> dict[str, Any]:
    """What `sb_imports` keeps of the root's copy of a rule, to merge the next run against."""
    return {key: record.get(key) for key in (*COUNTS, *FIELDS)}


def merged(root: dict[str, Any], team: dict[str, Any], base: dict[str, Any] | None
           ) -> dict[str, Any]:
    """The team's rule with what the root did since `base` (its copy as last imported).

    No `base` (a root imported by an older skillbank, which kept none, or a copy of a root,
    `migrate_source`): the team's fields stand and each count is the larger of the two, so
    nothing either side counted is dropped and nothing is counted twice."""
    out = dict(team)
    for key in COUNTS:
        mine, theirs = int(root.get(key) or 0), int(team.get(key) or 0)
        if base is None:
            out[key] = max(mine, theirs)
        else:
            then = int(base.get(key) or 0)
            out[key] = theirs + (mine - then if mine >= then else mine)
    for key in FIELDS:
        if base is not None and root.get(key) != base.get(key):
            out[key] = root.get(key)
    # Outsiders' votes (each counted once in the counts above): the root's voters join the
    # team's; one who voted on both sides keeps the team's net.
    outside = {**(root.get("outside_votes") or {}), **(team.get("outside_votes") or {})}
    if outside:
        out["outside_votes"] = outside
    out["updated"] = max(str(root.get("updated") or ""), str(team.get("updated") or "")) \
        or team.get("updated")
    return out


def import_guidelines(store: Any, root: Path, report: Any) -> int:
    """Guideline records the root gained or changed since it was last imported; one save each.

    "Changed" is told by each rule file's bytes and its place in the root's `guidelines/`
    folder (`FileGuidelineRecords.placed_digests`), not its full path: the full path made every
    rule of a root restored from its backup to a new path count as changed, re-saved and
    reported as imported (hunt-teamport #4, session 35). A note an older run kept by the full
    path still counts while the root has not moved, and is noted again the new way.

    A rule forgotten (by the team or on the root) is never brought back, and one the root forgot
    since the last run leaves the deployment too (forget means gone). Under the deployment's
    guideline lock, so a worker's write is not interleaved with an import of the same rule."""
    folder = root / "guidelines"
    if not folder.is_dir():
        return 0
    from skillbank.records import Guideline
    from skillbank.store.files.forgotten import FileForgottenIds
    from skillbank.store.files.guidelines import FileGuidelineRecords

    files = FileGuidelineRecords(folder, placed=True)
    loaded = files.load()
    report.skipped.extend(loaded.skipped)
    root_forgot = {e["id"] for e in FileForgottenIds(folder / ".trash" / "forgotten.jsonl").list()
                   if isinstance(e.get("id"), str)}
    target = store.guidelines()
    saved = 0
    with store.write_lock(name="guidelines"):
        imported = _position(store, report.source, "guidelines")
        bases = _position(store, report.source, "guideline_fields")
        forgotten = {row[0] for row in store.db.execute(
            "SELECT id FROM sb_forgotten WHERE deployment = %s", (store.deployment,))}
        held = target.load().records
        for gid in sorted(root_forgot & set(held)):
            target.delete(held[gid][0])  # forgotten on the root since it was imported
        unchanged: dict[str, tuple[str, dict[str, Any]]] = {}
        for gid, (guideline, by_path) in sorted(loaded.records.items()):
            if gid in forgotten or gid in root_forgot:
                continue  # forgotten: never brought back
            # The rule file's version wherever the root is (its place in the folder and its
            # bytes), so a root moved or restored to a new path is the same root here too.
            digest = files.placed_digests.get(gid, by_path)
            if imported.get(gid) == digest:
                continue  # the root's copy is as imported: the deployment's copy stands
            if report.into is not None:  # `--namespace`
                guideline = guideline.model_copy(update={"namespace": report.into})
            guideline, note = _own_overrides(guideline, held, loaded.records, report.into)
            mine = guideline.model_dump(mode="json", exclude={"path"})
            if imported.get(gid) == by_path:
                # As imported, noted by an older run by the file's full path: noted again as
                # it is now, so the root can move after this run.
                unchanged[gid] = (digest, bases.get(gid) or snapshot(mine))
                continue
            team = held[gid][0].model_dump(mode="json", exclude={"path"}) if gid in held \
                else None
            if team == mine:
                unchanged[gid] = (digest, snapshot(mine))
                continue
            record = guideline if team is None else Guideline.model_validate(
                merged(mine, team, bases.get(gid)))
            # The rule and the note of what was imported commit together: a run cut between
            # them was finished by a rerun that merged against the old note and counted the
            # root's new votes twice.
            done = {gid: (digest, snapshot(mine))}
            target.save(record, held[gid][0] if gid in held else None,
                        also=lambda conn, done=done: _mark(conn.execute, store.deployment,
                                                           report.source, done))
            report.namespaces.add(record.namespace)
            if note:
                report.warnings.append(note)
            saved += 1
        _mark(store.db.execute, store.deployment, report.source, unchanged)
    return saved


def _own_overrides(guideline: Any, held: dict[str, Any], root: dict[str, Any],
                   into: str | None) -> tuple[Any, str | None]:
    """`guideline` without the `overrides` of rules that live in its own namespace here.

    An override only stops a rule of another namespace from being served beside its
    overrider; in one namespace both were served. Users met it (hunt-expimport #2, session
    38): `migrate --namespace team` put alice's rule, which overrode the team's "Always write a
    changelog entry", in `team` as an active team rule, so the team served both contradicting
    rules, and alice's without review. Such a rule arrives as one namespace would have it: the
    overridden rules become what it `supersedes` (approving it stops serving them), and an
    active one waits as `pending` for a reviewer; returns the rule and the run's warning."""
    home = held[guideline.id][0].namespace if guideline.id in held else guideline.namespace

    def lives(gid: str) -> str | None:  # where a rule is once this run is done
        if gid in held:
            return str(held[gid][0].namespace)
        if gid in root:
            return into or str(root[gid][0].namespace)
        return None

    inside = [gid for gid in guideline.overrides if lives(gid) == home]
    if not inside:
        return guideline, None
    update: dict[str, Any] = {
        "overrides": [gid for gid in guideline.overrides if gid not in inside],
        "supersedes": list(dict.fromkeys([*guideline.supersedes, *inside]))}
    note = None
    if guideline.status == "active":
        update["status"] = "pending"
        note = (
            f"rule {guideline.id} ({guideline.text[:80]!r}) overrides {', '.join(inside)}, "
            f"which is in namespace {home!r} too, where an override does not apply: it was "
            "imported as pending, so the team does not serve both; a reviewer approves it "
            f"(`skillbank guidelines approve {guideline.id}`: it then supersedes them) or "
            "rejects it")
    return guideline.model_copy(update=update), note


def _position(store: Any, source: str, part: str) -> dict[str, Any]:
    rows = store.db.execute("SELECT position FROM sb_imports WHERE deployment = %s "
                            "AND source = %s AND part = %s", (store.deployment, source, part))
    return rows[0][0] if rows and isinstance(rows[0][0], dict) else {}


def _mark(execute: Callable[..., Any], deployment: str, source: str,
          done: dict[str, tuple[str, dict[str, Any]]]) -> None:
    """Keep, per rule, the digest and the fields of the root's copy just imported (`execute`:
    the connection of the transaction that wrote the rule, or the pool's for rules left as
    they were)."""
    if not done:
        return
    from psycopg.types.json import Jsonb

    for part, position in (("guidelines", {gid: d for gid, (d, _) in done.items()}),
                           ("guideline_fields", {gid: f for gid, (_, f) in done.items()})):
        execute(
            "INSERT INTO sb_imports (deployment, source, part, position) "
            "VALUES (%s, %s, %s, %s) ON CONFLICT (deployment, source, part) "
            "DO UPDATE SET position = sb_imports.position || excluded.position, at = now()",
            (deployment, source, part, Jsonb(position)))
