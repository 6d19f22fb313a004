"""The agent's tool names for the faces that are told them (#26 tool gate).

LlamaIndex tells neither a tool nor a memory block the agent's other tools, so its faces take
the list the caller gives the agent (names or tools) and set it around their skill searches.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any, List, Optional

from skillbank.errors import InvalidInputError
from skillbank.memories.skills.dependencies import agent_tools, check_available


def names_of(tools: Any) -> Optional[List[str]]:
    """Tool names from names or LlamaIndex tools (`tool.metadata.name`); None stays None."""
    if tools is None:
        return None
    if isinstance(tools, str):
        raise InvalidInputError("available_tools: give a list of tool names or tools, not a "
                                "string")
    names = []
    for tool in tools:
        name = tool if isinstance(tool, str) else getattr(
            getattr(tool, "metadata", None), "name", None) or getattr(tool, "name", None)
        if not isinstance(name, str) or not name:
            raise InvalidInputError(f"available_tools: {tool!r} is neither a tool name nor a "
                                    "tool with a name")
        names.append(name)
    # The one check every face passes: `["  "]` was taken here and gated out every skill that
    # declares tools, where MCP refused it (hunt-evalgate #5, session 37).
    return check_available(names)


def gated(names: Optional[List[str]]) -> Any:
    """Skill search within gates on `names` (the agent's tools); no names: as it was."""
    return nullcontext() if names is None else agent_tools(names)
