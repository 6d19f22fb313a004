"""Skills that break the Agent Skills spec are shown as such (#27): sync counts them apart
from warnings, and they are served under a valid id (`skill:Neon%20Automation`, the name
percent-encoded as in MCP skill URIs), which rate/forget take back."""

from __future__ import annotations

import json
import re

from conftest import write_skill
from test_cli import Run

VALID_ID = re.compile(r"^(skill:[A-Za-z0-9._~%-]+|gl-[0-9a-f]+|exp-[0-9a-f]+|lsn-[0-9a-f]+)$")


def test_a_skill_with_an_invalid_name_is_reported_and_served_under_a_valid_id(cli_root, tmp_path):
    run = Run()
    library = tmp_path / "library"
    folder = library / "Neon Automation"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: Neon Automation\ndescription: Automate the "
                                     "neon sign controller\n---\n# Steps\n\nDo it.\n")
    write_skill(library, "good-one", "Polish the neon sign glass", extra="color: blue\n")
    base = ["--no-bundled", "--skills-dir", library]
    synced = run(*base, "skills", "sync")
    report = " ".join(synced.stdout.split())
    assert "1 skills break the Agent Skills spec" in report and "Neon Automation" in report
    assert "1 warnings" in report  # the unknown key of good-one: only a warning
    checked = run(*base, "skills", "validate", library, code=2)
    assert "Neon Automation" in checked.stdout and "1 invalid" in " ".join(checked.stdout.split())

    memory = json.loads(run(*base, "--json", "context", "automate the neon sign controller").stdout)
    assert memory["ids"] and all(VALID_ID.match(i) for i in memory["ids"]), memory["ids"]
    assert "skill:Neon%20Automation" in memory["ids"]

    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    with Skillbank.open(cli_root, embedding_function=HashEmbedding(), include_bundled=False,
                        skill_roots=[str(library)]) as bank:
        assert bank.rate("skill:Neon%20Automation", helpful=True)["kind"] == "skill"
        assert bank.skills.load("Neon Automation").usage.uses >= 1


def test_the_memory_browser_marks_and_lists_skills_that_break_the_spec(tmp_path):
    """The library marks a served-but-invalid skill, and ?invalid=1 lists only such skills."""
    from starlette.testclient import TestClient

    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding
    from skillbank.ui import Guard, create_app

    library = tmp_path / "library"
    folder = library / "Neon Automation"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: Neon Automation\ndescription: Automate the "
                                     "neon sign controller\n---\n# Steps\n\nDo it.\n")
    write_skill(library, "good-one", "Polish the neon sign glass")
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        skill_roots=[str(library)]) as bank:
        base = "http://127.0.0.1:8766"
        c = TestClient(create_app(bank, Guard()), base_url=base)
        page = c.get("/skills").text
        row_bad = page[page.index("Neon Automation"):].split("</tr>")[0]
        row_good = page[page.index("good-one"):].split("</tr>")[0]
        assert "breaks the spec" in row_bad and "breaks the spec" not in row_good
        only = c.get("/skills?invalid=1").text
        assert "Neon Automation" in only and "good-one" not in only
        assert "may only contain a-z, 0-9" in only  # the reason, as skills validate says it
