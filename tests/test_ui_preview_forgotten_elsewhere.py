"""A kept context preview is dropped when memory is forgotten by any path, not only the page's.

hunt-ui #5 (session 27): the browser keeps a context preview so rating its ids comes back to it
(docs/ui.md: "kept 10 minutes; dropped when memory is forgotten"). Only the browser's own Forget
dropped it: after `skillbank forget exp-…` in a terminal (or MCP `forget`, or another process's
API call), the next rating showed the forgotten record's text again. Now a kept preview is
served only while the audit log records no forget since it was built.

The browser over HTTP on a bank in process and on a client of an owner process; the forget by
the CLI, and by the Python API of the bank (the owner process, for the client).
"""

from __future__ import annotations

import contextlib
import re

import pytest

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from test_ui_security import SAME, client

SECRET = "the staging database password is hunter2"
TASK = "Restore the staging database from backup"


def _seed(bank) -> tuple[str, str]:
    record = bank.experiences.record(task=TASK, outcome="failure",
                                     feedback=f"It failed because {SECRET}.",
                                     lessons=["Check the backup date first."])
    rule = bank.guidelines.add("Always verify a backup restores before relying on it.",
                               topic="backups").guideline_id
    return record, rule


@pytest.mark.parametrize("how", ["cli", "api"])
@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_a_forget_elsewhere_drops_the_kept_preview(cli_root, remote, how):
    """Fails before: the rating came back to the kept preview, the forgotten text in it."""
    from typer.testing import CliRunner

    from owner_client import client_bank, owner_process
    from skillbank.cli import app

    cli_root.mkdir(parents=True, exist_ok=True)
    with Skillbank.open(cli_root, embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        record, rule = _seed(bank)
    with owner_process(cli_root) if remote else contextlib.nullcontext():
        opened = client_bank(cli_root) if remote else Skillbank.open(
            cli_root, embedding_function=HashEmbedding(), include_bundled=False)
        with opened as bank:
            c, guard = client(bank)
            page = c.post("/context", data={"csrf": guard.csrf, "task": TASK,
                                            "budget": "1500"}, headers=SAME)
            assert SECRET in page.text and record in page.text
            key = re.search(r'name="preview" value="([^"]+)"', page.text).group(1)
            kept = c.post("/rate", data={"csrf": guard.csrf, "id": rule, "helpful": "1",
                                         "preview": key, "next": "/context"}, headers=SAME)
            assert SECRET in kept.text  # kept while nothing was forgotten
            if how == "cli":
                said = CliRunner().invoke(app, ["--no-bundled", "forget", "--yes", record])
                assert said.exit_code == 0, said.output
            else:
                bank.experiences.forget(record)
            back = c.post("/rate", data={"csrf": guard.csrf, "id": rule, "helpful": "1",
                                         "preview": key, "next": "/context"}, headers=SAME)
            assert back.status_code == 200 and f"Rated {rule} as helpful." in back.text
            assert SECRET not in back.text and record not in back.text
            assert SECRET not in c.get(f"/context?preview={key}").text
