"""The examples run as scripts, offline, and show memory changing what the agent does.

Each script is run as ``__main__`` (runpy) in this process, which has the frameworks imported
already; that keeps the test fast while exercising exactly what `python examples/…` runs.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = {"langchain": REPO / "examples" / "langchain_agent.py",
            "llamaindex": REPO / "examples" / "llamaindex_agent.py"}


def run_script(script: Path, *args: str) -> int:
    argv = sys.argv
    sys.argv = [str(script), *args]
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as exit_:
        return int(exit_.code or 0)
    finally:
        sys.argv = argv
    return 0


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_example_runs_and_memory_changes_the_answer(name, tmp_path, model_dir, monkeypatch, capsys):
    pytest.importorskip("langchain.agents" if name == "langchain" else "llama_index.core")
    monkeypatch.setenv("SKILLBANK_MODEL_DIR", str(model_dir))
    monkeypatch.delenv("SKILLBANK_EXAMPLE_MODEL", raising=False)
    monkeypatch.delenv("SKILLBANK_EXAMPLE_LLM", raising=False)
    root = tmp_path / "memory"

    assert run_script(EXAMPLES[name], "--fake", "--root", str(root)) == 0
    out = capsys.readouterr().out

    first, second = out.split("User: My order 5678 is late. Where is it?")
    # Run 1: an empty memory adds nothing to the prompt; the model answered plainly.
    assert "<skillbank-memory>" not in first
    assert "Agent: Order 1234 is shipped" in first and "Track it here" not in first
    # The critique became guidelines.
    assert "learned (added): Always include the tracking link." in first
    # Run 2: the guideline and the first run's experience were in the prompt, and were followed.
    assert "## Guidelines learned from feedback" in second and "tracking link" in second
    assert "## Past experiences" in second and "Where is my order 1234?" in second
    assert "Agent: Sorry for the wait! Order 5678 is delayed" in second
    assert "Track it here: https://example.com/track/5678" in second
    assert "Recorded experiences: exp-" in second
    # The memory is on disk where the example was told to keep it.
    assert any((root / "experiences").glob("*.jsonl"))


def test_readme_shows_the_lines_that_differ():
    readme = (REPO / "examples" / "README.md").read_text()
    for script in EXAMPLES.values():
        marked = [line.split("#")[0].strip() for line in script.read_text().splitlines()
                  if "# + skillbank" in line]
        assert marked, script
        for line in marked:
            if line.startswith(("from ", "import ")):
                assert line in readme, line
