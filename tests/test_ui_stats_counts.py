"""The Stats page shows `bank.stats()`'s counts (as `skillbank stats`) and names what its
pictures leave out.

hunt-ui #7 (session 37): on a root with a held third-party skill and a pending untrusted
record, `skillbank stats` said "skills 2, experiences 3" and the page "skills 1, experiences
and lessons 2", with nothing saying why.
"""

from __future__ import annotations

import re

from test_ui_security import client


def _fact(page: str, label: str) -> str:
    found = re.search(rf"<span>{label}</span><strong>(\d+)</strong>(?:<small>(.*?)</small>)?",
                      page)
    assert found, page[:3000]
    return " ".join(g for g in found.groups() if g)


def test_stats_page_counts_match_bank_stats_and_say_what_is_left_out(tmp_path):
    """Fails before: "1" and "2" (the served and active counts, unlabelled)."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    vendor = tmp_path / "tp" / "vendor-skill"
    vendor.mkdir(parents=True)
    (vendor / "SKILL.md").write_text("---\nname: vendor-skill\ndescription: A vendor skill.\n"
                                     "---\n# x\n")
    root = tmp_path / "root"
    root.mkdir()
    (root / "skillbank.toml").write_text('[skill_policy.third-party]\nunscanned = "hold"\n')
    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                        skill_roots=[str(tmp_path / "tp")], sync=False) as bank:
        bank.skills.create("mine", "My skill.", "# mine\n")
        bank.experiences.record(task="Deploy A", outcome="success")
        bank.experiences.record(task="Deploy B", outcome="failure")
        bank.experiences.record(task="Deploy C (untrusted)", outcome="success", trusted=False)
        counts = bank.stats()
        c, _ = client(bank)
        page = c.get("/stats").text
        skills = _fact(page, "skills")
        experiences = _fact(page, "experiences and lessons")
        assert skills.split()[0] == str(counts["skills"]) == "2", skills
        assert "1 served, 1 held for review" in skills
        assert experiences.split()[0] == str(counts["experiences"]), experiences
        assert experiences == f"{counts['experiences']} 2 active, 1 pending review", experiences
