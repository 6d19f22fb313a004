"""LangChain pieces shared by the middleware and the rest of `skillbank.adapters.langchain`:
reading messages, and the memory tools as `StructuredTool`s (and a `BaseToolkit`).

Tools take their namespace either fixed or from a resolver called at each tool call, so a
middleware with ``namespace="{user_id}"`` gives its tools the same per-run namespace.
"""

from __future__ import annotations

import asyncio
import contextvars
import difflib
import functools
from typing import TYPE_CHECKING, Any, Callable, List, Mapping, Optional, Sequence, Union

from langchain_core.messages import BaseMessage
from langchain_core.tools import BaseTool, BaseToolkit, StructuredTool, ToolException
from pydantic import BaseModel, ConfigDict, Field

from skillbank.adapters._agent_tools import gated, names_of
from skillbank.adapters._runs import fill_namespace, template_fields
from skillbank.adapters._tools import run_tool, select_tools
from skillbank.errors import InvalidInputError, SkillbankError

if TYPE_CHECKING:
    from skillbank.bank import Skillbank

#: A namespace, or a function giving the namespace of the current run.
NamespaceLike = Union[str, None, Callable[[], Union[str, None]]]


# --------------------------------------------------------------------------------------------
# Messages
# --------------------------------------------------------------------------------------------

def text_of(message: Any) -> str:
    """The text of a message whatever its content shape (string or content blocks)."""
    if isinstance(message, BaseMessage):
        return str(message.text)
    if isinstance(message, dict):
        content = message.get("content", "")
        if isinstance(content, list):
            return "\n".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)
        return str(content or "")
    return str(message)


def is_human(message: Any) -> bool:
    if isinstance(message, BaseMessage):
        return message.type == "human"
    return isinstance(message, dict) and message.get("role") in ("user", "human")


def is_summary(message: Any) -> bool:
    """A summary of earlier turns written by `SummarizationMiddleware` (a HumanMessage)."""
    extra = getattr(message, "additional_kwargs", None) or {}
    return is_human(message) and extra.get("lc_source") == "summarization"


def latest_human_text(messages: Sequence[Any]) -> str:
    """The text of the latest human message that is a request ('' when there is none)."""
    for message in reversed(list(messages or [])):
        if is_human(message) and not is_summary(message):
            return text_of(message).strip()
    return ""


# --------------------------------------------------------------------------------------------
# Options
# --------------------------------------------------------------------------------------------

def refuse_unknown_options(model: type[BaseModel], given: Mapping[str, Any],
                           hints: Mapping[str, str] | None = None) -> None:
    """Raise `InvalidInputError` naming each option `model` does not have (the nearest known
    name, or `hints`' word on it) and listing those it has. pydantic ignores extras by default:
    ``ExperienceRetriever(bank, namspace="alice")`` read the shared namespace and
    ``SkillbankToolkit(bank, trustd=False)`` added active rules (hunt-rag #2, session 24)."""
    known = sorted(model.model_fields)
    unknown = [key for key in given if key not in model.model_fields]
    if not unknown:
        return
    said = []
    for key in unknown:
        near = difflib.get_close_matches(str(key), known, n=1)
        hint = (hints or {}).get(key) or (f"did you mean {near[0]!r}?" if near else "")
        said.append(f"{key!r}" + (f" ({hint})" if hint else ""))
    raise InvalidInputError(f"{model.__name__} has no option {', '.join(said)}; its options "
                            f"are {', '.join(known)}")


# --------------------------------------------------------------------------------------------
# Tools
# --------------------------------------------------------------------------------------------

#: A retriever's own ``config["configurable"]`` while its `invoke` runs: LangChain does not set
#: the run's config context for a retriever's search as it does for a tool's.
GIVEN_CONFIGURABLE: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "skillbank_given_configurable", default=None)


def run_config() -> dict[str, Any]:
    """The current run's ``configurable`` ({} outside a run)."""
    given = GIVEN_CONFIGURABLE.get()
    if given is not None:
        return given
    try:
        from langgraph.config import get_config

        return dict(get_config().get("configurable") or {})
    except Exception:  # noqa: BLE001 - outside a graph run there is no config
        return {}


def current_context() -> Any:
    """The current graph run's runtime context (None outside one)."""
    try:
        from langgraph.runtime import get_runtime

        return getattr(get_runtime(), "context", None)
    except Exception:  # noqa: BLE001 - outside a graph run there is no runtime
        return None


def thread_now() -> str | None:
    """The current run's thread (``configurable["thread_id"]``), None outside one: the tools
    leave its open episode out of what they recall, as the middleware's block does."""
    thread = run_config().get("thread_id")
    return str(thread) if thread is not None and str(thread).strip() else None


