"""A tokens file with `reviews` an older `tokens add` wrote (review 1 #5, session 32).

Before session 27, `tokens add --role contributor --reviews team` stored the reviews; they never
granted anything (a contributor reviews nothing). Since hunt-scopes #2 (session 32) every read
of the file checked them, so such a file was refused whole: the server did not start (every
principal locked out), a reload kept the old set, and `tokens list` / `remove` / `add` were
refused too, so the operator could not fix it with the CLI. Now such reviews are ignored with a
logged warning and shown by `tokens list`; `tokens add` still refuses them when asked for. A
reviewer reviewing a namespace it does not read stays refused (dropping its reviews would widen
it to all it reads), but `tokens remove` of that entry works and the error says so.
"""

from __future__ import annotations

import json
import logging
import os

import pytest
from typer.testing import CliRunner

from skillbank.cli import app
from skillbank.mcp_server.identity import TokensFile, TokensFileError, hash_token


def _write(path, *entries: str) -> None:
    path.write_text("\n".join(entries))
    os.chmod(path, 0o600)


def _entry(name: str, role: str, extra: str = "") -> str:
    return (f'[principals.{name}]\nsha256 = "{hash_token("sbk_" + name)}"\n'
            f'namespace = "{name}"\nrole = "{role}"\n{extra}\n')


def _cli(*words: str):
    return CliRunner().invoke(app, ["tokens", *words])


def test_a_contributor_s_old_reviews_are_ignored_not_refusing_the_file(cli_root, tmp_path,
                                                                      caplog):
    path = tmp_path / "tokens.toml"
    _write(path, _entry("ops", "admin"),
           _entry("bob", "contributor", 'reads = ["team"]\nreviews = ["team"]'),
           _entry("rita", "reader", 'reviews = ["team"]'))
    with caplog.at_level(logging.WARNING, logger="skillbank.mcp"):
        tokens = TokensFile(path)  # start-up: refused whole before
    assert "principal 'bob'" in caplog.text and "ignored" in caplog.text
    bob = tokens.lookup("sbk_bob")
    assert bob is not None and tokens.lookup("sbk_ops") is not None
    assert bob.scope().reviewable == () and not bob.scope().can_review("team")
    assert tokens.lookup("sbk_rita").scope().reviewable == ()

    listed = CliRunner().invoke(app, ["--json", "tokens", "list", "--file", str(path)])
    assert listed.exit_code == 0, listed.stderr
    rows = {r["name"]: r for r in json.loads(listed.stdout)}
    assert rows["bob"]["reviews"] == [] and rows["bob"]["ignored_reviews"] == ["team"]
    shown = _cli("list", "--file", str(path))
    assert shown.exit_code == 0 and "ignored" in shown.stdout, shown.stdout + shown.stderr

    # Asked for now, still refused; a rewrite of the file drops the ignored line.
    low = _cli("add", "con", "--namespace", "con", "--reads", "team", "--reviews", "team",
               "--file", str(path))
    assert low.exit_code == 2 and "reviews nothing" in low.stderr, low.stderr
    removed = _cli("remove", "rita", "--file", str(path))
    assert removed.exit_code == 0, removed.stderr
    assert "reviews" not in path.read_text()


def test_a_reviewer_of_an_unread_namespace_stays_refused_but_can_be_removed(cli_root,
                                                                           tmp_path):
    path = tmp_path / "tokens.toml"
    _write(path, _entry("ops", "admin"), _entry("rev", "reviewer", 'reviews = ["bob"]'))
    with pytest.raises(TokensFileError) as err:
        TokensFile(path)
    assert "principal 'rev'" in str(err.value) and "does not read 'bob'" in str(err.value)
    assert "skillbank tokens remove rev" in str(err.value)  # how to fix it with the CLI
    listed = _cli("list", "--file", str(path))
    assert listed.exit_code == 2 and "tokens remove rev" in listed.stderr, listed.stderr

    # Removing another principal while rev's entry is refused: refused (servers keep the last
    # good file, so the removed one would still get in); removing rev works.
    other = _cli("remove", "ops", "--file", str(path))
    assert other.exit_code == 2 and "principal 'rev'" in other.stderr, other.stderr
    assert "principals.ops" in path.read_text()
    removed = _cli("remove", "rev", "--file", str(path))
    assert removed.exit_code == 0, removed.stderr
    tokens = TokensFile(path)
    assert tokens.lookup("sbk_rev") is None and tokens.lookup("sbk_ops") is not None
    added = _cli("add", "rev", "--namespace", "rev", "--role", "reviewer", "--reads", "bob",
                 "--reviews", "bob", "--file", str(path))
    assert added.exit_code == 0, added.stderr
