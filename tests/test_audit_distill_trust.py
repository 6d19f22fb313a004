"""The audit's `trusted` (73b6e8f) says whether the *call* ran untrusted. Distilling an
untrusted client's pending experience is a trusted person's call (`skillbank memory distill`,
a reviewer): its lessons stay pending because their source is, but the event must not read as
if an untrusted client had done it. In process and through a client of an owner process."""

from __future__ import annotations

from pathlib import Path

from owner_client import client_of_owner

TASK = "Deploy the Flask app to fly.io"
FEEDBACK = "Always bind the server to 0.0.0.0 so the fly proxy can reach it."


def _distill_pending(bank, root: Path) -> None:
    from skillbank.audit import open_log

    eid = bank.experiences.record(task=TASK, outcome="failure", feedback=FEEDBACK,
                                  lessons=["Bind to 0.0.0.0 on fly.io."], trusted=False)
    assert bank.experiences.get(eid).status == "pending"
    ids = bank.experiences.distill(eid)  # the caller is trusted
    assert ids and all(bank.experiences.get(i).status == "pending" for i in ids)
    log = open_log(root)
    [recorded] = log.query(action="record", item_id=eid)
    assert recorded.trusted is False  # the untrusted client's write
    distilled = [e for e in log.query(action="distill") if e.id in ids]
    assert distilled and all(e.trusted for e in distilled), distilled
    # Distilled as part of the untrusted write itself: that distill is untrusted.
    bank.experiences.record(task=TASK + " again", outcome="failure", feedback=FEEDBACK,
                            lessons=["Check the fly proxy logs first."], trusted=False,
                            distill=True)
    events = [e for e in log.query(action="distill") if e.id not in ids]
    assert events and not any(e.trusted for e in events), events


def test_a_trusted_distill_of_a_pending_experience_is_audited_as_trusted(tmp_path):
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    root = tmp_path / "root"
    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                        sync=False) as bank:
        _distill_pending(bank, root)


def test_the_same_through_a_client_of_an_owner_process(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    with client_of_owner(root) as bank:
        _distill_pending(bank, root)
