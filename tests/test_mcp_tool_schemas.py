"""The MCP tools' input schemas are JSON Schema a client reads: ranges as minimum / maximum.

An int argument declared ``Annotated[int, WHOLE, Field(ge=1, le=50)]`` came out of pydantic as
``{"ge": 1, "le": 50}``: keys no MCP client or model reads, so `find_skills`' ``k``,
`memory_context`'s ``budget_tokens`` and `propose_skills`' ``min_support`` showed no range at all
(session 37; the server still refused 0 or 51). The list a real client session sees is checked.
"""

from __future__ import annotations

from typing import Any

import anyio

PYDANTIC_ONLY = {"ge", "le", "gt", "lt", "strict", "multiple_of_", "allow_inf_nan"}


def _tools() -> list[Any]:
    from mcp import Client

    from skillbank.mcp_server.loader import BankHandle
    from skillbank.mcp_server.server import build_server

    async def listed() -> list[Any]:
        server = build_server(BankHandle(opener=lambda: None, sync=False), trusted=True)
        async with Client(server, mode="legacy") as client:
            return (await client.list_tools()).tools

    return anyio.run(listed)


def _keys(schema: Any) -> set[str]:
    if isinstance(schema, dict):
        return set(schema) | {k for value in schema.values() for k in _keys(value)}
    if isinstance(schema, list):
        return {k for value in schema for k in _keys(value)}
    return set()


def test_no_tool_schema_carries_pydantic_keywords():
    tools = _tools()
    leaked = {t.name: sorted(_keys(t.input_schema) & PYDANTIC_ONLY) for t in tools}
    assert not {name: keys for name, keys in leaked.items() if keys}, leaked


def test_int_ranges_are_json_schema_minimum_and_maximum():
    by_name = {t.name: t.input_schema["properties"] for t in _tools()}
    assert (by_name["find_skills"]["k"]["minimum"], by_name["find_skills"]["k"]["maximum"]) == (1, 50)
    budget = by_name["memory_context"]["budget_tokens"]
    assert (budget["minimum"], budget["maximum"]) == (50, 20_000)
    support = by_name["propose_skills"]["min_support"]
    assert (support["minimum"], support["maximum"]) == (1, 1000)
