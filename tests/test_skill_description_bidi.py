"""A skill description with bidirectional override or isolate controls is refused, as one with
C0 control characters is (hunt-mcphttp #4b, session 36): "safe \u202egnp.exe" was accepted and
served, and displays as "safe exe.png" while it says something else."""

from __future__ import annotations

import pytest

from skillbank.errors import InvalidInputError
from skillbank.memories.skills.skill_file import parse_skill_text, validate_skill

SPOOFS = ["safe \u202egnp.exe", "Deploy \u2066the app\u2069 safely", "a\u202ab", "x\u2067y",
          "Use \u202dthis\u202c when needed"]


@pytest.mark.parametrize("description", SPOOFS)
def test_a_bidi_control_in_a_description_is_an_error(description):
    doc, _ = parse_skill_text(f'---\nname: my-skill\ndescription: "{description}"\n---\nBody\n')
    assert doc is not None and doc.frontmatter["description"] == description
    errors = [f for f in validate_skill(doc) if f.severity == "error"]
    assert [f.code for f in errors] == ["description-control"]
    assert "bidirectional control character (U+" in errors[0].message


def test_save_and_update_refuse_it_and_right_to_left_text_still_passes(hash_bank):
    with pytest.raises(InvalidInputError, match=r"bidirectional control character \(U\+202E\)"):
        hash_bank.skills.save("spoof", SPOOFS[0], "# Steps\n\nDo it.\n")
    assert "spoof" not in hash_bank.skills
    # Right-to-left scripts need no override; the marks (U+200F) are not controls of this kind.
    rtl = "\u05e4\u05e8\u05d9\u05e1\u05d4 \u05e9\u05dc \u05d4\u05d0\u05e4\u05dc\u05d9\u05e7\u05e6\u05d9\u05d4\u200f"
    hash_bank.skills.save("rtl", rtl, "# Steps\n\nDo it.\n")
    assert hash_bank.skills.load("rtl").description == rtl
    with pytest.raises(InvalidInputError, match="bidirectional"):
        hash_bank.skills.update("rtl", description="Deploy \u2066the app\u2069 safely")
    assert hash_bank.skills.load("rtl").description == rtl


def test_a_model_drafted_description_with_one_falls_back_to_the_rules():
    import json

    from skillbank.memories.skills.drafting import DraftMaterial, LLMDrafter

    material = DraftMaterial(sources=["e1", "e2"], tasks=["Import CSV exports into Postgres"],
                             when_to_use=["importing CSV data"],
                             steps=[("Detect the encoding.", 2)], pitfalls=[], checks=[],
                             successes=2, failures=0, keywords=["csv"])
    reply = json.dumps({"description": SPOOFS[0], "steps": ["Copy rows."], "pitfalls": [],
                        "checks": []})
    draft = LLMDrafter(lambda prompt: reply).write(material)
    assert draft.drafted_by == "rules" and draft.fallback_reason == \
        "no usable description in the reply"
    assert "\u202e" not in draft.description
