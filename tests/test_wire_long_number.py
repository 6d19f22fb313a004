"""A JSON number longer than Python converts to an int (4,300 digits) is refused for what it is
(hunt-badinput #5, session 34).

Before: `find_skills` with `"k": <4,301 nines>`, or an id of 5,000 digits, got "Parse error: not
valid JSON (nested too deeply)" with id null, over stdio and HTTP alike (`wire.screen` took
Python's "Exceeds the limit (4300 digits) for integer string conversion" for a RecursionError).
"""

from __future__ import annotations

import json
import sys

import httpx

from mcp_http import serving_http
from skillbank.mcp_server.wire import PARSE_ERROR, screen

LIMIT = sys.get_int_max_str_digits()


def request(k: str, request_id: str = "4") -> str:
    return ('{"jsonrpc":"2.0","id":' + request_id + ',"method":"tools/call","params":{"name":'
            '"find_skills","arguments":{"task":"slides","k":' + k + '}}}')


def test_a_number_too_long_is_named_and_answered_with_the_request_id():
    reply, = screen(request("9" * (LIMIT + 1)))
    assert reply["id"] == 4, reply
    assert reply["error"]["code"] == PARSE_ERROR
    message = reply["error"]["message"]
    assert f"a number in the message has more than {LIMIT:,} digits" in message, message
    assert "nested" not in message and "send such a value as a string" in message
    # An id that long is no id to answer with; a number at the limit goes on to the tools.
    too_long_id, = screen(request("5", "9" * 5_000))
    assert too_long_id["id"] is None and "more than" in too_long_id["error"]["message"]
    assert screen(request("9" * LIMIT)) == []
    # Deep nesting still says so.
    deep, = screen("[" * 100_000 + "]" * 100_000)
    assert "nested too deeply" in deep["error"]["message"]


def test_the_http_server_says_so(tmp_path):
    token = "long-number-token-1234567890"
    with serving_http(tmp_path / "root", tmp_path / "serve.log", "--token", token) as url:
        answer = httpx.post(url + "/mcp", content=request("9" * (LIMIT + 1)), timeout=120,
                            headers={"Authorization": f"Bearer {token}",
                                     "Content-Type": "application/json",
                                     "Accept": "application/json, text/event-stream"})
    reply = json.loads(answer.text)
    assert reply["id"] == 4 and f"more than {LIMIT:,} digits" in reply["error"]["message"], reply
