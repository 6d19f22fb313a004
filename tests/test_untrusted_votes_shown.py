"""A rule's untrusted and outsiders' votes are shown apart from the counted ones.

hunt-teamvotes #3, session 38: an untrusted client's vote on a rule is answered "Recorded for
review" and kept in `untrusted_helpful`/`untrusted_harmful`, but `skillbank guidelines show`
printed "0 helpful, 0 harmful" and the browser's rule page "+0 helpful · −0 harmful": no face
showed them. The browser page also hid the outsiders' nets the CLI prints. They never change a
rule's status or ranking; now both faces show them, apart. Embedded, and on two team workers
(real PostgreSQL, tests/pg_cluster.py, and a Chroma server).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from test_outsider_ratings import CARL
from test_team_guidelines import workers  # noqa: F401 - a fixture
from test_ui_security import client

RULE = "Always run the database migrations inside a transaction."


def _votes(voter: Any, gid: str) -> None:
    for helpful in (False, False, False, False, False, True):
        answer = voter.rate(gid, helpful=helpful, trusted=False)
        assert answer["counted"] is False
    for _ in range(6):
        voter.scoped(CARL).rate(gid, helpful=False)


def _check(bank: Any, gid: str) -> None:
    rule = bank.guidelines.get(gid)
    assert (rule.status, rule.helpful, rule.harmful) == ("active", 0, 1)  # carl once
    assert (rule.untrusted_helpful, rule.untrusted_harmful) == (1, 5)
    html = client(bank)[0].get(f"/guidelines/{gid}").text
    assert "+0 helpful · −1 harmful" in html
    assert "outsiders (each counted once): carl -6" in html
    assert "untrusted (never counted): +1 helpful · −5 harmful" in html


def _shown_by_cli(root: Path, gid: str) -> str:
    from typer.testing import CliRunner

    from skillbank.cli import app

    result = CliRunner().invoke(app, ["--root", str(root), "--no-bundled", "guidelines",
                                      "show", gid])
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def test_guidelines_show_and_the_rule_page_show_untrusted_and_outsiders_votes(cli_root):
    with Skillbank.open(cli_root, embedding_function=HashEmbedding(), include_bundled=False,
                        share=False) as bank:
        gid = bank.guidelines.add(RULE, namespace="team").guideline_id
        _votes(bank, gid)
        _check(bank, gid)
    said = _shown_by_cli(cli_root, gid)
    assert "0 helpful, 1 harmful, 0 reinforcements; outsiders (each counted once): carl -6; " \
           "untrusted (never counted): 1 helpful, 5 harmful" in said


def test_untrusted_and_outsiders_votes_are_shown_in_team_mode(workers, cli_root, monkeypatch):
    a, b = workers
    gid = a.guidelines.add(RULE, namespace="team").guideline_id
    _votes(a, gid)
    _check(b, gid)  # the other worker reads the row
    for name, value in (("DATABASE_URL", b.settings.database_url),
                        ("CHROMA_URL", b.settings.chroma_url),
                        ("DEPLOYMENT", b.store.deployment)):
        monkeypatch.setenv(f"SKILLBANK_{name}", value)
    said = _shown_by_cli(b.root, gid)
    assert "outsiders (each counted once): carl -6; untrusted (never counted): 1 helpful, " \
           "5 harmful" in said
