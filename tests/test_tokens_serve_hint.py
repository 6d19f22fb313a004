"""`skillbank --root R tokens add ...` tells how to serve the tokens it wrote (hunt-docs #3,
session 38): the printed command dropped `--root R`, so copied as printed it served
`~/.skillbank` with R's tokens and the team's memory landed in the wrong root."""

from __future__ import annotations

import shlex

from typer.testing import CliRunner

from skillbank.cli import app


def test_the_serve_hint_names_the_root_the_tokens_are_for(cli_root, tmp_path):
    root = tmp_path / "team root"
    added = CliRunner().invoke(app, ["--root", str(root), "tokens", "add", "alice",
                                     "--namespace", "alice", "--role", "contributor"],
                              env={"COLUMNS": "1000"})  # the hint on one line, paths whole
    assert added.exit_code == 0, added.stderr
    hint = " ".join(added.stderr.split()).split("Serve with: ", 1)[1]
    argv = shlex.split(hint)
    assert argv[:2] == ["skillbank", "serve"], hint
    assert argv[argv.index("--root") + 1] == str(root), hint
    assert argv[argv.index("--tokens") + 1] == str(root / "tokens.toml"), hint
