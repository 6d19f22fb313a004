"""JSON on the wire between an owner process and its clients: values, records and errors.

Calls and results cross the socket as JSON, never pickle, and a tagged value can only ever
become plain data or one of the types in `REGISTRY` — an explicit table of skillbank's record
types. A type name read off the wire is only ever a key into that table: a name that is not in
it (say `skillbank.cli.__main__:x`) is refused before anything is imported, so no message can
make the other side import or run code. Records keep their type, so a client bank returns the
same `Hit[Skill]`, `Guideline` or `MemoryContext` objects an in-process bank does.

The sender refuses what the receiver would refuse: a framework object (a LangChain message, a
LlamaIndex ChatMessage) cannot be encoded, so the caller gets `InvalidInputError` at once rather
than a call that fails on the other side. Values JSON cannot carry exactly — NaN, infinities and
integers beyond 64 bits — travel tagged, so the owner sees the value the caller passed and
answers the way an in-process bank does.
"""

from __future__ import annotations

import base64
import dataclasses
import importlib
import math
import types
from datetime import date, datetime, timedelta
from enum import Enum
from pathlib import Path, PurePath
from typing import Any

import orjson

from skillbank.errors import InvalidInputError, SkillbankError

TAG = "$t"

#: Every type that may cross the wire, by module. The modules are imported only when one of
#: their types is first decoded (a client that never sees a `Catalog` never loads Chroma).
#: A new record type that a public method returns or accepts is added here.
REGISTRY: dict[str, tuple[str, ...]] = {
    "skillbank.records": (
        "Usage", "Resource", "Skill", "Step", "Lesson", "Experience", "GuidelineSource",
        "SourceRecord", "Guideline", "LearnEntry", "LearnReport", "Hits", "Hit", "SkillDraft",
        "SkillVersion", "Finding", "SyncReport", "SecurityFinding", "SkillProposal",
        "RecordedId", "Distilled"),
    "skillbank.context": ("MemoryContext",),
    "skillbank.distill.base": ("CandidateRule",),
    "skillbank.memories.skills.catalog": ("Catalog", "CatalogEntry"),
    "skillbank.errors": (
        "SkillbankError", "NotFoundError", "HeldError", "AlreadyExistsError", "ReadOnlyError",
        "InvalidInputError", "UnsafePathError", "PermissionDeniedError", "QueueFullError",
        "BusyError", "EmbeddingMismatchError", "UnreadableError"),
    "skillbank.embeddings": ("ModelUnavailableError",),
    "skillbank.sharing.client": ("OwnerLostError",),
}
_NAMES = frozenset(f"{module}:{name}" for module, names in REGISTRY.items() for name in names)
_INT64 = 2 ** 63

#: Built-in exceptions a call may raise that a client re-raises as the same type.
_BUILTIN_ERRORS: dict[str, type[BaseException]] = {
    cls.__name__: cls for cls in (TypeError, ValueError, KeyError, LookupError, IndexError,
                                  AttributeError, FileNotFoundError, PermissionError,
                                  FileExistsError, NotADirectoryError, IsADirectoryError,
                                  NotImplementedError, RuntimeError, OSError)
}


def _builtin_base(cls: type) -> type | None:
    """The nearest of `_BUILTIN_ERRORS` an error type is (UnicodeDecodeError: ValueError), so
    `except OSError` / `except ValueError` catch through a client what they catch in process."""
    for base in cls.__mro__:
        if base.__module__ == "builtins" and _BUILTIN_ERRORS.get(base.__name__) is base:
            return base
    return None


