"""`skillbank demo` with the real embedding model: the tour runs offline and says what it should."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MODEL_DIR = REPO.parent / "shared" / "models" / "all-MiniLM-L6-v2"


@pytest.mark.slow
def test_demo_runs_offline_with_minilm(tmp_path):
    if not (MODEL_DIR / "onnx" / "model.onnx").is_file():
        pytest.skip("the offline MiniLM model is not at ../shared/models")
    script = Path(sys.executable).parent / "skillbank"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "skillbank.cli"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLBANK_")}
    env.update(SKILLBANK_MODEL_DIR=str(MODEL_DIR), ANONYMIZED_TELEMETRY="False", COLUMNS="120",
               SKILLBANK_ROOT=str(tmp_path / "must-not-be-used"),
               # No network: a download attempt would fail fast instead of hanging.
               HTTPS_PROXY="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9")
    started = time.perf_counter()
    done = subprocess.run([*command, "demo"], capture_output=True, text=True, env=env,
                          timeout=180, cwd=tmp_path)
    seconds = time.perf_counter() - started
    out = done.stdout
    assert done.returncode == 0, done.stderr[-3000:]
    print(f"\ndemo: {seconds:.1f} s")  # a figure, not a bound: speed is measured in benchmarks/

    # Sections, in order.
    titles = ["Skill library", "Catalog", "Routing", "Loaded skill", "Critiques become guidelines",
              "A later task gets them back", "Experience: a failure is remembered",
              "The memory block for a task"]
    positions = [out.find(t) for t in titles]
    assert all(p >= 0 for p in positions) and positions == sorted(positions), positions

    assert "skillbank-minilm-l6-v2" in out  # the real model, not the hash stand-in
    assert "Hybrid search (dense + keyword)" in out and "Keyword search only" not in out
    assert re.search(r"synced \d+ skills", out)
    # Routing: bundled skills are found for fitting tasks, and an off-topic task gets none.
    assert "review-a-skill" in out and "prune-memory" in out
    assert "none fits" in out
    assert "scripts/check_skill.py" in out  # the loaded skill's resources
    # The learning loop: every kind of outcome appears.
    for action in ("added", "merged", "ignored", "superseded"):
        assert re.search(rf"│\s*\d+\s*│\s*{action}\s", out), action
    # (#27) the merge detail is for a person (no stemmer output such as 'one-lin'), and the
    # catalog shows every bundled skill.
    assert "'one-lin'" not in out and "the same rule as gl-" in out
    assert re.search(r"\b7 entries", out) and "omitted to fit" not in out
    assert "Great job, this is perfect!" in out
    assert "American spelling" in out.split("A later task gets them back")[1]
    later = out.split("A later task gets them back")[1].split("Experience:")[0]
    assert "British" not in later  # superseded rules are not served
    recalled = out.split("Experience: a failure is remembered")[1].split("The memory block")[0]
    assert "Back up the database" in recalled
    # The lesson shown was distilled by the rule distiller in this run, not written by hand, and
    # it is what the related task recalls.
    from skillbank.demo import FAILURE

    assert "lessons" not in FAILURE
    distilled = re.search(r"distilled (\d+) lessons? with RuleDistiller \(no model\):\n"
                          r"\s+(lsn-[0-9a-f]{12}) \[", recalled)
    assert distilled and int(distilled.group(1)) >= 1, recalled
    assert recalled.count(distilled.group(2)) >= 2  # shown when distilled, and recalled
    # The loaded skill's body is printed verbatim: indentation kept, lines never re-wrapped.
    body = (REPO / "skills" / "review-a-skill" / "SKILL.md").read_text().split("\n---\n", 1)[1]
    lines = set(out.splitlines())
    for line in body.strip().splitlines()[:14]:
        assert line.rstrip() in lines, line
    block = out.split("The memory block for a task")[1]
    assert "<skillbank-memory>" in block and "</skillbank-memory>" in block
    tokens = re.search(r"(\d+)/600 tokens", block)
    assert tokens and int(tokens.group(1)) <= 600
    assert "temporary root, now removed" in out
    assert not (tmp_path / "must-not-be-used").exists()
    # Each section fits on a screen.
    chunks = re.split(r"\n\d\. [^\n]*─{3,}\n", out)[1:]
    assert len(chunks) == len(titles)
    for title, chunk in zip(titles, chunks):
        assert chunk.count("\n") <= 45, (title, chunk.count("\n"))


def test_demo_without_the_model_says_its_routing_is_keyword_only(cli_root, tmp_path, monkeypatch):
    """README's first command run where ../shared does not exist (any clone outside /work):
    no model, no download; the routing table was headed "Hybrid search (dense + keyword)" while
    it ranked by keyword alone and left half the answerable tasks unrouted (hunt-docs #1,
    session 23). It now says so, on the page and in --json's summary."""
    import json

    from typer.testing import CliRunner

    from skillbank.cli import app

    monkeypatch.delenv("SKILLBANK_EMBEDDING")  # the bundled MiniLM, as the README runs it
    monkeypatch.setenv("SKILLBANK_MODEL_DIR", str(tmp_path / "no-model-here"))
    done = CliRunner().invoke(app, ["demo"])
    assert done.exit_code == 0, done.output
    routing = done.stdout.split("Routing")[1].split("Loaded skill")[0]
    assert "Keyword search only (no embedding model" in " ".join(routing.split()), routing
    assert "Hybrid" not in done.stdout
    summary = json.loads(CliRunner().invoke(app, ["--json", "demo"]).stdout)
    assert summary["search"] == "keyword"
