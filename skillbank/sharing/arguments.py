"""What a call's arguments become before they travel to the process that owns the root.

Relative paths are made absolute in the caller's working folder (the owner's is another one);
this process's own callbacks (progress bars, a stop event) stay here, since they cannot travel
and the owner does the work. `BankClient` applies both to every call it sends.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

from skillbank.errors import InvalidInputError


#: Parameters that name a file or folder, by method: resolved in the caller's working folder
#: before the call travels (the owner's working folder is another one). `None`: any method.
PATH_PARAMETERS: dict[tuple[str, str] | None, tuple[int | None, str]] = {
    ("experiences", "export"): (0, "path"),
    ("experiences", "import_"): (0, "path"),
}


def resolve_paths(target: str, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
                  ) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """`args`/`kwargs` with relative paths made absolute here, in the caller's working folder:
    every `Path` value, and the known path parameters (`PATH_PARAMETERS`) given as text."""
    def absolute(value: Any) -> Any:
        if isinstance(value, (str, os.PathLike)) and not isinstance(value, bytes):
            text = os.fspath(value)
            if text and "\0" not in text:
                resolved = os.path.abspath(os.path.expanduser(text))
                return Path(resolved) if isinstance(value, os.PathLike) else resolved
        return value

    args = tuple(absolute(a) if isinstance(a, os.PathLike) else a for a in args)
    kwargs = {k: absolute(v) if isinstance(v, os.PathLike) else v for k, v in kwargs.items()}
    position, keyword = PATH_PARAMETERS.get((target, name), (None, ""))
    if keyword and keyword in kwargs:
        kwargs[keyword] = absolute(kwargs[keyword])
    elif position is not None and position < len(args):
        args = (*args[:position], absolute(args[position]), *args[position + 1:])
    return args, kwargs


#: Methods that take chat messages, with the position of the messages parameter (None: keyword
#: only); `record_many` takes them inside each item.
MESSAGE_PARAMETERS: dict[tuple[str, str], int | None] = {
    ("experiences", "record"): None,
    ("experiences", "record_messages"): 0,
}


def plain_chat_messages(target: str, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
                        ) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """`args`/`kwargs` with a framework's chat messages (LangChain, LlamaIndex) as plain dicts,
    which the owner accepts (see `chat_messages`): `record(messages=[HumanMessage(...)])`
    worked in the owner process and was refused from every other one."""
    def plain(messages: Any) -> Any:
        if isinstance(messages, Iterator):
            messages = list(messages)  # a generator cannot travel; its items may
        if not isinstance(messages, (list, tuple)) or all(map(_plain_data, messages)):
            return messages  # plain already, or not messages at all: the owner checks it
        from skillbank.chat_messages import plain_message  # only when there is one to convert

        def one(message: Any) -> Any:
            if _plain_data(message):
                return message  # as in process: the owner reads (or refuses) it
            try:
                return plain_message(message)
            except InvalidInputError:
                return message  # not a chat message: the owner says so, as in process
        return [one(m) for m in messages]

    if (target, name) == ("experiences", "record_many"):
        items = kwargs.get("records", args[0] if args else None)
        if isinstance(items, (list, tuple)):
            items = [{**item, "messages": plain(item["messages"])}
                     if isinstance(item, dict) and item.get("messages") is not None else item
                     for item in items]
            if "records" in kwargs:
                kwargs = {**kwargs, "records": items}
            else:
                args = (items, *args[1:])
        return args, kwargs
    if (target, name) not in MESSAGE_PARAMETERS:
        return args, kwargs
    position = MESSAGE_PARAMETERS[(target, name)]
    if "messages" in kwargs:
        kwargs = {**kwargs, "messages": plain(kwargs["messages"])}
    elif position is not None and position < len(args):
        args = (*args[:position], plain(args[position]), *args[position + 1:])
    return args, kwargs


def _plain_data(value: Any) -> bool:
    """Data the wire carries as it is (a framework's message object is not)."""
    return value is None or isinstance(value, (dict, list, tuple, str, bytes, int, float))


#: Parameters that are this process's own callbacks, by method, with their position: progress
#: bars and a stop event cannot travel, and the owner does the work; the call goes without
#: them (a progress bar then shows no steps, a stop event does not stop the owner's fill).
LOCAL_CALLBACKS: dict[tuple[str, str], dict[str, int | None]] = {
    ("skills", "sync"): {"progress": 0, "sections_progress": None},
    ("skills", "fill_dense"): {"progress": 0, "stop": 1, "sections_progress": None,
                               "summaries_done": None},
}


def without_local_callbacks(target: str, name: str, args: tuple[Any, ...],
                            kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """`args`/`kwargs` without the callbacks `LOCAL_CALLBACKS` names (`skillbank skills sync`
    on a served root failed: "a SyncProgress cannot be sent to the process that owns ...")."""
    known = LOCAL_CALLBACKS.get((target, name))
    if not known:
        return args, kwargs
    kwargs = {k: v for k, v in kwargs.items() if k not in known}
    positions = {p for p in known.values() if p is not None}
    args = tuple(None if i in positions else a for i, a in enumerate(args))
    while args and args[-1] is None:
        args = args[:-1]
    return args, kwargs


#: Where a typed time (`moments.TYPED_ARGUMENTS`) can also be given by position, by method.
TYPED_TIME_POSITIONS: dict[tuple[str, str], dict[str, int]] = {
    ("experiences", "recall"): {"since": 5},
}


def with_local_zones(target: str, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
                     ) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """`args`/`kwargs` with their typed times given this process's zone (`since=`: a naive
    datetime, a date or an ISO text without a zone, `moments.with_local_zone`), so the owner
    reads them as this process does, at the UTC offset of their own date. The owner applied
    the client's offset at the moment of the call to every date: a July `since` typed in
    Berlin in December was an hour off (hunt-trust #3, session 30)."""
    from skillbank.moments import TYPED_ARGUMENTS, with_local_zone

    positions = TYPED_TIME_POSITIONS.get((target, name), {})
    if not any(k in kwargs for k in TYPED_ARGUMENTS) and \
            not any(p < len(args) for p in positions.values()):
        return args, kwargs
    kwargs = {k: with_local_zone(v) if k in TYPED_ARGUMENTS else v for k, v in kwargs.items()}
    at = set(positions.values())
    args = tuple(with_local_zone(a) if i in at else a for i, a in enumerate(args))
    return args, kwargs


#: Calls whose lessons or drafts the owner's distiller writes (`BankClient._owner_distils`).
OWNER_DISTILS = frozenset({("skills", "propose"), ("experiences", "distill")})

#: Writes the owner distils when asked to, `distill=True` (by keyword, or at this position;
#: `record_many`: in an item): the agent faces' `distill=True` records so. Their lessons came
#: from the owner's distiller while a client's own one (`LlamaIndexDistiller(llm)`) was passed
#: over without the warning the calls above give (hunt-llama #4, session 35).
DISTILS_WHEN_ASKED: dict[tuple[str, str], int | None] = {
    ("experiences", "record"): 10,
    ("experiences", "record_messages"): None,  # in its **kw
    ("experiences", "record_many"): None,
}


def owner_distils(target: str, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
                  ) -> bool:
    """Whether this call has the owner distil or draft (`OWNER_DISTILS`, or a write of
    `DISTILS_WHEN_ASKED` asked to distil)."""
    if (target, name) in OWNER_DISTILS:
        return True
    if (target, name) not in DISTILS_WHEN_ASKED:
        return False
    if name == "record_many":
        items = kwargs.get("records", args[0] if args else None)
        return isinstance(items, (list, tuple)) and any(
            isinstance(item, dict) and item.get("distill") is True for item in items)
    position = DISTILS_WHEN_ASKED[(target, name)]
    at = args[position] if position is not None and position < len(args) else None
    return kwargs.get("distill", at) is True
