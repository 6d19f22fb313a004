"""Memory ids of skills: `skill:<name>`, percent-encoded, so every id is a valid id.

A skill whose name breaks the Agent Skills rules (`Neon Automation`, found in real libraries)
is still served, as the spec's client guide asks, but its id must not carry spaces or other
characters a model would mangle when it passes the id back to `rate`/`forget` (#27). The name is
percent-encoded the way the MCP server already encodes skill URIs (`skill://Neon%20Automation/`):
a valid name (lowercase letters, digits, hyphens) is unchanged, so ordinary ids are as before.
"""

from __future__ import annotations

import unicodedata
from typing import Iterable
from urllib.parse import quote, unquote

PREFIX = "skill:"


def skill_id(name: str) -> str:
    """`skill:<name>` with anything but letters, digits and `-._~` percent-encoded."""
    return PREFIX + quote(name, safe="-._~")


def skill_name(item_id: str) -> str:
    """The skill name an id names (the inverse of `skill_id`; a raw name passes through)."""
    return unquote(item_id[len(PREFIX):] if item_id.startswith(PREFIX) else item_id)


def same_name(name: str, names: Iterable[str]) -> str | None:
    """The skill name among `names` that is `name` in another Unicode normalisation, if any.

    A hand-written folder named on macOS is often NFD ("re\u0301sume\u0301-writer"), while a
    name typed or sent by a model is NFC: `load("résumé-writer")` said "no skill named
    'résumé-writer'" beside a listing showing the same-looking name. The folder is not renamed
    (it is not the bank's); the lookup finds it."""
    if not isinstance(name, str) or name.isascii():
        return None
    wanted = unicodedata.normalize("NFC", name)
    for known in names:
        if not known.isascii() and unicodedata.normalize("NFC", known) == wanted:
            return known
    return None


def unknown_name(name: str) -> str:
    """How a refusal names a skill it did not find: a served name may be 64 KiB long, and an
    unknown one echoed whole sent ~65 KB back to a model (review of session 28)."""
    return repr(name if len(name) <= 200 else name[:200] + "…")
