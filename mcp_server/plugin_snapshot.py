"""Write the tool and prompt lists the plugin's bootstrap answers while skillbank installs.

`plugins/claude-code/bin/skillbank-bootstrap` answers `tools/list` and `prompts/list` at once on
a first start, before skillbank exists on the machine, from `mcp-snapshot.json`: the lists of a
stdio (trusted) server, as a client sees them. `tests/test_plugin.py` holds the file equal to
the server; after changing a tool or prompt, run `python -m skillbank.mcp_server.plugin_snapshot`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

TARGET = Path(__file__).resolve().parent.parent / "plugins" / "claude-code" / "bin" / "mcp-snapshot.json"


def snapshot() -> dict[str, Any]:
    """{"instructions", "tools", "prompts"} of a stdio server, as JSON-ready dicts."""
    import anyio
    from mcp import Client

    from skillbank.mcp_server.early import INSTRUCTIONS
    from skillbank.mcp_server.loader import BankHandle
    from skillbank.mcp_server.server import build_server

    async def collect() -> dict[str, Any]:
        server = build_server(BankHandle(opener=lambda: None, sync=False), trusted=True)
        async with Client(server, mode="legacy") as client:
            tools = (await client.list_tools()).tools
            prompts = (await client.list_prompts()).prompts
        dump = lambda item: item.model_dump(by_alias=True, exclude_none=True, mode="json")  # noqa: E731
        return {"instructions": INSTRUCTIONS, "tools": [dump(t) for t in tools],
                "prompts": [dump(p) for p in prompts]}

    return anyio.run(collect)


def render(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def main() -> int:
    TARGET.write_text(render(snapshot()))
    print(f"wrote {TARGET}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
