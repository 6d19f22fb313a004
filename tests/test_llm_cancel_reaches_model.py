"""Cancelling an async distill cancels the model call too (review 2, session 32).

With the distiller timeout (hunt-llm #3) the async path waited for the model call with
`asyncio.wait`, which does not cancel what it waits on: an MCP client that cancelled
`learn_from_critique` left its sampling request running until it finished or timed out. The
call is cancelled with its caller again, as a plain `await` did. No timing: events only.
"""

from __future__ import annotations

import asyncio

from skillbank.distill import LLMDistiller


async def test_a_cancelled_distill_cancels_the_model_call():
    started, seen = asyncio.Event(), []

    async def model(prompt: str) -> str:
        started.set()
        try:
            await asyncio.Event().wait()  # a model that has not answered yet
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        return "[]"

    distiller = LLMDistiller(lambda prompt: "[]", acomplete=model)
    task = asyncio.create_task(distiller.arules_from_critique("Always cite the source."))
    await started.wait()
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    await asyncio.sleep(0)  # let the model call see its cancellation
    assert seen == ["cancelled"]
