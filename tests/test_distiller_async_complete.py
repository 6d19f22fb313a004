"""An async model passed as `complete=` (hunt-llm #8, session 32).

Before: `_call` did `str(reply)` on the coroutine: the fallback said "unparseable reply" (it was
never parsed) and Python warned "coroutine 'model' was never awaited". Now the sync path closes
the coroutine and says "complete returned a coroutine: pass an async model as acomplete="; the
async path, which runs on an event loop, awaits it.
"""

from __future__ import annotations

import gc
import json
import warnings

import pytest

from owner_client import bank_for
from skillbank.distill import LLMDistiller

REPLY = json.dumps([{"text": "Store dates as ISO 8601 strings.", "topic": "data"}])


async def amodel(prompt: str) -> str:
    return REPLY


@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "client-of-owner"])
def test_an_async_complete_is_said_and_never_left_unawaited(tmp_path, remote):
    with bank_for(tmp_path, remote) as bank:
        bank.distiller = LLMDistiller(amodel, timeout=30)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            report = bank.guidelines.learn("The dates are a mess.", task="clean the data")
            gc.collect()  # a coroutine never awaited warns when it is collected
        assert report.distilled_by == "rules"
        assert report.distill_error == ("complete returned a coroutine: pass an async model as "
                                        "acomplete=")


async def test_the_async_path_awaits_an_async_complete():
    rules = await LLMDistiller(amodel, timeout=30).arules_from_critique("The dates are a mess.")
    assert rules.distilled_by == "model"
    assert [r.text for r in rules] == ["Store dates as ISO 8601 strings."]
