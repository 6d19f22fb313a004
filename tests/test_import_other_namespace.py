"""`experiences import` of an export's lines for a namespace the root does not write says so.

hunt-skillteam #3, session 32: an experience exported from a personal root (namespace
'default') and imported with `skillbank --namespace team experiences import FILE` was refused
as "2 lines of FILE are not experiences written by `skillbank experiences export`": they were,
and were skipped for their namespace (docs/scope.md: "a line for another namespace is skipped
and named"). Now the finding is `other-namespace` and the CLI says the lines were skipped for
their namespace and points to `skillbank migrate --namespace`. Through the real CLI, in process
and as a client of an owner process.
"""

from __future__ import annotations

import contextlib
import json

import pytest
from typer.testing import CliRunner

from owner_client import owner_process
from skillbank.cli import app


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["--no-bundled", *args])
    return result.exit_code, result.output


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_lines_for_another_namespace_are_named_as_such(cli_root, tmp_path, remote):
    cli_root.mkdir(parents=True, exist_ok=True)
    exported = tmp_path / "exp.jsonl"
    owner = owner_process(cli_root) if remote else contextlib.nullcontext()
    with owner:
        code, out = _cli("experiences", "record", "--task", "Restart the flaky CI runner",
                         "--outcome", "failure", "--feedback", "Drain the jobs first.")
        assert code == 0, out
        code, out = _cli("experiences", "export", str(exported))
        assert code == 0, out
        code, out = _cli("--namespace", "team", "experiences", "import", str(exported))
        assert code == 2, out
        flat = " ".join(out.split())
        assert "not experiences written by" not in flat, out
        assert "skipped for their namespace" in flat and "skillbank migrate" in flat, out
        assert "'team'" in flat and "'default'" in flat, out
        code, out = _cli("--json", "--namespace", "team", "experiences", "import",
                         str(exported))
        findings = json.JSONDecoder().raw_decode(out)[0]["result"]["findings"]
        assert {f["code"] for f in findings} == {"other-namespace"}, findings
