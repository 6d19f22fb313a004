"""A scan's digest and the skill indexed beside it come from the same bytes (review 3 of
session 33, LOW #3).

The scan hashed the bytes it read (or, for a file past 1 MiB, kept a `too-large:<stat>`
placeholder unread), and the parse read the file again: a SKILL.md cut back under the limit
between the two was indexed as a good skill under the placeholder digest (no last good copy
could match it, `content_hash` showed the placeholder), and one edited between them was indexed
under the other version's digest.
"""

from __future__ import annotations

from conftest import write_skill
from skillbank.memories.skills.scanned import TOO_LARGE, Found, digest_of, parse_found


def test_the_parse_is_of_the_bytes_the_digest_was_taken_of(tmp_path):
    path = write_skill(tmp_path, "release-notes", "Write release notes from merged PRs.")
    scanned = path.read_bytes()
    path.write_text(path.read_text().replace("release notes", "a changelog"))  # after the scan
    doc, findings = parse_found(Found(path, tmp_path, True, digest_of(path, scanned), scanned))
    assert doc is not None and "release notes" in doc.description, findings  # was: the changelog


def test_a_file_left_unread_as_too_large_is_too_large_even_if_cut_back_since(tmp_path):
    path = write_skill(tmp_path, "release-notes", "Write release notes from merged PRs.")
    doc, findings = parse_found(Found(path, tmp_path, True, f"{TOO_LARGE}123", None))
    assert doc is None and [f.code for f in findings] == ["too-large"]  # was: parsed as good


def test_a_file_left_unread_as_unchanged_is_read(tmp_path):
    path = write_skill(tmp_path, "release-notes", "Write release notes from merged PRs.")
    doc, findings = parse_found(Found(path, tmp_path, True, "a" * 64, None))
    assert doc is not None and doc.name == "release-notes", findings
