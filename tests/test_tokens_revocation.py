"""A tokens file deleted while the server runs revokes its tokens (it used to keep the last
good version: `rm tokens.toml` left every token working until the server restarted)."""

from __future__ import annotations

from skillbank.mcp_server.identity import TokensFile, add_principal, check_bearer


def test_deleting_the_tokens_file_revokes_its_tokens(tmp_path):
    path = tmp_path / "tokens.toml"
    token = add_principal(path, "alice", namespace="alice", role="contributor")
    tokens = TokensFile(path)
    principal, refusal = check_bearer(tokens, f"Bearer {token}", False)
    assert principal is not None and principal.name == "alice" and refusal is None
    path.unlink()
    principal, refusal = check_bearer(tokens, f"Bearer {token}", False)
    assert principal is None and refusal is not None and "no principal" in refusal[0]
    token2 = add_principal(path, "bob", namespace="bob", role="reader")  # back: read again
    assert tokens.lookup(token2).name == "bob" and tokens.lookup(token) is None


def test_a_broken_edit_still_keeps_the_last_good_tokens(tmp_path):
    path = tmp_path / "tokens.toml"
    token = add_principal(path, "alice", namespace="alice", role="contributor")
    tokens = TokensFile(path)
    path.write_text("[principals.alice\nbroken")
    path.chmod(0o600)
    assert tokens.lookup(token).name == "alice"
