"""The labels of a team worker's metrics never come from a caller's free input (issue 24,
review): a tools/call naming a made-up tool is counted as `unknown`, so a client cannot add one
series per name to the worker's registry (and to Prometheus) without bound."""

from __future__ import annotations

from mcp import Client


async def test_made_up_tool_names_do_not_become_metric_labels(hash_bank):
    from skillbank.mcp_server import build_server
    from skillbank.team.logs import UNKNOWN_TOOL, CallObserver
    from skillbank.team.metrics import Metrics

    server = build_server(hash_bank, trusted=True)
    metrics = Metrics()
    server.middleware.append(CallObserver(
        metrics, known=lambda name: server._tool_manager.get_tool(name) is not None))
    async with Client(server) as client:
        for n in range(20):
            try:
                await client.call_tool(f"no_such_tool_{n}", {})
            except Exception:  # noqa: BLE001 - an unknown tool may be a protocol error
                pass
        ok = await client.call_tool("find_skills", {"task": "write a report"})
        assert not ok.is_error
    tools = {sample.labels["tool"] for family in metrics.registry.collect()
             for sample in family.samples if "tool" in sample.labels}
    assert tools == {"find_skills", UNKNOWN_TOOL}, tools
