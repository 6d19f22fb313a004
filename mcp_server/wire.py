"""Screen raw JSON-RPC messages before the SDK sees them, so every malformed one gets an answer.

The MCP SDK parses each stdio line with a strict JSON parser and, when that fails, hands the
error to its dispatcher, which only logs it: the client hears nothing and waits for its
timeout. Over HTTP it answers, but with a raw pydantic dump (and -32602 for a batch). Both
transports run every incoming message through `screen()` first:

- not JSON at all -> -32700 parse error (id null: there is no id to read);
- JSON holding an integer longer than Python converts (4,300 digits) -> -32700 saying so, with
  the request's id when it has a usable one (it was "nested too deeply", id null: session 34);
- JSON holding a lone UTF-16 surrogate (`"\\ud800"`) -> -32700, with the request's id when it
  has one (text must be valid Unicode; the SDK's parser refuses these silently on stdio);
- a JSON array (a JSON-RPC batch; MCP dropped batching in 2025-06-18) -> -32600 for each
  request in it, so a client waiting on those ids hears back;
- anything else that is not one JSON-RPC request, notification or response -> -32600 saying
  which field is wrong.

Messages that pass are handed on unchanged. The error texts say what was wrong and what the
valid form is; they never carry pydantic's dumps or links.
"""

from __future__ import annotations

import json
import sys
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600

VALID_FORM = ('send one JSON-RPC 2.0 object per message, e.g. {"jsonrpc": "2.0", "id": 1, '
              '"method": "tools/list"}')


def error_reply(code: int, message: str, request_id: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response object."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _usable_id(value: Any) -> Any:
    """The id to answer with: a string or integer id as sent, anything else null."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) or (isinstance(value, str) and not _has_surrogate(value)):
        return value
    return None


def _has_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)


def _surrogate_path(value: Any, path: str = "") -> str | None:
    """Where in a parsed message a lone surrogate sits (a dotted path), or None."""
    if isinstance(value, str):
        return (path or "the message") if _has_surrogate(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and _has_surrogate(key):
                return f"a key under {path or 'the message'}"
            found = _surrogate_path(item, here)
            if found:
                return found
    elif isinstance(value, list):
        for number, item in enumerate(value):
            found = _surrogate_path(item, f"{path}[{number}]")
            if found:
                return found
    return None


def _envelope_problem(message: dict[str, Any]) -> str | None:
    """What keeps an object from being a JSON-RPC 2.0 message, or None when it is one."""
    if message.get("jsonrpc") != "2.0":
        return 'field "jsonrpc" must be the string "2.0"'
    has_id = "id" in message
    if has_id and (isinstance(message["id"], bool)
                   or not isinstance(message["id"], (str, int))):
        return 'field "id" must be a string or an integer'
    if "method" in message:
        if not isinstance(message["method"], str) or not message["method"]:
            return 'field "method" must be a non-empty string'
        params = message.get("params")
        if params is not None and not isinstance(params, dict):
            return 'field "params" must be an object (MCP passes parameters by name)'
        return None
    if has_id and ("result" in message or "error" in message):
        if "error" in message and not isinstance(message["error"], dict):
            return 'field "error" must be an object with "code" and "message"'
        return None  # a response to a request the server sent
    if has_id:
        return 'a request needs a "method" field, e.g. "tools/list"'
    return 'a message needs a "method" (request or notification) or a "result"/"error" (response)'


def screen(raw: str | bytes) -> list[dict[str, Any]]:
    """The error replies a raw message deserves; empty when it may go on to the SDK."""
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, (bytes, bytearray)) else raw
    if not text.strip():
        return []
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        return [error_reply(PARSE_ERROR, f"Parse error: not valid JSON ({exc.msg} at line "
                            f"{exc.lineno} column {exc.colno}); " + VALID_FORM)]
    except RecursionError:
        return [error_reply(PARSE_ERROR, "Parse error: not valid JSON (nested too deeply); "
                            + VALID_FORM)]
    except ValueError:  # valid JSON, but an integer past Python's int_max_str_digits
        limit = sys.get_int_max_str_digits()
        return [error_reply(PARSE_ERROR, f"Parse error: a number in the message has more than "
                            f"{limit:,} digits, more than this server reads; send such a value "
                            "as a string", _id_past_long_numbers(text, limit))]
    if isinstance(parsed, list):
        message = ("Invalid request: JSON-RPC batches (arrays) are not supported since MCP "
                   "2025-06-18; " + VALID_FORM)
        ids = [_usable_id(item.get("id")) for item in parsed
               if isinstance(item, dict) and "id" in item]
        ids = [i for i in ids if i is not None]
        return [error_reply(INVALID_REQUEST, message, i) for i in ids] or [
            error_reply(INVALID_REQUEST, message)]
    if not isinstance(parsed, dict):
        kind = {str: "string", int: "number", float: "number", bool: "boolean"}.get(
            type(parsed), "null")
        return [error_reply(INVALID_REQUEST, f"Invalid request: got a JSON {kind} where an "
                            f"object was expected; {VALID_FORM}")]
    request_id = _usable_id(parsed.get("id"))
    where = _surrogate_path(parsed)
    if where is not None:
        return [error_reply(PARSE_ERROR, f"Parse error: {where} holds a lone UTF-16 surrogate "
                            "(such as \\ud800), which is not valid Unicode text; send text as "
                            "UTF-8 or as escaped surrogate pairs", request_id)]
    problem = _envelope_problem(parsed)
    if problem is not None:
        return [error_reply(INVALID_REQUEST, f"Invalid request: {problem}; {VALID_FORM}",
                            request_id)]
    return []


def _id_past_long_numbers(text: str, limit: int) -> Any:
    """The request's usable id, read with every integer longer than `limit` digits left out
    (one that long is no id to answer with); None when there is none to read."""
    def integer(digits: str) -> Any:
        return int(digits) if len(digits.lstrip("-")) <= limit else None

    try:
        parsed = json.loads(text, parse_int=integer)
    except (ValueError, RecursionError):
        return None
    return _usable_id(parsed.get("id")) if isinstance(parsed, dict) else None


def dumps(reply: dict[str, Any]) -> str:
    """One reply as a single JSON line (no newline)."""
    return json.dumps(reply, ensure_ascii=False, separators=(",", ":"))
