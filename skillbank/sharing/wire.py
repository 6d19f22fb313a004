"""JSON on the wire between an owner process and its clients: values, records and errors.

Calls and results cross the socket as JSON, never pickle: a value a client sends can only ever
become plain data or one of skillbank's own record types (pydantic models, dataclasses and
list subclasses defined under `skillbank.`), so no message can make the other side run code.
Records keep their type, so a client bank returns the same `Hit[Skill]`, `Guideline` or
`MemoryContext` objects an in-process bank does.
"""

from __future__ import annotations

import base64
import dataclasses
import importlib
import types
from datetime import date, datetime
from enum import Enum
from pathlib import Path, PurePath
from typing import Any

from skillbank.errors import InvalidInputError, SkillbankError

TAG = "$t"
RECORDS = "skillbank.records"

#: Built-in exceptions a call may raise that a client re-raises as the same type.
_BUILTIN_ERRORS: dict[str, type[BaseException]] = {
    cls.__name__: cls for cls in (TypeError, ValueError, KeyError, LookupError, IndexError,
                                  AttributeError, FileNotFoundError, PermissionError,
                                  NotImplementedError, RuntimeError, OSError)
}


def _qualified(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _skillbank_class(name: str) -> type:
    """The class `module:qualname` names, only if skillbank defines it (never anything else)."""
    module_name, _, qualname = name.partition(":")
    if not (module_name == "skillbank" or module_name.startswith("skillbank.")) or not qualname:
        raise InvalidInputError(f"refusing to decode a value of foreign type {name!r}")
    target: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        if part.startswith("__"):
            raise InvalidInputError(f"refusing to decode a value of type {name!r}")
        target = getattr(target, part)
    if not isinstance(target, type):
        raise InvalidInputError(f"{name!r} is not a type")
    return target


def encode(value: Any) -> Any:
    """A JSON-ready form of `value` (records and paths tagged so `decode` restores them)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Enum):
        return encode(value.value)
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value) and TAG not in value:
            return {k: encode(v) for k, v in value.items()}
        return {TAG: "dict", "items": [[encode(k), encode(v)] for k, v in value.items()]}
    if type(value) in (list, tuple, set, frozenset) or isinstance(value, types.GeneratorType):
        return [encode(v) for v in value]
    if isinstance(value, list):  # a list subclass of ours, e.g. index.Hits with its attributes
        return {TAG: "list", "cls": _qualified(type(value)), "items": [encode(v) for v in value],
                "attrs": {k: encode(v) for k, v in vars(value).items()}}
    if hasattr(value, "model_dump") and hasattr(type(value), "model_fields"):
        cls = type(value)
        origin = getattr(cls, "__pydantic_generic_metadata__", {}).get("origin") or cls
        # A memory's private subclass of a record travels as the record: the other side then
        # needs only skillbank.records (no memory module, no Chroma) to read it.
        origin = next((c for c in origin.__mro__ if c.__module__ == RECORDS), origin)
        fields = {name: encode(getattr(value, name)) for name in cls.model_fields}
        extra = getattr(value, "__pydantic_extra__", None) or {}
        fields.update({k: encode(v) for k, v in extra.items()})
        return {TAG: "model", "cls": _qualified(origin), "fields": fields}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {TAG: "dc", "cls": _qualified(type(value)),
                "fields": {f.name: encode(getattr(value, f.name))
                           for f in dataclasses.fields(value)}}
    if isinstance(value, PurePath):
        return {TAG: "path", "v": str(value)}
    if isinstance(value, datetime):
        return {TAG: "datetime", "v": value.isoformat()}
    if isinstance(value, date):
        return {TAG: "date", "v": value.isoformat()}
    if isinstance(value, (bytes, bytearray)):
        return {TAG: "bytes", "v": base64.b64encode(bytes(value)).decode("ascii")}
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return encode(value.tolist())
    raise InvalidInputError(
        f"a {type(value).__name__} cannot be sent to the process that owns the memory root; "
        "pass plain values (text, numbers, lists, dicts) or skillbank records")


def decode(value: Any) -> Any:
    """The inverse of `encode`; unknown tags and foreign types are refused."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    tag = value.get(TAG)
    if tag is None:
        return {k: decode(v) for k, v in value.items()}
    if tag == "dict":
        return {_hashable(decode(k)): decode(v) for k, v in value["items"]}
    if tag == "path":
        return Path(value["v"])
    if tag == "datetime":
        return datetime.fromisoformat(value["v"])
    if tag == "date":
        return date.fromisoformat(value["v"])
    if tag == "bytes":
        return base64.b64decode(value["v"])
    if tag == "list":
        cls = _skillbank_class(value["cls"])
        if not issubclass(cls, list):
            raise InvalidInputError(f"{value['cls']!r} is not a list type")
        result = cls(decode(v) for v in value["items"])
        for key, item in value.get("attrs", {}).items():
            setattr(result, key, decode(item))
        return result
    if tag == "model":
        cls = _skillbank_class(value["cls"])
        if not hasattr(cls, "model_construct"):
            raise InvalidInputError(f"{value['cls']!r} is not a record type")
        # The sender built this record through validation; rebuilding field by field keeps
        # nested records (Hit.record) as their own types.
        return cls.model_construct(**{k: decode(v) for k, v in value["fields"].items()})
    if tag == "dc":
        cls = _skillbank_class(value["cls"])
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


def _hashable(value: Any) -> Any:
    return tuple(_hashable(v) for v in value) if isinstance(value, list) else value


def encode_error(exc: BaseException) -> dict[str, Any]:
    """An exception raised by a call, as the client should re-raise it."""
    error: dict[str, Any] = {"cls": _qualified(type(exc)), "message": str(exc)}
    if isinstance(exc, SkillbankError):
        findings = getattr(exc, "findings", None)
        if findings:
            try:
                error["findings"] = encode(findings)
            except InvalidInputError:
                pass
    elif type(exc).__name__ in _BUILTIN_ERRORS and type(exc).__module__ == "builtins":
        error["cls"] = f"builtins:{type(exc).__name__}"
    return error


def decode_error(error: dict[str, Any]) -> BaseException:
    """The exception `encode_error` described (skillbank's own, or a plain built-in one)."""
    name = str(error.get("cls", ""))
    message = str(error.get("message", ""))
    if name.startswith("builtins:") and name[9:] in _BUILTIN_ERRORS:
        return _BUILTIN_ERRORS[name[9:]](message)
    try:
        cls = _skillbank_class(name)
    except (InvalidInputError, ImportError, AttributeError):
        cls = None
    if cls is None or not issubclass(cls, SkillbankError):
        return SkillbankError(f"the owner process raised {name.split(':')[-1]}: {message}")
    try:
        exc = cls(message)
    except TypeError:  # an error type with another constructor: keep its class name in the text
        return SkillbankError(message)
    if "findings" in error and hasattr(exc, "findings"):
        exc.findings = decode(error["findings"])
    return exc
