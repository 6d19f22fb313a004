"""skillbank.toml may begin with a table (docs/team.md's `[oidc]` configuration): remembering a
skill folder or --no-bundled must put its key at the top level, not inside the last table
(where it was neither read back nor valid OIDC configuration), and never write a file that
no longer parses."""

from __future__ import annotations

import sys

import pytest

from skillbank import remember
from skillbank.errors import InvalidInputError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

OIDC = ('[oidc]\nissuer = "https://login.example.com"\naudience = "skillbank"\n\n'
        '[oidc.groups.agents]\nrole = "contributor"\n')


def test_a_file_that_begins_with_a_table_keeps_it_and_gains_top_level_keys(tmp_path):
    (tmp_path / remember.CONFIG).write_text(OIDC)
    folder = tmp_path / "skills"
    folder.mkdir()
    remember.add(tmp_path, [folder])
    remember.set_bundled(tmp_path, False)
    data = tomllib.loads((tmp_path / remember.CONFIG).read_text())
    assert remember.recorded(tmp_path) == [str(folder.resolve())]
    assert remember.bundled(tmp_path) is False
    assert data["oidc"] == {"issuer": "https://login.example.com", "audience": "skillbank",
                            "groups": {"agents": {"role": "contributor"}}}


def test_a_change_that_would_break_the_file_is_refused_and_nothing_is_written(tmp_path):
    # The key exists only inside a table: replacing it there would not record it.
    text = '[oidc]\nskill_roots = ["x"]\n'
    (tmp_path / remember.CONFIG).write_text(text)
    with pytest.raises(InvalidInputError):
        remember.write(tmp_path, [str(tmp_path)])
    assert (tmp_path / remember.CONFIG).read_text() == text
