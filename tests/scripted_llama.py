"""A scripted LlamaIndex LLM for real `FunctionAgent` runs (one copy for every test file).

Only the LLM is scripted: the agent, its memory and the bank stay real. Import this module after
`pytest.importorskip("llama_index.core")` (it imports llama_index at once); tests import it as
`from scripted_llama import ...`, as they import `conftest` and `workers`.
"""

from __future__ import annotations

from llama_index.core.base.llms.types import ChatMessage, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM


def scripted(replies: list) -> tuple[MockFunctionCallingLLM, list]:
    """An LLM answering with `replies` in turn (an exception in them is raised, as a provider
    error is), and the list each request's messages are copied into."""
    seen: list = []
    queue = iter(replies)

    def generate(messages, **kwargs):
        seen.append([m.model_copy(deep=True) for m in messages])
        reply = next(queue)
        if isinstance(reply, BaseException):
            raise reply
        return reply

    return MockFunctionCallingLLM(response_generator=generate), seen


def tool_call(name: str, kwargs: dict, cid: str) -> ChatMessage:
    """A reply calling one tool."""
    return ChatMessage(role="assistant",
                       blocks=[ToolCallBlock(tool_call_id=cid, tool_name=name, tool_kwargs=kwargs)])
