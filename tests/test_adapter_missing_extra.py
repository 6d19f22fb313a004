"""An adapter imported without its extra names the extra to install (hunt-wheel #2, session 38).

A core-only install used to get a bare "No module named 'langchain_core'". A framework module
is made absent in a child process the way Python itself does it (None in sys.modules).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

CODE = r"""
import json, sys
for name in sys.argv[2:]:
    sys.modules[name] = None  # as if not installed
try:
    __import__(sys.argv[1])
    print(json.dumps({"error": None}))
except ImportError as exc:
    print(json.dumps({"error": type(exc).__name__, "message": str(exc), "name": exc.name,
                      "frameworks": sorted(m for m in sys.modules if m.split(".")[0] in
                                           ("langchain", "langchain_core", "langgraph", "llama_index")
                                           and sys.modules[m] is not None)}))
"""


def import_without(module: str, *absent: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CODE, module, *absent], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("module, extra, absent", [
    ("skillbank.adapters.langchain", "langchain", "langchain_core"),
    ("skillbank.adapters.langchain", "langchain", "langgraph"),
    ("skillbank.adapters.llamaindex", "llamaindex", "llama_index"),
])
def test_a_missing_framework_names_the_extra_and_the_module(module, extra, absent):
    result = import_without(module, absent)
    assert result["error"] == "ModuleNotFoundError"  # still what `except ModuleNotFoundError` expects
    assert f"'{extra}' extra" in result["message"] and absent in result["message"]
    assert f"pip install -e '.[{extra}]'" in result["message"]
    assert "no package index" in result["message"]
    assert result["name"].split(".")[0] == absent
    assert result["frameworks"] == []  # checked before any of the framework is imported


def test_the_adapters_import_when_the_extras_are_there():
    for module in ("skillbank.adapters.langchain", "skillbank.adapters.llamaindex"):
        assert import_without(module) == {"error": None}


def test_a_broken_framework_is_not_reported_as_a_missing_extra(tmp_path):
    """An installed framework whose own import fails (a dependency of it missing) was reported
    as "llama_index.core is not installed", the real missing module never named (review 2,
    session 38): its own error comes through."""
    import os

    fake = tmp_path / "llama_index"
    fake.mkdir()
    (fake / "__init__.py").write_text("import not_there_dependency_xyz\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])])}
    out = subprocess.run([sys.executable, "-c", CODE, "skillbank.adapters.llamaindex"],
                         capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["error"] == "ModuleNotFoundError"
    assert result["name"] == "not_there_dependency_xyz", result
    assert "extra" not in result["message"]
