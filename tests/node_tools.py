"""Where the npm tools the front-door tests drive live: `.ci/node` (filled by
`.ci/install-node-tools`, which `.ci/run` calls), else PATH. No network at test time: a tool
that is not installed skips only when npm itself is absent (nothing could have installed it);
with npm present, a missing tool is a failure of the CI setup and says how to install it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

PREFIX = Path(__file__).resolve().parent.parent / ".ci" / "node"


def tool(name: str) -> str:
    """The path of an npm-installed command (`mcp-inspector`, `claude`), or skip/fail."""
    local = PREFIX / "node_modules" / ".bin" / name
    if local.exists():
        return str(local)
    found = shutil.which(name)
    if found:
        return found
    if shutil.which("npm") is None:
        pytest.skip(f"npm is not installed, so {name} cannot be")
    pytest.fail(f"{name} is not installed: run `bash .ci/install-node-tools` (npm installs it "
                "into .ci/node)")
