"""Tests for the SKILL.md format module: lenient loading, strict validation, safe parsing, rendering."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillbank.memories.skills.skill_file import (
    MAX_SKILL_BYTES,
    SkillDocument,
    SkillFileError,
    load_or_raise,
    parse_skill_text,
    read_skill_file,
    render_skill,
    validate_name,
    validate_skill,
)

VALID = """---
name: pdf-tools
description: Extract text and tables from PDF files. Use when the user mentions PDFs.
license: Apache-2.0
compatibility: Requires python3 and poppler
metadata:
  author: example-org
  version: "1.0"
allowed-tools: Bash(pdftotext:*) Read
---
# PDF tools

Run `scripts/extract.py`.
"""


def codes(findings, severity=None):
    return {f.code for f in findings if severity is None or f.severity == severity}


def fm(**extra) -> str:
    """Frontmatter text with a valid name/description unless overridden."""
    data = {"name": "my-skill", "description": "Does a thing. Use when needed."} | extra
    lines = [f"{k}: {v}" for k, v in data.items() if v is not None]
    return "---\n" + "\n".join(lines) + "\n---\nBody\n"


def write_skill(tmp_path: Path, text: str | bytes, folder: str = "my-skill") -> Path:
    d = tmp_path / folder
    d.mkdir(parents=True, exist_ok=True)
    p = d / "SKILL.md"
    p.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return p


# ------------------------------------------------------------------------------------ valid files


def test_valid_file_loads_clean(tmp_path):
    doc, findings = read_skill_file(write_skill(tmp_path, VALID, "pdf-tools"))
    assert doc is not None and findings == []
    assert doc.name == "pdf-tools"
    assert doc.description.startswith("Extract text")
    assert doc.body == "# PDF tools\n\nRun `scripts/extract.py`.\n"
    assert list(doc.frontmatter) == [
        "name", "description", "license", "compatibility", "metadata", "allowed-tools"]
    assert validate_skill(doc) == []  # folder name remembered as fallback_name
    assert validate_skill(doc, folder_name="pdf-tools") == []


def test_body_after_closing_line_keeps_blank_lines_and_crlf():
    doc, _ = parse_skill_text("---\r\nname: a\r\ndescription: b\r\n---\r\n\r\nText\r\n")
    assert doc is not None
    assert doc.frontmatter == {"name": "a", "description": "b"}
    assert doc.body == "\r\nText\r\n"
    doc, _ = parse_skill_text("---\nname: a\ndescription: b\n---")
    assert doc is not None and doc.body == ""


def test_bom_is_accepted(tmp_path):
    doc, findings = read_skill_file(write_skill(tmp_path, "\ufeff" + fm()))
    assert doc is not None and findings == []
    doc, _ = parse_skill_text("\ufeff" + fm())
    assert doc is not None and doc.name == "my-skill"


def test_leading_blank_lines_warn():
    doc, findings = parse_skill_text("\n\n" + fm())
    assert doc is not None and codes(findings) == {"leading-blank-lines"}


# ------------------------------------------------------------------------------------------ names


@pytest.mark.parametrize(
    "name, expected",
    [
        ("a", set()),
        ("pdf-tools-2", set()),
        ("x" * 64, set()),
        ("x" * 65, {"name-length"}),
        ("", {"name-length"}),
        ("PDF-Tools", {"name-chars"}),
        ("pdf_tools", {"name-chars"}),
        ("pdf tools", {"name-chars"}),
        ("pdf\ttools", {"name-chars"}),
        ("café", {"name-chars"}),
        ("-pdf", {"name-hyphen"}),
        ("pdf-", {"name-hyphen"}),
        ("pdf--tools", {"name-hyphen"}),
        ("-Bad--", {"name-chars", "name-hyphen"}),
    ],
)
def test_validate_name(name, expected):
    findings = validate_name(name)
    assert codes(findings) == expected
    assert all(f.severity == "error" for f in findings)


@pytest.mark.parametrize(
    "name, code",
    [("Bad_Name", "name-chars"), ("x" * 65, "name-length"), ("-bad", "name-hyphen")],
)
def test_name_rules_warn_on_load_error_in_validate(name, code):
    doc, findings = parse_skill_text(fm(name=name), folder_name=name)
    assert doc is not None
    assert code in codes(findings, "warning") and not codes(findings, "error")
    assert code in codes(validate_skill(doc), "error")


def test_folder_mismatch_warns_on_load_errors_in_validate(tmp_path):
    doc, findings = read_skill_file(write_skill(tmp_path, fm(), folder="other-folder"))
    assert doc is not None
    assert codes(findings) == {"name-mismatch"}
    assert codes(findings, "error") == set()
    assert codes(validate_skill(doc), "error") == {"name-mismatch"}
    assert validate_skill(doc, folder_name="my-skill") == []


def test_missing_name_falls_back_to_folder(tmp_path):
    doc, findings = read_skill_file(write_skill(tmp_path, fm(name=None), folder="from-folder"))
    assert doc is not None
    assert doc.name == "from-folder" and "name" not in doc.frontmatter
    assert codes(findings) == {"missing-name"} and codes(findings, "error") == set()
    assert codes(validate_skill(doc), "error") == {"missing-name"}


def test_non_string_name_and_control_characters():
    doc, findings = parse_skill_text(fm(name="123"), folder_name="123")
    assert doc is not None and doc.name == "123"
    assert "name-type" in codes(validate_skill(doc), "error")
    doc, _ = parse_skill_text(fm(name='"bad\\x07name"', description='"has a \\x07 bell"'))
    assert doc is not None
    strict = codes(validate_skill(doc), "error")
    assert {"name-chars", "description-control"} <= strict


# ------------------------------------------------------------------------------------ description


def test_description_length():
    doc, findings = parse_skill_text(fm(description="x" * 1024))
    assert doc is not None and findings == []
    doc, findings = parse_skill_text(fm(description="x" * 1025))
    assert doc is not None and codes(findings, "warning") == {"description-length"}
    assert codes(validate_skill(doc), "error") == {"description-length"}


@pytest.mark.parametrize("value", [None, '""', "'   '", "null", "~"])
def test_missing_or_empty_description_is_a_load_error(value):
    text = fm(description=value)
    doc, findings = parse_skill_text(text, path="x/SKILL.md")
    assert doc is None
    assert "missing-description" in codes(findings, "error")
    assert findings[-1].path == "x/SKILL.md"


def test_non_string_description():
    doc, findings = parse_skill_text(fm(description="42"))
    assert doc is not None and "description-type" in codes(findings, "warning")
    assert "description-type" in codes(validate_skill(doc), "error")


@pytest.mark.parametrize("value", ["[a, b]", "{a: b}"])
def test_a_list_or_mapping_description_is_a_load_error(value):
    """hunt-corpus #7, session 30: a YAML-list description loaded (a warning) and was served as
    Python text, "['a', 'b']", to search, list and agents. Fails before: it loaded."""
    doc, findings = parse_skill_text(fm(description=value), path="x/SKILL.md")
    assert doc is None
    [finding] = [f for f in findings if f.code == "description-type"]
    assert finding.severity == "error" and "not served" in finding.message


# ------------------------------------------------------------------------------- optional fields


def test_compatibility():
    assert codes(validate_skill(parse_skill_text(fm(compatibility="x" * 500))[0])) == set()
    doc, findings = parse_skill_text(fm(compatibility="x" * 501))
    assert doc is not None and codes(findings) == {"compatibility-length"}
    assert codes(validate_skill(doc), "error") == {"compatibility-length"}
    doc, _ = parse_skill_text(fm(compatibility="[claude, codex]"))
    assert codes(validate_skill(doc), "error") == {"compatibility-type"}


@pytest.mark.parametrize("value", ["[a, b]", "just-a-string", "{version: 1.0}", "{1: x}", "{a: {b: c}}"])
def test_metadata_must_map_strings_to_strings(value):
    doc, findings = parse_skill_text(fm(metadata=value))
    assert doc is not None and codes(findings) == {"metadata-type"}
    assert codes(validate_skill(doc), "error") == {"metadata-type"}


def test_metadata_ok():
    doc, findings = parse_skill_text(fm(metadata='{author: me, version: "1.0"}'))
    assert doc is not None and findings == []


def test_allowed_tools_and_license():
    doc, findings = parse_skill_text(fm(**{"allowed-tools": "Read Write Bash(git:*)"}))
    assert findings == []
    doc, findings = parse_skill_text(fm(**{"allowed-tools": "[Read, Write]"}))
    assert doc is not None and codes(findings) == {"allowed-tools-type"}
    # a YAML list: not the spec's form, but the tool gate reads it (docs/api.md): a warning
    assert codes(validate_skill(doc), "warning") == {"allowed-tools-type"}
    assert codes(validate_skill(doc), "error") == set()
    doc, _ = parse_skill_text(fm(**{"allowed-tools": "{Read: yes}"}))
    assert codes(validate_skill(doc), "error") == {"allowed-tools-type"}
    doc, _ = parse_skill_text(fm(license="Proprietary. See LICENSE.txt"))
    assert validate_skill(doc) == []
    doc, _ = parse_skill_text(fm(license="[MIT]"))
    assert codes(validate_skill(doc), "error") == {"license-type"}


def test_unknown_keys_warn_and_are_kept():
    doc, findings = parse_skill_text(fm(version="2", triggers="[a, b]"))
    assert doc is not None
    assert doc.frontmatter["version"] == 2 and doc.frontmatter["triggers"] == ["a", "b"]
    assert [f.code for f in findings] == ["unknown-key", "unknown-key"]
    assert all(f.severity == "warning" for f in validate_skill(doc))


def test_duplicate_keys_warn():
    doc, findings = parse_skill_text("---\nname: a\ndescription: b\nname: c\n---\n")
    assert doc is not None and doc.name == "c" and "duplicate-key" in codes(findings, "warning")


# ------------------------------------------------------------------------------------ yaml errors


def test_colon_in_plain_value_is_repaired():
    text = "---\nname: my-skill\ndescription: Use when: you need X. Don't: panic\n---\nB\n"
    doc, findings = parse_skill_text(text)
    assert doc is not None
    assert doc.description == "Use when: you need X. Don't: panic"
    assert codes(findings) == {"yaml-repaired"}


def test_unparseable_yaml_names_the_file(tmp_path):
    p = write_skill(tmp_path, "---\nname: a\ndescription: [unclosed\n  b: c\n---\nB\n")
    doc, findings = read_skill_file(p)
    assert doc is None and codes(findings) == {"yaml"}
    assert str(p) in findings[0].message and findings[0].path == str(p)
    assert "line" in findings[0].message


@pytest.mark.parametrize("value", ["2024-13-45", "!!int abc", "!!timestamp 2024-01-01T25:00:00"])
def test_values_the_constructor_rejects_are_yaml_errors(value):
    doc, findings = parse_skill_text(fm(date=value))
    assert doc is None and codes(findings) == {"yaml"}


def test_repair_is_linear_on_pathological_lines():
    text = "---\ndescription: a: b" + " " * 60_000 + "c\nx: [\n---\n"
    start = time.perf_counter()
    doc, findings = parse_skill_text(text)
    assert time.perf_counter() - start < 1.0
    assert doc is None and codes(findings) == {"yaml"}


def test_frontmatter_not_a_mapping():
    doc, findings = parse_skill_text("---\n- a\n- b\n---\n")
    assert doc is None and codes(findings, "error") == {"frontmatter-type"}


@pytest.mark.parametrize(
    "text",
    ["# Title\n\nno frontmatter\n", "", "---\nname: a\ndescription: b\n", "name: a\n---\n"],
)
def test_no_frontmatter(text):
    doc, findings = parse_skill_text(text)
    assert doc is None and codes(findings) == {"no-frontmatter"}


def test_unsafe_tags_are_refused():
    doc, findings = parse_skill_text("---\ndescription: !!python/object/apply:os.system [ls]\n---\n")
    assert doc is None and codes(findings) == {"yaml"}


def test_frontmatter_size_is_capped():
    text = "---\ndescription: " + "x" * 70_000 + "\n---\n"
    doc, findings = parse_skill_text(text)
    assert doc is None and codes(findings) == {"frontmatter-too-large"}


BILLION_LAUGHS = (
    "---\nname: lol\ndescription: boom\n"
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]\n"
        for i in range(8)
    )
    + "---\n"
)


@pytest.mark.parametrize(
    "text",
    [
        BILLION_LAUGHS,
        # few aliases, but exponential once expanded (node cap)
        "---\ndescription: x\na: &a [1, 2, 3, 4, 5, 6, 7, 8]\n"
        + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, "
                  f"*{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(12))
        + "---\n",
        "---\ndescription: x\na: &a [*a]\n---\n",  # self-reference
        "---\ndescription: x\na: " + "[" * 30 + "]" * 30 + "\n---\n",  # deep
        "---\ndescription: x\na: " + "[" * 20_000 + "]" * 20_000 + "\n---\n",  # very deep
    ],
    ids=["billion-laughs", "node-cap", "recursive", "deep", "very-deep"],
)
def test_yaml_bombs_are_refused_quickly(text):
    start = time.perf_counter()
    doc, findings = parse_skill_text(text)
    assert time.perf_counter() - start < 1.0
    assert doc is None and codes(findings) == {"yaml-too-complex"}
    assert "refused" in findings[0].message


def test_python_loader_fallback_also_guards(monkeypatch):
    import yaml

    import skillbank.memories.skills.skill_file as sf

    monkeypatch.setattr(sf, "_loader", yaml.SafeLoader)  # pure Python, not libyaml's
    assert codes(parse_skill_text(BILLION_LAUGHS)[1]) == {"yaml-too-complex"}
    deep = "---\ndescription: x\na: " + "[" * 20_000 + "]" * 20_000 + "\n---\n"
    assert codes(parse_skill_text(deep)[1]) == {"yaml-too-complex"}
    doc, findings = parse_skill_text(VALID, folder_name="pdf-tools")
    assert doc is not None and findings == []


# ------------------------------------------------------------------------------------ file safety


def test_too_large_file(tmp_path):
    p = write_skill(tmp_path, fm().encode() + b"x" * (MAX_SKILL_BYTES + 1 - len(fm().encode())))
    assert p.stat().st_size == MAX_SKILL_BYTES + 1
    doc, findings = read_skill_file(p)
    assert doc is None and codes(findings) == {"too-large"}
    p.write_bytes(p.read_bytes()[:-1])  # exactly at the limit is fine
    doc, _ = read_skill_file(p)
    assert doc is not None


def test_binary_file(tmp_path):
    doc, findings = read_skill_file(write_skill(tmp_path, fm().encode() + b"\x00\x01\x02"))
    assert doc is None and codes(findings) == {"binary"}


def test_invalid_utf8(tmp_path):
    doc, findings = read_skill_file(write_skill(tmp_path, fm().encode() + b"\xff\xfe caf\xe9"))
    assert doc is None and codes(findings) == {"encoding"}


def test_unreadable_paths_become_findings(tmp_path):
    doc, findings = read_skill_file(tmp_path / "missing" / "SKILL.md")
    assert doc is None and codes(findings) == {"unreadable"}
    doc, findings = read_skill_file(tmp_path)  # a directory
    assert doc is None and codes(findings) == {"unreadable"}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo")
def test_fifo_is_not_opened(tmp_path):
    fifo = tmp_path / "s" / "SKILL.md"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    doc, findings = read_skill_file(fifo)  # opening would block forever
    assert doc is None and codes(findings) == {"unreadable"}


def test_load_or_raise(tmp_path):
    doc, findings = load_or_raise(write_skill(tmp_path, fm()))
    assert doc.name == "my-skill" and findings == []
    with pytest.raises(SkillFileError) as info:
        load_or_raise(write_skill(tmp_path, "no frontmatter", folder="bad"))
    assert isinstance(info.value, ValueError)
    assert codes(info.value.findings) == {"no-frontmatter"}


# ------------------------------------------------------------------------------------- rendering


def test_round_trip_keeps_unknown_keys_unicode_and_body():
    doc = SkillDocument(
        frontmatter={
            "name": "émoji-skill",
            "description": "Überprüft 日本語 text 🎉. Use when: always # not a comment",
            "x-custom": {"nested": [1, "two", None, True]},
            "metadata": {"author": "Zoë", "version": "1.0"},
            "allowed-tools": "Read Write",
            "multi": "line one\n---\nline three\n",
            "breaks": "next\x85line\u2028sep\u2029para",
            "---": "key that looks like a delimiter",
        },
        body="\n# Title\n\n---\n\ntrailing spaces   \n",
    )
    text = render_skill(doc)
    assert text.startswith("---\nname: émoji-skill\n")
    again, _ = parse_skill_text(text)
    assert again is not None
    assert again.frontmatter == doc.frontmatter and list(again.frontmatter) == list(doc.frontmatter)
    assert again.body == doc.body
    assert render_skill(again) == text


def test_render_then_read_file(tmp_path):
    doc, _ = read_skill_file(write_skill(tmp_path, VALID, "pdf-tools"))
    p = write_skill(tmp_path, render_skill(doc), "copy")
    copy, _ = read_skill_file(p)
    assert copy is not None and copy.frontmatter == doc.frontmatter and copy.body == doc.body


_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
_scalar = st.one_of(_text, st.integers(), st.booleans(), st.none(), st.floats(allow_nan=False))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=_text,
    description=_text.filter(lambda s: s.strip() != ""),
    metadata=st.dictionaries(_text, _text, max_size=4),
    extra=st.dictionaries(
        _text.filter(lambda k: k not in ("name", "description", "metadata")),
        st.one_of(_scalar, st.lists(_scalar, max_size=3),
                  st.dictionaries(_text, st.one_of(_scalar, st.dictionaries(_text, _text, max_size=2)),
                                  max_size=3)),
        max_size=4,
    ),
    body=_text,
)
def test_render_parse_render_is_stable(name, description, metadata, extra, body):
    frontmatter = {"name": name, "description": description, "metadata": metadata, **extra}
    doc = SkillDocument(frontmatter=frontmatter, body=body)
    text = render_skill(doc)
    parsed, findings = parse_skill_text(text)
    assert parsed is not None, findings
    assert parsed.frontmatter == frontmatter
    assert list(parsed.frontmatter) == list(frontmatter)
    assert parsed.body == body
    assert render_skill(parsed) == text


# ----------------------------------------------------------------------------------------- corpus

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpora" / "skills"


def test_corpus_loads():
    if not CORPUS.is_dir():
        pytest.skip(f"no skills corpus at {CORPUS}")
    files = sorted(CORPUS.rglob("SKILL.md"))
    if not files:
        pytest.skip("skills corpus is empty")
    loaded = warned = failed = strict_clean = 0
    start = time.perf_counter()
    for path in files:
        doc, findings = read_skill_file(path)
        if doc is None:
            failed += 1
            assert any(f.severity == "error" for f in findings)
            continue
        loaded += 1
        assert not any(f.severity == "error" for f in findings)
        warned += bool(findings)
        strict_clean += not any(f.severity == "error" for f in validate_skill(doc))
    seconds = time.perf_counter() - start
    print(f"\nskills corpus: {len(files)} files, {loaded} loaded ({warned} with warnings), "
          f"{failed} failed, {strict_clean} pass strict validation, {seconds:.2f}s")
    assert loaded > 0.9 * len(files)
    assert seconds < 10  # the target is well under 2 s; leave room for slow CI machines
