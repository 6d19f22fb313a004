"""Team mode's write locks (PostgreSQL advisory locks), per memory: a guideline write does not
queue behind the experience writes of every worker (benchmarks/team_load.py found the one
deployment-wide lock busy ~90% of a round, learns waiting on records), while writes of one
memory still exclude each other across workers.

Two banks on one root over a private PostgreSQL cluster and `chroma run` stand for two workers;
worker B waits at most 0.5 s for a lock.
"""

from __future__ import annotations

import pytest

from skillbank.errors import BusyError
from team_worker import two_banks


@pytest.fixture
def workers(tmp_path, chroma_server, postgres):
    with two_banks(tmp_path / "root", tmp_path / "root", chroma_server, postgres.url,
                   write_lock_timeout=0.5) as pair:
        yield pair


def test_a_guideline_write_does_not_wait_for_another_workers_experience_write(workers):
    a, b = workers
    with a.write_lock:  # worker A in the middle of an experience write
        report = b.guidelines.learn("Always quote identifiers in generated SQL.")
        assert report.ids(), report
        with pytest.raises(BusyError):  # experience writes still take turns across workers
            b.experiences.record(task="Rotate the Pellucid keys", outcome="success")
    assert b.experiences.record(task="Rotate the Pellucid keys", outcome="success")


def test_guideline_writes_still_exclude_each_other_across_workers(workers):
    a, b = workers
    a.guidelines.learn("Never log secrets such as passwords or tokens.")
    with a.guidelines.write_lock:  # worker A in the middle of a guideline write
        with pytest.raises(BusyError):
            b.guidelines.learn("Always pin the versions of CI actions.")
    assert b.guidelines.learn("Always pin the versions of CI actions.").ids()
