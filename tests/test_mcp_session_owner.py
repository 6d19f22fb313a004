"""An MCP session answers the principal it was made for alone (hunt-mcpmany, session 24).

The SDK let any valid bearer token use any `Mcp-Session-Id`: bob, given alice's session id (a
log line, a proxy), was answered on it, and its GET stream would carry her notifications and
the sampling requests that hold her critiques. The MCP spec asks servers to bind session ids to
user-specific information. Now a request with another principal's token on a session is answered
as an unknown session is (404 "Session not found"), and the session keeps working for its maker.
A real `skillbank serve --transport http --tokens FILE`, raw HTTP as a client sends it.
"""

from __future__ import annotations

import httpx

from mcp_http import serving_http

VERSION = "2025-06-18"
STATIC = "the-static-token-of-this-server"


def _headers(token: str, session: str | None = None) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
               "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": VERSION}
    if session:
        headers["Mcp-Session-Id"] = session
    return headers


def _session(mcp: str, token: str) -> str:
    hello = httpx.post(mcp, headers=_headers(token), timeout=120, json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": VERSION, "capabilities": {},
            "clientInfo": {"name": "session-owner", "version": "1"}}})
    assert hello.status_code == 200, hello.text
    session = hello.headers["mcp-session-id"]
    done = httpx.post(mcp, headers=_headers(token, session), timeout=120,
                      json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert done.status_code in (200, 202), done.text
    return session


def _tools(mcp: str, token: str, session: str) -> httpx.Response:
    return httpx.post(mcp, headers=_headers(token, session), timeout=120,
                      json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"})


def test_a_session_answers_its_own_principal_alone(tmp_path):
    from skillbank.mcp_server.identity import add_principal

    tokens_file = tmp_path / "tokens.toml"
    alice = add_principal(tokens_file, "alice", namespace="alice", role="contributor")
    bob = add_principal(tokens_file, "bob", namespace="bob", role="contributor")
    with serving_http(tmp_path / "root", tmp_path / "serve.log", "--tokens",
                      str(tokens_file), "--token", STATIC) as url:
        mcp = url + "/mcp"
        hers = _session(mcp, alice)
        assert _tools(mcp, alice, hers).status_code == 200

        taken = _tools(mcp, bob, hers)  # bob's token on alice's session
        assert taken.status_code == 404, taken.text
        assert "Session not found" in taken.text and "alice" not in taken.text
        stream = httpx.get(mcp, headers=_headers(bob, hers), timeout=120)  # her GET stream
        assert stream.status_code == 404, stream.text
        ended = httpx.delete(mcp, headers=_headers(bob, hers), timeout=120)  # nor end it
        assert ended.status_code == 404, ended.text

        assert _tools(mcp, alice, hers).status_code == 200  # still hers, and alive
        his = _session(mcp, bob)
        assert _tools(mcp, bob, his).status_code == 200
        assert _tools(mcp, alice, his).status_code == 404

        # A session of the static --token (no principal) is bound too (review F1).
        anonymous = _session(mcp, STATIC)
        assert _tools(mcp, bob, anonymous).status_code == 404
        assert _tools(mcp, STATIC, anonymous).status_code == 200

        # Ended by its maker: gone for everyone, its maker included.
        assert httpx.delete(mcp, headers=_headers(bob, his), timeout=120).status_code == 200
        assert _tools(mcp, bob, his).status_code == 404


def test_made_up_session_ids_are_refused_and_push_no_binding_out():
    """Every id a request carried was bound, and the table dropped its oldest past 10,000: bob
    sending 10,000 made-up ids pushed alice's binding out and then used her session (review F1,
    session 24). An id the server never handed out is refused and bound to no one."""
    import asyncio

    from skillbank.mcp_server.http import SessionOwners

    owners = SessionOwners()
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    async def handed_out(session: str, who: str) -> None:
        await owners.binding(send, who, None, "POST")(
            {"type": "http.response.start", "status": 200,
             "headers": [(b"mcp-session-id", session.encode())]})

    asyncio.run(handed_out("alices-session", "alice"))
    for n in range(20_000):
        assert not owners.admits(f"made-up-{n}", "bob")
    assert not owners.admits("alices-session", "bob")
    assert owners.admits("alices-session", "alice")
    assert not owners.admits("made-up-7", "bob")  # still bound to no one
