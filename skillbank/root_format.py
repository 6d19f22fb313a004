"""The format of a memory root's files, stamped in `<root>/.format.json`, so that an older
skillbank refuses a root a newer one has written instead of misreading it.

Why (hunt-upgrade #3, session 30): the journal and usage log gained event shapes an older
release parses leniently. A release of the week before, opened on a root the current one had
written (a rollback, a second machine not yet upgraded, a server-mode process left running),
counted one outsider's five "not helpful" votes as five trusted failures and dropped a
conversation's later turns (journalled as updates) without a word, where team mode refuses a
database migrated by a newer skillbank ("has schema version N, newer than this skillbank
knows"). Releases before this one cannot be taught to look; from this one on, each open reads
the stamp, refuses a newer format, and stamps its own when the root has none or an older one.

`FORMAT` goes up when a release writes files an earlier release would misread (a new event
shape, a new meaning of a field): not for additions that older releases ignore safely.
"""

from __future__ import annotations

import json
from pathlib import Path

from skillbank.errors import SkillbankError
from skillbank.fsutil import atomic_write

#: The stamp's file, beside `.root-id.json`.
FORMAT_FILE = ".format.json"
#: This release's format: 1 = outsiders' votes and uses (`"o"`, `"ou"` usage lines),
#: untrusted votes naming their principal (`"p"`), and a conversation's later turns as
#: updates of its record (`"op": "update"` journal events).
FORMAT = 1


class NewerRootError(SkillbankError):
    """The root was written by a newer skillbank, in a format this one would misread."""


def stamped(root: Path) -> int:
    """The format the root's stamp names; 0 when it has none (or one that does not parse:
    a damaged stamp is written again, never a reason to refuse)."""
    try:
        found = json.loads((Path(root) / FORMAT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    number = found.get("format") if isinstance(found, dict) else None
    return number if isinstance(number, int) and not isinstance(number, bool) else 0


def refuse_newer(root: Path) -> None:
    """Raise `NewerRootError` when the root's stamp names a newer format than this release's
    (before the open writes anything there)."""
    found = stamped(root)
    if found > FORMAT:
        raise NewerRootError(
            f"{root} was written by a newer skillbank (root format {found}; this one knows "
            f"{FORMAT}), whose files this one would misread: upgrade skillbank on this machine "
            "(every process that uses this root must run the same release)")


def stamp(root: Path) -> None:
    """Stamp this release's format on a root stamped older or not at all (once opened: the
    root exists). A root this process may not write keeps its stamp: reading is allowed."""
    if stamped(root) >= FORMAT or not Path(root).is_dir():
        return
    try:
        atomic_write(Path(root) / FORMAT_FILE, json.dumps({"format": FORMAT}) + "\n",
                     private=False)
    except OSError:  # a read-only root, a full disk: the next open that can write stamps it
        pass
