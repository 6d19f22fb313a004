"""`skillbank --namespace NS COMMAND` acts for NS alone, as README and docs/scope.md say ("The
faces resolve the scope for you: ... `--namespace` for the CLI, stdio server and browser"; "an
id outside a view is simply 'not found'"). It was only the bank's default namespace: bob's
`forget` erased alice's experience, `guidelines retire` retired her rule, `experiences show`
showed it, while `serve --namespace bob` answered "not found" (hunt-docs #5, session 23).

Through the real CLI (typer's runner, as tests/test_cli*.py), in process and as a client of
another process that owns the root (the scope then travels in each call's envelope).
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


def _json(*args: str) -> dict:
    code, out = _cli("--json", *args)
    assert code == 0, out
    return json.loads(out)


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_another_namespace_s_ids_are_not_found_and_change_nothing(cli_root, remote):
    cli_root.mkdir(parents=True, exist_ok=True)
    owner = owner_process(cli_root) if remote else contextlib.nullcontext()
    with owner:
        eid = _json("--namespace", "alice", "experiences", "record", "--task",
                    "Rotate the alice API keys", "--outcome", "success",
                    "--feedback", "Revoke the old keys only after every service reloads.")["id"]
        learnt = _json("--namespace", "alice", "guidelines", "learn",
                       "Always sign release commits with GPG.")
        gid = next(e["guideline_id"] for e in learnt["entries"] if e.get("guideline_id"))

        for command in (("experiences", "show", eid), ("guidelines", "show", gid),
                        ("guidelines", "vote", gid, "--harmful"),
                        ("guidelines", "retire", gid), ("forget", eid, "-y"),
                        ("forget", gid, "-y")):
            code, out = _cli("--namespace", "bob", *command)
            assert code == 3, (command, out)  # not found, as an id that does not exist
            assert "Rotate" not in out and "GPG" not in out, out  # no text of alice's
        assert _json("--namespace", "bob", "experiences", "list") == []
        assert _json("--namespace", "bob", "guidelines", "list") == []

        # Nothing changed: alice's memory is as she left it, and hers to change.
        rule = _json("--namespace", "alice", "guidelines", "show", gid)
        assert (rule["status"], rule["helpful"], rule["harmful"]) == ("active", 0, 0)
        assert _json("--namespace", "alice", "experiences", "show", eid)["id"] == eid
        assert _json("--namespace", "alice", "guidelines", "retire", gid)["status"] == "retired"
        code, out = _cli("--namespace", "alice", "forget", eid, "-y")
        assert code == 0 and "forgot" in out, out

        # bob's own writes land in bob's namespace; without --namespace the local user sees all.
        mine = _json("--namespace", "bob", "experiences", "record", "--task", "Tidy bob's desk",
                     "--outcome", "success")["id"]
        assert [e["id"] for e in _json("--namespace", "bob", "experiences", "list")] == [mine]
        assert _json("experiences", "show", mine)["namespace"] == "bob"
        assert _json("guidelines", "show", gid)["status"] == "retired"  # no scope: every one

        # The audit log too: bob's lists bob's events; alice's ids and principal are not his to
        # read (`audit --in alice` listed them: review of session 23).
        events = _json("--namespace", "bob", "audit")
        assert events and {e["namespace"] for e in events} == {"bob"}, events
        code, out = _cli("--namespace", "bob", "audit", "--in", "alice")
        assert code != 0 and eid not in out and "acts for that namespace alone" in out, out
        assert {e["namespace"] for e in _json("audit")} >= {"alice", "bob"}


def test_whole_root_commands_still_work_for_one_namespace(cli_root):
    """`reindex`, `stats` and `config` act on the whole root with --namespace as without it;
    `stats` counts the namespace's memory, as the stdio server's does."""
    cli_root.mkdir(parents=True, exist_ok=True)
    _json("--namespace", "alice", "experiences", "record", "--task", "Rotate keys",
          "--outcome", "success")
    rebuilt = _json("--namespace", "bob", "reindex")
    assert len(rebuilt["experiences"]["added"]) == 1  # every namespace's files, rebuilt
    assert _json("--namespace", "bob", "stats")["experiences"] == 0
    assert _json("--namespace", "alice", "stats")["experiences"] == 1
    assert _json("stats")["experiences"] == 1  # no --namespace: the local user's, as before
    code, out = _cli("--namespace", "bob", "config")
    assert code == 0 and "skill folders" in out, out


def test_a_scoped_cli_manages_its_own_namespace_s_tokens_alone(cli_root, tmp_path):
    """`skillbank --namespace bob tokens add ... --namespace alice` minted a token that writes
    alice's namespace, and `tokens remove alice` / `add alice --replace` revoked her principal,
    from a CLI that acts as bob's admin alone (last read of session 23). A file operation: no
    bank is opened, so there is no owner process to go through."""
    cli_root.mkdir(parents=True, exist_ok=True)
    tokens = tmp_path / "tokens.toml"
    assert _cli("tokens", "add", "alice", "--namespace", "alice", "--file", str(tokens))[0] == 0
    before = tokens.read_text()

    for refused in (("add", "mallory", "--namespace", "alice"),
                    ("add", "bob-reader", "--namespace", "bob", "--reads", "alice"),
                    ("add", "bob-reviewer", "--namespace", "bob", "--reviews", "alice"),
                    ("add", "alice", "--namespace", "bob", "--replace"),
                    ("remove", "alice")):
        code, out = _cli("--namespace", "bob", "tokens", *refused, "--file", str(tokens))
        assert code == 2, (refused, out)
        assert "acts for that namespace alone" in out and "'alice'" in out, out
    assert tokens.read_text() == before  # alice's token still works; nothing was added

    added = _json("--namespace", "bob", "tokens", "add", "bob", "--namespace", "bob",
                  "--file", str(tokens))
    assert added["namespace"] == "bob" and added["token"]
    assert [p["name"] for p in _json("--namespace", "bob", "tokens", "list",
                                     "--file", str(tokens))] == ["bob"]
    assert [p["name"] for p in _json("tokens", "list", "--file", str(tokens))] == ["alice", "bob"]
    assert _cli("--namespace", "bob", "tokens", "remove", "bob", "--file", str(tokens))[0] == 0
    assert _cli("--namespace", "alice", "tokens", "remove", "alice", "--file", str(tokens))[0] == 0
