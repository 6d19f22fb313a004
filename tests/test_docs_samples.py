"""The python samples in README.md and docs/api.md run as written, so they cannot rot.

Each file's ```python blocks run in order in one namespace (the docs read as one session), in a
fresh subprocess with a temporary HOME, working folder and memory root: `~/.skillbank`,
`Skillbank.open()` and relative paths all land there. The embedding is the offline MiniLM model
(conftest sets SKILLBANK_MODEL_DIR); LangChain runs with the scripted model the README shows.
A block preceded by `<!-- no-test -->` is skipped: only for samples that need a network or an
API key, and there may be at most one per file.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = ["README.md", "docs/api.md"]
NO_TEST = "<!-- no-test -->"
FENCE = re.compile(r"^```(\w*)\s*$")

RUNNER = r"""
import json, sys, traceback
blocks = json.load(open(sys.argv[1]))
alone = len(sys.argv) > 2 and sys.argv[2] == "alone"
namespace = {"__name__": "__docs__"}
for block in blocks:
    if alone:  # each block in a namespace of its own: it must import what it uses
        namespace = {"__name__": "__docs__"}
    try:
        exec(compile(block["code"], f"{block['file']}:{block['line']}", "exec"), namespace)
    except BaseException:
        print(f"FAILED {block['file']}:{block['line']}", flush=True)
        traceback.print_exc()
        sys.exit(1)
    print(f"OK {block['file']}:{block['line']}", flush=True)
"""


def code_blocks(path: Path) -> list[dict]:
    """Fenced blocks: language, first code line number, code, and whether marked no-test."""
    blocks: list[dict] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        opened = FENCE.match(lines[i])
        if opened:
            before = next((l.strip() for l in reversed(lines[:i]) if l.strip()), "")
            start = i + 1
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                i += 1
            blocks.append({"lang": opened.group(1), "line": start + 1,
                           "code": "\n".join(lines[start:i]) + "\n",
                           "skip": before == NO_TEST, "file": str(path.relative_to(REPO))})
        i += 1
    return blocks


def clean_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SKILLBANK_") or k == "SKILLBANK_MODEL_DIR"}
    env.update(HOME=str(home), ANONYMIZED_TELEMETRY="False",
               # No network: a download or an API call fails fast instead of hanging.
               HTTPS_PROXY="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9",
               NO_PROXY="127.0.0.1,localhost")
    return env


@pytest.mark.slow
@pytest.mark.parametrize("doc", DOCS)
def test_python_samples_run_as_written(doc, tmp_path, model_dir):
    blocks = [b for b in code_blocks(REPO / doc) if b["lang"] == "python"]
    assert len(blocks) >= 2, f"{doc}: expected python samples"
    skipped = [b for b in blocks if b["skip"]]
    assert len(skipped) <= 1, f"{doc}: keep {NO_TEST} rare ({len(skipped)} blocks)"
    home = tmp_path / "home"
    work = tmp_path / "work"
    home.mkdir()
    work.mkdir()
    spec = tmp_path / "blocks.json"
    spec.write_text(json.dumps([b for b in blocks if not b["skip"]]))
    done = subprocess.run([sys.executable, "-c", RUNNER, str(spec)], cwd=work,
                          env=clean_env(home), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{doc}:\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
    ran = [l for l in done.stdout.splitlines() if l.startswith("OK ")]
    assert len(ran) == len(blocks) - len(skipped), done.stdout
    if doc == "README.md":
        # The quick start wrote where it says: the default root under the (temporary) home.
        assert (home / ".skillbank" / "skills" / "slide-deck" / "SKILL.md").is_file()


@pytest.mark.slow
def test_each_api_sample_runs_on_its_own(tmp_path, model_dir):
    """(#27) A reader copies one block, not the page: two blocks used `Skillbank` without
    importing it. Each block runs in a fresh namespace (the memory root on disk is shared, as
    it would be for that reader); an unclosed fence would swallow the rest of the page."""
    text = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
    assert all(re.match(r"^```\w*\s*$", line) for line in text.splitlines()
               if "```" in line and line.lstrip().startswith("```")), "a fence with text after it"
    assert text.count("\n```") % 2 == 0
    blocks = [b for b in code_blocks(REPO / "docs" / "api.md")
              if b["lang"] == "python" and not b["skip"]]
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    spec = tmp_path / "blocks.json"
    spec.write_text(json.dumps(blocks))
    done = subprocess.run([sys.executable, "-c", RUNNER, str(spec), "alone"], cwd=work,
                          env=clean_env(home), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-6000:]}"


def test_readme_starts_with_the_two_commands_that_set_everything_up():
    """The contract of the README's first lines: one command runs the demo, one the tests."""
    first = code_blocks(REPO / "README.md")[0]
    assert first["lang"] == "bash" and first["line"] <= 5
    commands = [l for l in first["code"].splitlines() if l.strip()]
    assert len(commands) == 2
    assert "pip install -e ." in commands[0] and commands[0].rstrip().endswith("skillbank demo")
    assert "pip install -e \".[dev]\"" in commands[1] and "pytest" in commands[1]


def test_markdown_blocks_are_found_with_their_no_test_marks(tmp_path, monkeypatch):
    sample = tmp_path / "sample.md"
    sample.write_text("# t\n\n```python\nx = 1\n```\n\n<!-- no-test -->\n```python\nnet()\n```\n"
                      "```bash\nls\n```\n")
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    blocks = code_blocks(sample)
    assert [(b["lang"], b["line"], b["skip"]) for b in blocks] == [
        ("python", 4, False), ("python", 9, True), ("bash", 12, False)]
    assert blocks[0]["code"] == "x = 1\n"