def _qualified(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def registered(name: Any) -> type:
    """The registered type `name` ('module:Class') stands for; anything else is refused unread.

    The name is looked up in `REGISTRY` before any import: only a module listed there is ever
    imported, and only to fetch a class listed there."""
    if not isinstance(name, str) or name not in _NAMES:
        raise InvalidInputError(f"refusing to decode a value of unregistered type {name!r}")
    module_name, _, qualname = name.partition(":")
    target = getattr(importlib.import_module(module_name), qualname, None)
    if not isinstance(target, type):
        raise InvalidInputError(f"{name!r} is not a type")
    return target


def _wire_class(cls: type) -> str | None:
    """The registered name `cls` travels as: itself, or the nearest registered base class
    (a memory's private subclass of a record travels as the record, so the other side needs
    only the registered module to read it)."""
    for base in cls.__mro__:
        name = _qualified(base)
        if name in _NAMES:
            return name
    return None


def _refuse(value: Any) -> InvalidInputError:
    cls = type(value)
    return InvalidInputError(
        f"a {cls.__module__}.{cls.__qualname__} cannot be sent to the process that owns the "
        "memory root; pass plain values (text, numbers, lists, dicts) or skillbank records "
        "(chat messages: convert them to dicts with role and content first)")


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


#: How deep a value may nest to travel (orjson itself stops at 254 levels).
MAX_DEPTH = 200


def _too_deep() -> InvalidInputError:
    return InvalidInputError(f"a value nested more than {MAX_DEPTH} levels deep cannot be sent "
                             "to the process that owns the memory root; flatten it")


def dumps(message: Any) -> bytes:
    """A call's JSON bytes, or InvalidInputError for a value JSON cannot carry (too deep)."""
    try:
        return orjson.dumps(message)
    except orjson.JSONEncodeError as exc:
        if "recursion" in str(exc).lower():
            raise _too_deep() from None
        raise InvalidInputError(f"a value that cannot be sent to the owner process ({exc})") \
            from None


def encode(value: Any) -> Any:
    """A JSON-ready form of `value` (records, paths and odd numbers tagged for `decode`)."""
    try:
        return _encode(value)
    except RecursionError:  # a value thousands of levels deep: refused as in-process input is
        raise _too_deep() from None


def _encode(value: Any) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        if type(value) is not str and not isinstance(value, Enum):
            if getattr(value, "__dict__", None):
                return _encode_str_subclass(value)
            # A str subclass with __slots__ (langchain_core's TextAccessor, a message's `.text`)
            # has no vars(): a client's record / context_for / search raised TypeError where an
            # in-process bank took it (hunt-agents #2, session 29). Its text is what counts.
            value = str(value)
        if _utf8(value):
            return value
        # Lone surrogates are not UTF-8, so JSON cannot carry them; the owner must see the
        # same text the caller passed (and refuse it the way an in-process bank does).
        return {TAG: "str", "v": value.encode("utf-8", "surrogatepass").hex()}
    if isinstance(value, int) and not isinstance(value, Enum):
        return value if -_INT64 <= value < _INT64 else {TAG: "int", "v": str(value)}
    if isinstance(value, float) and not isinstance(value, Enum):
        return value if math.isfinite(value) else {TAG: "float", "v": repr(value)}
    if isinstance(value, Enum):
        # A str / int enum is its value in process too ("success" == Outcome.success); a plain
        # Enum is refused there by validation, so it is refused here (it was stored by value).
        if isinstance(value, (str, int, float)):
            return _encode(value.value)
        raise _refuse(value)
    if isinstance(value, dict):
        if all(isinstance(k, str) and _utf8(k) for k in value) and TAG not in value:
            return {k: _encode(v) for k, v in value.items()}
        return {TAG: "dict", "items": [[_encode(k), _encode(v)] for k, v in value.items()]}
    if type(value) in (list, tuple, set, frozenset) or isinstance(value, types.GeneratorType):
        return [_encode(v) for v in value]
    if isinstance(value, list):  # a list subclass of ours, e.g. records.Hits with its attributes
        name = _wire_class(type(value))
        if name is None:
            raise _refuse(value)
        return {TAG: "list", "cls": name, "items": [_encode(v) for v in value],
                "attrs": {k: _encode(v) for k, v in vars(value).items()}}
    if hasattr(value, "model_dump") and hasattr(type(value), "model_fields"):
        cls = type(value)
        origin = getattr(cls, "__pydantic_generic_metadata__", {}).get("origin") or cls
        name = _wire_class(origin)
        if name is None:
            raise _refuse(value)
        fields = {field: _encode(getattr(value, field)) for field in cls.model_fields}
        extra = getattr(value, "__pydantic_extra__", None) or {}
        fields.update({k: _encode(v) for k, v in extra.items()})
        return {TAG: "model", "cls": name, "fields": fields}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        name = _wire_class(type(value))
        if name is None:
            raise _refuse(value)
        return {TAG: "dc", "cls": name,
                "fields": {f.name: _encode(getattr(value, f.name))
                           for f in dataclasses.fields(value)}}
    if isinstance(value, PurePath):
        return {TAG: "path", "v": str(value)}
    if isinstance(value, datetime):
        return {TAG: "datetime", "v": value.isoformat()}
    if isinstance(value, date):
        return {TAG: "date", "v": value.isoformat()}
    if isinstance(value, timedelta):  # recall(since=timedelta(days=7))
        return {TAG: "timedelta", "days": value.days, "s": value.seconds, "us": value.microseconds}
    if isinstance(value, (bytes, bytearray)):
        return {TAG: "bytes", "v": base64.b64encode(bytes(value)).decode("ascii")}
    if hasattr(value, "tolist") and type(value).__module__.split(".")[0] == "numpy":
        return _encode(value.tolist())
    raise _refuse(value)


def _encode_str_subclass(value: str) -> Any:
    """A str of ours with attributes (`RecordedId`: an id and whether the run was folded)
    travels with them, so a client reads the note an in-process bank gives."""
    name = _wire_class(type(value))
    if name is None:
        return _encode(str(value))  # someone else's str subclass: the text is what counts
    return {TAG: "rstr", "cls": name, "v": _encode(str(value)),
            "attrs": {k: _encode(v) for k, v in vars(value).items()}}


def decode(value: Any) -> Any:
    """The inverse of `encode`; unknown tags and unregistered types are refused."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    tag = value.get(TAG)
    if tag is None:
        return {k: decode(v) for k, v in value.items()}
    try:
        return _decode_tagged(tag, value)
    except InvalidInputError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InvalidInputError(f"a malformed {tag!r} value on the wire ({exc})") from None


def _decode_tagged(tag: Any, value: dict[str, Any]) -> Any:
    if tag == "dict":
        return {_hashable(decode(k)): decode(v) for k, v in value["items"]}
    if tag == "str":
        return bytes.fromhex(str(value["v"])).decode("utf-8", "surrogatepass")
    if tag == "int":
        return int(str(value["v"]))
    if tag == "float":
        text = str(value["v"])
        if text not in ("nan", "inf", "-inf"):
            raise InvalidInputError(f"unexpected float {text!r} on the wire")
        return float(text)
    if tag == "path":
        return Path(value["v"])
    if tag == "datetime":
        return datetime.fromisoformat(value["v"])
    if tag == "date":
        return date.fromisoformat(value["v"])
    if tag == "timedelta":
        return timedelta(days=int(value["days"]), seconds=int(value["s"]),
                         microseconds=int(value["us"]))
    if tag == "bytes":
        return base64.b64decode(value["v"])
    if tag == "rstr":
        cls = registered(value["cls"])
        if not issubclass(cls, str):
            raise InvalidInputError(f"{value['cls']!r} is not a str type")
        return _with_attrs(cls(decode(value["v"])), value)
    if tag == "list":
        cls = registered(value["cls"])
        if not issubclass(cls, list):
            raise InvalidInputError(f"{value['cls']!r} is not a list type")
        return _with_attrs(cls(decode(v) for v in value["items"]), value)
    if tag == "model":
        cls = registered(value["cls"])
        if not hasattr(cls, "model_construct"):
            raise InvalidInputError(f"{value['cls']!r} is not a record type")
        # The sender built this record through validation; rebuilding field by field keeps
        # nested records (Hit.record) as their own types.
        return cls.model_construct(**{k: decode(v) for k, v in value["fields"].items()})
    if tag == "dc":
        cls = registered(value["cls"])
        if not dataclasses.is_dataclass(cls):
            raise InvalidInputError(f"{value['cls']!r} is not a dataclass")
        fields = {k: decode(v) for k, v in value["fields"].items()}
        init = {f.name for f in dataclasses.fields(cls) if f.init}
        obj = cls(**{k: v for k, v in fields.items() if k in init})
        for key, item in fields.items():
            if key not in init:
                object.__setattr__(obj, key, item)
        return obj
    raise InvalidInputError(f"unknown value tag {tag!r}")


def _with_attrs(result: Any, value: dict[str, Any]) -> Any:
    """`result` with the attributes sent along (never a dunder)."""
    for key, item in value.get("attrs", {}).items():
        if not isinstance(key, str) or key.startswith("__"):
            raise InvalidInputError(f"refusing attribute {key!r}")
        setattr(result, key, decode(item))
    return result


def _hashable(value: Any) -> Any:
    return tuple(_hashable(v) for v in value) if isinstance(value, list) else value


def encode_error(exc: BaseException) -> dict[str, Any]:
    """An exception raised by a call, as the client should re-raise it."""
    name = _wire_class(type(exc)) if isinstance(exc, SkillbankError) else None
    error: dict[str, Any] = {"cls": name or _qualified(type(exc)), "message": encode(str(exc))}
    if isinstance(exc, SkillbankError):
        findings = getattr(exc, "findings", None)
        if findings:
            try:
                error["findings"] = encode(findings)
            except InvalidInputError:
                pass
    elif (base := _builtin_base(type(exc))) is not None:
        error["cls"] = f"builtins:{base.__name__}"
    return error


def decode_error(error: dict[str, Any]) -> BaseException:
    """The exception `encode_error` described (skillbank's own, or a plain built-in one)."""
    name = str(error.get("cls", ""))
    try:
        message = str(decode(error.get("message", "")))
    except InvalidInputError:
        message = str(error.get("message", ""))
    if name.startswith("builtins:") and name[9:] in _BUILTIN_ERRORS:
        return _BUILTIN_ERRORS[name[9:]](message)
    try:
        cls: type | None = registered(name)
    except (InvalidInputError, ImportError):
        cls = None
    if cls is None or not issubclass(cls, SkillbankError):
        from skillbank.index_repair import with_repair

        return SkillbankError(with_repair(
            f"the owner process raised {name.split(':')[-1]}: {message}"))
    try:
        exc = cls(message)
    except TypeError:  # an error type with another constructor: keep its class name in the text
        return SkillbankError(message)
    if "findings" in error and hasattr(exc, "findings"):
        try:
            exc.findings = decode(error["findings"])
        except InvalidInputError:
            pass
    return exc
