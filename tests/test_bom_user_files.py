"""A UTF-8 BOM at the start of a file a person edits is no error (hunt session 20).

Windows editors and PowerShell's `Out-File` write one. Users met a trigger-eval file rejected
as "invalid JSON at line 1 column 1: Unexpected UTF-8 BOM" (exit 2); `skillbank.toml` (settings,
skill trust, remembered options) and the tokens file (TOML or JSON) failed the same way.
SKILL.md and guideline files already read one; they are checked here too.
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from conftest import write_skill
from skillbank.cli import app

BOM = b"\xef\xbb\xbf"


def test_a_trigger_eval_file_with_a_bom_is_read(cli_root, tmp_path, monkeypatch):
    folder = tmp_path / "skills"
    write_skill(folder, "pdf-tools", "Merge, split and rotate PDF files")
    write_skill(folder, "git-cleanup", "Delete stale local git branches after squash merges")
    (folder / "pdf-tools" / "evals").mkdir()
    (folder / "pdf-tools" / "evals" / "trigger_evals.json").write_bytes(BOM + json.dumps(
        [{"query": "merge these two PDF files into one", "should_trigger": True}]).encode())
    monkeypatch.setenv("SKILLBANK_SKILL_ROOTS", str(folder))
    result = CliRunner().invoke(app, ["--json", "skills", "eval", "pdf-tools"])
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert json.loads(result.stdout)["skills"][0]["total"] == 1


def test_skillbank_toml_with_a_bom(tmp_path):
    from skillbank.memories.skills.trust import read_config
    from skillbank.remember import _load
    from skillbank.settings import load_settings

    root = tmp_path / "root"
    root.mkdir()
    (root / "skillbank.toml").write_bytes(
        BOM + f'namespace = "team-a"\n\n[skill_trust]\n"{tmp_path}" = "team"\n'.encode())
    assert load_settings(root).namespace == "team-a"
    assert list(read_config(root)[0].values()) == ["team"]
    assert _load(root)["namespace"] == "team-a"


def test_a_tokens_file_with_a_bom(tmp_path):
    from mcp_server.identity import hash_token, parse_principals

    entry = {"sha256": hash_token("secret-token-1234567890"), "namespace": "alice",
             "role": "contributor"}
    toml = tmp_path / "tokens.toml"
    raw = BOM + ("[principals.alice]\n" + "".join(
        f'{k} = "{v}"\n' for k, v in entry.items())).encode()
    assert [p.name for p in parse_principals(toml, raw).values()] == ["alice"]
    as_json = tmp_path / "tokens.json"
    raw = BOM + json.dumps({"principals": {"alice": entry}}).encode()
    assert [p.name for p in parse_principals(as_json, raw).values()] == ["alice"]


def test_skill_md_and_guideline_files_with_a_bom(tmp_path):
    from skillbank.memories.guidelines.files import parse_guideline
    from skillbank.memories.skills.skill_file import read_skill_file

    path = write_skill(tmp_path, "pdf-tools", "Merge PDF files")
    path.write_bytes(BOM + path.read_bytes())
    doc, findings = read_skill_file(path)
    assert doc is not None and doc.name == "pdf-tools" and not findings
    text = ("\ufeff---\nid: gl-0123456789ab\ntopic: coding\nwhen_to_use: writing code\nstatus: active\n"
            "---\nAlways write tests first.\n")
    guideline, _ = parse_guideline(text, expected_id="gl-0123456789ab", expected_topic="coding")
    assert guideline is not None and guideline.text.startswith("Always write tests")


def test_the_oidc_config_with_a_bom(tmp_path):
    from skillbank.team.auth import load_oidc

    config = tmp_path / "auth.toml"
    config.write_bytes(BOM + b'[oidc]\nissuer = "https://id.example.com"\naudience = "skillbank"\n'
                       b'jwks_url = "https://id.example.com/jwks"\n')
    loaded = load_oidc(config, {})
    assert loaded is not None and loaded.issuer == "https://id.example.com"
