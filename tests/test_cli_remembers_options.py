"""What a memory root remembers besides its skill folders (#27): `--no-bundled` is kept like
`--skills-dir` (shown by `stats` and `config`, changed only by `skillbank config bundled on|off`,
which says what it re-indexes, and honoured by the MCP server); `--no-remember` makes a
command's folders a one-off; two commands changing `skillbank.toml` at once both land; and a
root held unshared gets advice that names no file that is not there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import write_skill
from test_cli import Run
from test_cli_owner import holding_root


@pytest.fixture
def run(cli_root) -> Run:
    return Run()


def stats(run: Run, *args: str) -> dict:
    return json.loads(run(*args, "--json", "stats").stdout)


def test_no_bundled_is_remembered_shown_and_changed_explicitly(run, cli_root, tmp_path):
    folder = tmp_path / "library"
    write_skill(folder, "pdf-merge", "Merge PDF files into one document")
    first = stats(run, "--skills-dir", folder, "--no-bundled")
    assert first["skills"] == 1
    assert "include_bundled = false" in (cli_root / "skillbank.toml").read_text()

    later = stats(run)  # no flag: the root remembers, nothing is indexed again
    assert later["skills"] == 1 and later["bundled_skills"].startswith("left out (remembered")
    shown = json.loads(run("--json", "config").stdout)
    assert shown["include_bundled"] is False
    assert "bundled skills" in run("config").stdout

    on = run("config", "bundled", "on")
    assert "Serving the" in on.stderr and "are indexed now" in on.stderr
    served = stats(run)
    assert served["skills"] > 1 and served["bundled_skills"].startswith("served")
    off = run("config", "bundled", "off")
    assert "leave the index now" in off.stderr
    assert stats(run)["skills"] == 1


def test_the_mcp_server_serves_what_the_root_remembers_of_the_bundled_skills(tmp_path):
    from skillbank import remember
    from skillbank.mcp_server.loader import _bundled
    from skillbank.mcp_server.options import ServeOptions

    root = tmp_path / "root"
    assert _bundled(ServeOptions(root=str(root))) is True
    remember.set_bundled(root, False)
    assert _bundled(ServeOptions(root=str(root))) is False
    assert _bundled(ServeOptions(root=str(root), include_bundled=False)) is False


def test_no_remember_uses_a_folder_for_one_command_only(run, cli_root, tmp_path):
    kept, once = tmp_path / "kept", tmp_path / "once"
    write_skill(kept, "pdf-merge", "Merge PDF files into one document")
    write_skill(once, "csv-clean", "Clean a CSV file")
    usual = stats(run, "--skills-dir", kept)["skills"]
    one_off = stats(run, "--no-remember", "--skills-dir", once)
    assert one_off["skills"] == usual + 1
    assert one_off["remembered_skill_roots"] == [str(kept.resolve())]
    assert str(once.resolve()) not in (cli_root / "skillbank.toml").read_text()
    assert stats(run)["skills"] == usual  # the next command without it: the one-off is gone
    alone = stats(run, "--no-remember", "--no-bundled")
    assert alone["skills"] == 1 and alone["bundled_skills"].startswith("left out for this command")
    assert "include_bundled" not in (cli_root / "skillbank.toml").read_text()
    assert stats(run)["skills"] == usual


WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from skillbank import remember
    root, me, go = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    while not go.exists():
        time.sleep(0.001)
    for i in range(40):
        folder = root.parent / f"{me}-{i}"
        folder.mkdir(exist_ok=True)
        remember.effective(root, [folder])
""")


def test_two_commands_adding_folders_at_once_both_land(tmp_path):
    """Before, each command read skillbank.toml, added its folder and wrote the file back:
    the last writer won and the other's folders were silently dropped."""
    from skillbank import remember

    root = tmp_path / "root"
    root.mkdir()
    go = tmp_path / "go"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLBANK_")}
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(root), name, str(go)],
                                env=env) for name in ("a", "b")]
    go.touch()
    for writer in writers:
        assert writer.wait(timeout=300) == 0
    recorded = {Path(p).name for p in remember.recorded(root) or []}
    assert recorded == {f"{n}-{i}" for n in ("a", "b") for i in range(40)}