def namespace_now(namespace: NamespaceLike) -> str | None:
    """The namespace of this call: a function's answer, or a template such as
    ``"{user_id}"`` filled from the run's ``configurable`` and runtime context, as the
    middleware fills it. The tools, toolkit and retrievers took a template literally: every
    user of an agent shared one namespace named ``{user_id}``."""
    if callable(namespace):
        return namespace()
    return fill_namespace(namespace, run_config(), current_context())


@functools.cache
def _refusing_extras(schema: type[BaseModel]) -> type[BaseModel]:
    """`schema`, refusing arguments it does not name. LangChain validates a tool call with the
    schema and passes on only the fields it names, so a model's misspelt ``kk`` for ``k`` got
    an answer computed without it (hunt-rag #2, session 24; the MCP server refuses them). The
    schema a model is shown stays the same: LangChain builds it from the fields alone."""
    return type(schema.__name__, (schema,), {"model_config": ConfigDict(extra="forbid"),
                                             "__doc__": schema.__doc__, "__module__": __name__})


def _structured_tool(bank: "Skillbank", name: str, description: str, schema: Any,
                     namespace: NamespaceLike, trusted: bool,
                     available_tools: Optional[List[str]] = None) -> StructuredTool:
    if isinstance(namespace, str):
        template_fields(namespace)  # a malformed template fails here, not mid-run

    def func(**kwargs: Any) -> str:
        try:
            with gated(available_tools):  # the agent's tools, when the caller named them
                return run_tool(bank, name, kwargs, namespace=namespace_now(namespace),
                                trusted=trusted, thread=thread_now())
        except SkillbankError as exc:
            raise ToolException(str(exc)) from exc

    async def coroutine(**kwargs: Any) -> str:
        return await asyncio.to_thread(func, **kwargs)

    from skillbank.adapters._tools import validation_message

    func.__name__ = coroutine.__name__ = name
    return StructuredTool.from_function(
        func=func, coroutine=coroutine, name=name, description=description,
        args_schema=_refusing_extras(schema), handle_tool_error=True,
        handle_validation_error=lambda exc: validation_message(name, exc),
    )


def skillbank_tools(bank: "Skillbank", include: Sequence[str] | str | None = None,
                    namespace: NamespaceLike = None, *, trusted: bool = True,
                    available_tools: Sequence[Any] | None = None) -> list[StructuredTool]:
    """The skillbank memory tools for a LangChain agent.

    By default the compact set (`COMPACT_TOOLS`: four tools, about 760 schema tokens);
    ``include="all"`` gives all twelve (`TOOL_NAMES`, about 2,600 tokens; `propose_skills` is refused unless trusted), a list of names picks
    some. `namespace` scopes experiences and guidelines (a function is called at each tool call,
    and a template such as ``"{user_id}"`` is filled from each run's ``configurable`` or runtime
    context, for per-run namespaces). With `trusted=False`, guidelines a model adds or learns arrive as
    `pending` until a person approves them. A skillbank error becomes the tool's error reply to
    the model, never an exception that ends the run.

    `available_tools`: the agent's other tools (names or tools): `find_skills` and
    `memory_context` leave out skills that need tools it lacks and name them (#26's gate).
    `SkillbankMiddleware` passes them itself; this is for an agent run without it (the toolkit
    took no list, so such an agent was offered skills it could not follow; left from session
    28, mended in session 29). Given, it wins over the middleware's.
    """
    names = names_of(available_tools)
    return [_structured_tool(bank, d.name, d.description, d.args_schema, namespace, trusted,
                             names)
            for d in select_tools(include)]


class SkillbankToolkit(BaseToolkit):
    """The skillbank memory tools as a LangChain `BaseToolkit`.

    ``SkillbankToolkit(bank=bank).get_tools()`` — the compact set by default,
    ``include="all"`` for every tool; `namespace` and `trusted` as in `skillbank_tools`.
    """

    # extra="forbid": a misspelt option is an error, not ignored (see `refuse_unknown_options`)
    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    bank: Any = Field(exclude=True, repr=False)
    include: Union[str, list[str], None] = None
    namespace: Union[str, None] = None
    trusted: bool = True
    #: The agent's other tools (names or tools): skills needing tools it lacks are left out.
    available_tools: Optional[List[Any]] = None

    def __init__(self, bank: "Skillbank | None" = None, **kwargs: Any) -> None:
        if bank is not None:
            kwargs["bank"] = bank
        refuse_unknown_options(type(self), kwargs)
        super().__init__(**kwargs)
        names_of(self.available_tools)  # refused here, as LlamaIndex's faces do (hunt-evalgate
        # #5, session 37): a blank name surfaced only at get_tools, or as a tool's error

    def get_tools(self) -> list[BaseTool]:
        return list(skillbank_tools(self.bank, self.include, self.namespace,
                                    trusted=self.trusted, available_tools=self.available_tools))

    def __repr_args__(self) -> Any:
        yield "bank", self.bank
        yield from super().__repr_args__()
