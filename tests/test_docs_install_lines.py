"""No page tells a user to install skillbank from a package index: it is published on none.

Users met this: docs/mcp.md's first command, `pip install skillbank`, fails with "No matching
distribution found for skillbank" (the same page says, further down, that skillbank is not
published on one), and it invites installing whatever a third party may later publish under
that name (hunt-docs #2, session 23). The same held for the `[team]`, `[scan]`, `[langchain]`
and `[llamaindex]` extras. Every `pip install` of skillbank the docs show names a checkout.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")),
         *sorted((REPO / "examples").glob("*.md")),
         # what the code tells users too: the adapters' docstrings said `pip install
         # skillbank[langchain]`, the memory browser `pip install 'skillbank[scan]'`
         # (hunt-wheel #2, session 38)
         *sorted(path for folder in ("skillbank", "adapters", "mcp_server", "benchmarks")
                 for pattern in ("*.py", "*.html") for path in (REPO / folder).rglob(pattern)
                 if not path.is_relative_to(REPO / "skillbank" / "adapters")
                 and not path.is_relative_to(REPO / "skillbank" / "mcp_server"))]
#: `pip install` (options allowed before it), then `skillbank` as a requirement name: from an
#: index. A path (`-e .`, `/path/to/skillbank[team]`, `'.[scan]'`) is a checkout.
FROM_INDEX = re.compile(r"pip install\s+(?:-{1,2}[\w-]+\s+)*[\"']?skillbank\b(?![/\w-])")


def test_pip_installs_of_skillbank_name_a_checkout():
    found = [f"{page.relative_to(REPO)}:{number}: {line.strip()}"
             for page in PAGES
             for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
             if FROM_INDEX.search(line)]
    assert found == [], "skillbank is on no package index:\n" + "\n".join(found)


def test_the_pattern_tells_an_index_from_a_checkout():
    for line in ("pip install skillbank", "pip install 'skillbank[scan]'",
                 '/opt/x/bin/pip install "skillbank[team]"', "pip install -U skillbank"):
        assert FROM_INDEX.search(line), line
    for line in ("pip install -e /path/to/skillbank", "pip install -e '.[scan]'",
                 'pip install "/path/to/skillbank[team]"', "pip install skillbank-foo",
                 "pip install cisco-ai-skill-scanner"):
        assert not FROM_INDEX.search(line), line
