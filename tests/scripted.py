"""A scripted LangChain chat model for real `create_agent` runs (one copy for every test file).

Only the chat model is scripted: the agent, its middleware and the bank stay real. Import this
module after `pytest.importorskip("langchain.agents")` (it imports langchain_core at once);
tests import it as `from scripted import ...`, as they import `conftest` and `workers`.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, SystemMessage
from pydantic import Field


class Scripted(GenericFakeChatModel):
    """Replies from its `messages` iterator and keeps each request's messages in `seen`.

    `bind_tools` returns the model itself: which tools it calls is in the script, so the agent's
    tool schemas are not needed."""

    seen: list = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> "Scripted":
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        self.seen.append(list(messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def script(*replies: Any) -> Scripted:
    """A model answering with `replies` in turn; an exception in them is raised, as a provider
    error is."""
    def items():
        for reply in replies:
            if isinstance(reply, BaseException):
                raise reply
            yield reply
    return Scripted(messages=items())


def call(name: str, args: dict, cid: str) -> AIMessage:
    """A reply calling one tool."""
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": cid}])


def system_text(messages: list) -> str:
    """The system text of one request (what the middleware injected)."""
    return "\n".join(str(m.text) for m in messages if isinstance(m, SystemMessage))
