"""What a skills scan found (`Found`), its digest and its parse.

A scan reads each changed SKILL.md once: the digest the index keeps and the skill indexed
beside it come from the same bytes (`parse_found`), so a file changed between the scan and the
parse is never indexed under the other version's digest (review 3 of session 33).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from skillbank.memories.skills.skill_file import (SkillDocument, parse_skill_bytes,
                                                  read_skill_file, too_large)
from skillbank.records import Finding

#: How a scan's digest begins for a file it left unread as larger than the limit.
TOO_LARGE = "too-large:"


@dataclass
class Found:
    """One SKILL.md seen by a scan."""

    path: Path
    root: Path
    writable: bool
    digest: str
    data: bytes | None = None
    stat: str = ""  # freshness.key_of: when it matches the index, the file is not even read


def digest_of(path: Path, data: bytes) -> str:
    """Content hash of a SKILL.md, salted with its path (a moved file is re-indexed)."""
    return hashlib.sha256(str(path).encode() + b"\0" + data).hexdigest()


def parse_found(entry: Found) -> tuple[SkillDocument | None, list[Finding]]:
    """Parse scanned bytes through the file module (its size, binary and YAML rules apply):
    the bytes the digest was taken of, not the file again (cut back under the size limit
    between scan and parse, it was indexed under the scan's placeholder digest); a file the
    scan left unread as too large, as too large; one it left unread as unchanged, as it is."""
    if entry.data is not None:
        return parse_skill_bytes(entry.data, entry.path)
    if entry.digest.startswith(TOO_LARGE):
        return None, [too_large(str(entry.path))]
    return read_skill_file(entry.path)
