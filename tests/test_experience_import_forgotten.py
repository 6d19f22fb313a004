"""`experiences import` leaves out what the bank forgot (hunt-teamport #2, session 35).

Before: importing a backup taken before a `forget` brought the forgotten experience (and its
lessons) back under their forgotten ids, in a team deployment (where the ids stayed in
`sb_forgotten`) and in an embedded root alike. After forgetting one lesson, importing the same
export again said "imported 2 new (1 already known)": the lesson came back active under its
forgotten id, and the experience was stored a second time under a new id, the forgotten
lesson's text in its `lessons` (the stored one no longer held it, so the line did not count as
"already known"). Forget means gone (scope.md); migrate already left forgotten ids out.
"""

from __future__ import annotations

import json

import pytest

from owner_client import bank_for
from skillbank import scope as scopes
from skillbank.errors import NotFoundError

REMOTE = pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
SECRET = "the prod password is hunter2"


def record_and_export(memory, out) -> tuple[str, str, str]:
    """One experience with two lessons, exported; returns (experience, kept lesson, secret
    lesson) ids."""
    eid = memory.record(task="migrate the users table", outcome="failure",
                        lessons=["lock the table first", SECRET])
    memory.export(out)
    lessons = {json.loads(line)["task"]: json.loads(line)["id"]
               for line in out.read_text().splitlines() if json.loads(line)["kind"] == "lesson"}
    return eid, lessons["lock the table first"], lessons[SECRET]


def every_text(memory) -> str:
    return json.dumps([e.model_dump(mode="json") for e in memory.list("*", limit=1000)])


def forgotten_findings(report) -> list[str]:
    return [f.message for f in report.findings if f.code == "forgotten"]


@REMOTE
def test_a_backup_imported_after_a_forget_does_not_bring_the_experience_back(tmp_path, remote):
    """Before: `added == [eid, lesson, lesson]`, the forgotten task served again."""
    out = tmp_path / "backup.jsonl"
    with bank_for(tmp_path, remote) as bank:
        memory = bank.experiences
        eid, kept, secret = record_and_export(memory, out)
        bank.forget(eid)
        report = memory.import_(out)
        assert report.added == [] and report.skipped == []
        assert len(forgotten_findings(report)) == 3  # the experience and both its lessons
        assert all("forgotten here: not imported" in m for m in forgotten_findings(report))
        assert memory.list("*") == []
        for gone in (eid, kept, secret):
            with pytest.raises(NotFoundError):
                memory.get(gone)


@REMOTE
def test_reimport_after_a_lesson_forget_stores_nothing_again(tmp_path, remote):
    """Before: "imported 2 new (1 already known)": the forgotten lesson back under its id, and
    the experience a second time under a new id with the forgotten text in its lessons."""
    out = tmp_path / "backup.jsonl"
    with bank_for(tmp_path, remote) as bank:
        memory = bank.experiences
        eid, kept, secret = record_and_export(memory, out)
        bank.forget(secret)
        report = memory.import_(out)
        assert (report.added, report.unchanged) == ([], 2)
        assert forgotten_findings(report) == [
            f"{secret} was forgotten here: not imported (forget means gone)"]
        assert {e.id for e in memory.list("*")} == {eid, kept}
        assert [l.text for l in memory.get(eid).lessons] == ["lock the table first"]
        assert "hunter2" not in every_text(memory)


@REMOTE
def test_a_scoped_callers_reimport_leaves_out_what_it_forgot(tmp_path, remote):
    """A caller that does not read every namespace imports under ids derived from the file's
    (`_derived_id`): those forgotten stay gone too. Before: the import stored them again."""
    out = tmp_path / "backup.jsonl"
    with bank_for(tmp_path, remote) as bank:
        record_and_export(bank.experiences, out)
        lines = [{k: v for k, v in json.loads(l).items() if k != "namespace"}
                 for l in out.read_text().splitlines()]  # lines that name no namespace
        out.write_text("".join(json.dumps(line) + "\n" for line in lines))
        with scopes.using(scopes.narrowed("bob")):
            memory = bank.experiences
            added = memory.import_(out).added
            assert len(added) == 3 and not set(added) & {line["id"] for line in lines}
            experience = next(e for e in memory.list() if e.kind == "experience")
            bank.forget(experience.id)
            report = memory.import_(out)
            assert report.added == [] and len(forgotten_findings(report)) == 3
            assert memory.list() == []


@REMOTE
def test_a_scoped_callers_backup_of_its_own_records_leaves_out_what_it_forgot(tmp_path, remote):
    """Review 6 of session 35: a caller in namespace alice records (its records keep their
    own ids), exports, forgets, imports the backup. Counting only the id derived for its
    namespace stored all three lines again under new ids, the forgotten lesson's text in
    them; both ids count."""
    out = tmp_path / "backup.jsonl"
    with bank_for(tmp_path, remote) as bank, scopes.using(scopes.narrowed("alice")):
        memory = bank.experiences
        eid, _, _ = record_and_export(memory, out)
        bank.forget(eid)
        report = memory.import_(out)
        assert report.added == [] and len(forgotten_findings(report)) == 3
        assert memory.list() == [] and SECRET not in every_text(memory)


def test_the_cli_line_counts_the_lines_left_out(cli_root, tmp_path):
    """The summary says how many lines were forgotten here, with exit 0 (nothing is wrong
    with the file). Before: "imported 1 new from … (0 already known, 0 lines could not be
    read)"."""
    from conftest import cli_words

    out = tmp_path / "backup.jsonl"
    said = json.loads(cli_words("--json", "experiences", "record", "--task", "deploy on Friday",
                                "--outcome", "success"))
    cli_words("experiences", "export", str(out))
    cli_words("forget", said["id"], "--yes")
    line = cli_words("experiences", "import", str(out))
    assert f"imported 0 new from {out} (0 already known, 1 forgotten here and left out, " \
           "0 lines could not be read)" in line
    assert f"{said['id']} was forgotten here" in line


def test_a_team_import_leaves_out_what_the_deployment_forgot(two_machines, tmp_path, postgres):
    """In team mode the forgotten ids are `sb_forgotten`'s, whichever worker forgot: worker A
    forgets, worker B imports the backup. Before: the experience was back in
    `sb_experiences`, and after a lesson forget a second copy held the lesson's text."""
    import psycopg

    a, b = two_machines
    out = tmp_path / "backup.jsonl"
    eid, kept, secret = record_and_export(a.experiences, out)
    a.forget(secret)
    report = b.experiences.import_(out)
    assert (report.added, report.unchanged, len(forgotten_findings(report))) == ([], 2, 1)
    a.forget(eid)
    report = b.experiences.import_(out)
    assert report.added == [] and len(forgotten_findings(report)) == 3
    deployment = b.store.deployment
    with psycopg.connect(postgres.url) as conn:
        rows = conn.execute("SELECT count(*) FROM sb_experiences WHERE deployment = %s",
                            (deployment,)).fetchone()[0]
    assert rows == 0 and a.experiences.list("*") == []
