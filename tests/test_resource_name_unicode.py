"""A resource name with a lone surrogate is invalid input, the same in process and through a
client: it raised `UnicodeEncodeError` in process and a bare `ValueError` through a client."""

from __future__ import annotations

import pytest

from owner_client import client_of_owner
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.errors import InvalidInputError


def _read_bad_name(bank) -> None:
    bank.skills.save("csv-report", "Build a weekly CSV report.", "# Steps\n\n1. Query.\n",
                     resources={"references/notes.md": "notes\n"})
    assert bank.skills.read_resource("csv-report", "references/notes.md") == "notes\n"
    with pytest.raises(InvalidInputError, match="not valid Unicode"):
        bank.skills.read_resource("csv-report", "references/\ud800.md")


def test_a_lone_surrogate_in_a_resource_name_in_process(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        _read_bad_name(bank)


def test_a_lone_surrogate_in_a_resource_name_through_a_client(tmp_path):
    with client_of_owner(tmp_path / "root") as bank:
        _read_bad_name(bank)
