"""#27 cold start: what the path to a server's first skill search imports and builds.

The MCP server's first `find_skills` (from the root's snapshot, `skillbank.snapshot_search`)
imports the skill library; everything that import does is CPU the client waits for, on top of
`import mcp.server`. These checks run in a fresh interpreter (a module already imported by
another test would hide the import).
"""

from __future__ import annotations

import subprocess
import sys

import pytest


def fresh(code: str) -> None:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_skill_library_imports_without_the_distillers():
    """Drafting a skill with a model needs `skillbank.distill`'s JSON reader (and with it the
    whole rule distiller, ~0.2 CPU-s); searching skills does not."""
    fresh("import sys\n"
          "import skillbank.snapshot_search, skillbank.memories.skills.library\n"
          "loaded = sorted(m for m in sys.modules if m.startswith('skillbank.distill'))\n"
          "assert not loaded, loaded\n")


def test_the_skill_library_imports_without_yaml_until_a_skill_file_is_parsed():
    """A server whose skill files are unchanged since its snapshot parses none before its first
    answer; PyYAML (~15-20 ms) loads on the first parse or render, which still work."""
    fresh("import sys\n"
          "import skillbank.snapshot_search, skillbank.memories.skills.library\n"
          "assert 'yaml' not in sys.modules\n"
          "from skillbank.memories.skills.skill_file import parse_skill_text, render_skill\n"
          "doc, findings = parse_skill_text('---\\nname: a\\ndescription: \"b\\\\u2028c\"\\n---\\nbody')\n"
          "assert doc is not None and 'yaml' in sys.modules, findings\n"
          "again, _ = parse_skill_text(render_skill(doc))\n"
          "assert again.frontmatter == doc.frontmatter, (again.frontmatter, doc.frontmatter)\n")


def test_records_build_their_schemas_when_first_used_not_at_import():
    fresh("from skillbank import records\n"
          "from pydantic import BaseModel\n"
          "models = [v for v in vars(records).values() if isinstance(v, type)\n"
          "          and issubclass(v, BaseModel) and v.__module__ == records.__name__]\n"
          "assert len(models) >= 17, models\n"
          "built = [m.__name__ for m in models if m.__pydantic_complete__]\n"
          "assert not built, built\n"
          "skill = records.Skill(name='a', description='b')\n"
          "assert records.Skill.__pydantic_complete__ and skill.usage.uses == 0\n"
          "assert 'name' in records.Skill.model_json_schema()['properties']\n")


@pytest.mark.parametrize("bad", [{"name": 1, "description": "b"}, {"description": "b"}])
def test_a_deferred_record_still_refuses_bad_input(bad):
    from pydantic import ValidationError

    from skillbank.records import Skill

    with pytest.raises(ValidationError):
        Skill(**bad)
