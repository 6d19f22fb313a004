"""Memory ids of skills: `skill:<name>`, percent-encoded, so every id is a valid id.

A skill whose name breaks the Agent Skills rules (`Neon Automation`, found in real libraries)
is still served, as the spec's client guide asks, but its id must not carry spaces or other
characters a model would mangle when it passes the id back to `rate`/`forget` (#27). The name is
percent-encoded the way the MCP server already encodes skill URIs (`skill://Neon%20Automation/`):
a valid name (lowercase letters, digits, hyphens) is unchanged, so ordinary ids are as before.
"""

from __future__ import annotations

from urllib.parse import quote, unquote

PREFIX = "skill:"


def skill_id(name: str) -> str:
    """`skill:<name>` with anything but letters, digits and `-._~` percent-encoded."""
    return PREFIX + quote(name, safe="-._~")


def skill_name(item_id: str) -> str:
    """The skill name an id names (the inverse of `skill_id`; a raw name passes through)."""
    return unquote(item_id[len(PREFIX):] if item_id.startswith(PREFIX) else item_id)