def test_a_root_held_unshared_gets_advice_naming_no_missing_file(tmp_path):
    """A process that opened the root with share=False publishes no endpoint: the advice was
    to remove `<root>/.owner.json`, a file that is not there."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.errors import BusyError

    root = tmp_path / "root"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLBANK_")}
    with holding_root(root, env, share=False):
        with pytest.raises(BusyError) as caught:
            Skillbank.open(root, embedding_function=HashEmbedding(), lock_timeout=1.0)
    message = str(caught.value)
    assert not (root / ".owner.json").exists()
    assert ".owner.json" not in message, message
    assert "share=False" in message, message


def test_a_root_held_by_a_skillbank_from_before_sharing_is_named(tmp_path):
    """A skillbank from before 2026-12-02 took the owner lock and published nothing: an upgrade
    with such a process still running was told only of share=False and owners still starting
    (hunt-upgrade #4, session 23). Here the old process is what it did: the lock, held."""
    import subprocess
    import sys

    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.errors import BusyError

    root = tmp_path / "root"
    root.mkdir()
    old = subprocess.Popen(
        [sys.executable, "-c", "import sys\nfrom filelock import FileLock\n"
         "lock = FileLock(sys.argv[1]); lock.acquire()\nprint('ready', flush=True)\n"
         "sys.stdin.read()\n", str(root / ".owner.lock")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert old.stdout.readline().strip() == "ready"
        with pytest.raises(BusyError) as caught:
            Skillbank.open(root, embedding_function=HashEmbedding(), lock_timeout=1.0)
    finally:
        old.stdin.close()
        old.wait(60)
    assert "older than 2026-12-02" in str(caught.value), caught.value


@pytest.mark.parametrize("written", ['"false"', '"no"', "0"])
def test_include_bundled_that_is_not_a_boolean_is_refused(run, cli_root, written):
    """hunt-badinput #4, session 34: `include_bundled = "false"` (or "no", or 0) counted as not
    recorded, so the bundled skills were served without a word (exit 0). Now it is refused as
    other settings are (exit 2, naming the setting and the file), and `skillbank config bundled
    off` replaces it."""
    cli_root.mkdir(parents=True, exist_ok=True)
    (cli_root / "skillbank.toml").write_text(f"include_bundled = {written}\n")
    refused = run("skills", "list", code=2)
    said = " ".join(refused.stderr.split())
    assert "setting include_bundled" in said and "skillbank.toml" in said, said
    assert "must be true or false" in said, said
    run("config", "bundled", "off")
    assert "include_bundled = false" in (cli_root / "skillbank.toml").read_text()
    assert stats(run)["bundled_skills"].startswith("left out (remembered")


@pytest.mark.parametrize("choice", ["on", "off"])
def test_either_bundled_choice_replaces_a_value_that_is_not_a_boolean(run, cli_root, choice):
    """Review 2 #4, session 34: with `include_bundled = "false"`, every command refuses and
    names `skillbank config bundled on|off`, but `config bundled on` said "The bundled skills
    are already served; nothing to do.", exited 2 and left the file. Both choices replace it."""
    cli_root.mkdir(parents=True, exist_ok=True)
    (cli_root / "skillbank.toml").write_text('include_bundled = "false"\n')
    done = run("config", "bundled", choice)
    assert "nothing to do" not in done.stdout + done.stderr, done.stdout + done.stderr
    written = "true" if choice == "on" else "false"
    assert f"include_bundled = {written}" in (cli_root / "skillbank.toml").read_text()
    shown = stats(run)["bundled_skills"]
    assert shown.startswith("served" if choice == "on" else "left out"), shown
