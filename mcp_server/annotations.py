"""What each tool is called and what it does to the memory, said once, honestly.

MCP clients use a tool's annotations to decide what to run without asking: a tool marked
read-only may be auto-approved. So the hints here follow what each tool really does, and some
depend on whether the server trusts its clients (an untrusted client's vote cannot retire a rule,
so `rate_memory` is only destructive for trusted ones):

- read: returns what the memory holds; nothing is added, changed or removed. `memory_context`
  and `recall_experiences` do count how often an item was shown (usage statistics for ranking),
  which changes no item and no status.
- add: adds records; existing items may be merged into (a reinforcement count), never removed.
- overwrite: replaces what is there (`save_skill` rewrites a skill's SKILL.md).
- destroy: may remove an item or end its use (forget, reject, a vote that retires a rule, a
  critique that supersedes a rule).
"""

from __future__ import annotations

from typing import Any, Callable

import mcp_types as types

from skillbank.tool_text import TOOL_DESCRIPTIONS, TOOL_TITLES

Registrar = Callable[[str], Callable[[Callable[..., Any]], Any]]

KINDS: dict[str, dict[str, bool]] = {
    "read": {"read_only_hint": True, "destructive_hint": False, "idempotent_hint": True},
    "add": {"read_only_hint": False, "destructive_hint": False, "idempotent_hint": False},
    "overwrite": {"read_only_hint": False, "destructive_hint": True, "idempotent_hint": True},
    "destroy": {"read_only_hint": False, "destructive_hint": True, "idempotent_hint": True},
    "vote": {"read_only_hint": False, "destructive_hint": True, "idempotent_hint": False},
}


def annotations_for(kind: str, title: str, *, trusted: bool) -> types.ToolAnnotations:
    """The hints of one kind of tool. Votes and critiques from untrusted clients only ever add
    (they wait for review), so for those servers `vote` is not destructive."""
    hints = dict(KINDS[kind])
    if kind == "vote" and not trusted:
        hints["destructive_hint"] = False
    return types.ToolAnnotations(title=title, open_world_hint=False, **hints)


def registrar(server: Any, *, trusted: bool) -> Registrar:
    """`@tool(kind)`: register a function as a tool with the shared description and title."""

    def tool(kind: str) -> Callable[[Callable[..., Any]], Any]:
        def register(fn: Callable[..., Any]) -> Any:
            name = fn.__name__
            title = TOOL_TITLES[name]
            return server.tool(description=TOOL_DESCRIPTIONS[name], title=title,
                               annotations=annotations_for(kind, title, trusted=trusted))(fn)

        return register

    return tool
