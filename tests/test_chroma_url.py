"""`chroma_url` reaches the server it names: an IPv6 address, a path behind a proxy, and a user
and password for a server behind basic auth.

Before, the URL was cut down to its host name and port and chromadb wrote
``http://{host}:{port}``: ``http://[::1]:8000`` became ``http://::1:8000`` (no server can be
reached there), and a path and credentials were dropped without a word.
"""

from __future__ import annotations

import base64
import http.server
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import stop_process
from skillbank import Skillbank
from skillbank.chroma_client import make_client, server_url
from skillbank.embeddings import HashEmbedding


@pytest.mark.parametrize("given, expected", [
    ("http://[::1]:8123", "http://[::1]:8123"),
    ("[::1]:8123", "http://[::1]:8123"),
    ("http://[::1]", "http://[::1]:8000"),
    ("127.0.0.1:8000", "http://127.0.0.1:8000"),
    ("chroma.internal", "http://chroma.internal:8000"),
    ("https://chroma.example.org/chroma/", "https://chroma.example.org:443/chroma"),
    ("http://alice:s3cret@10.0.0.5:9000", "http://10.0.0.5:9000"),  # basic_auth sends them
    ("HTTPS://Chroma.example.org:8443/", "https://Chroma.example.org:8443"),
])
def test_server_url_keeps_what_the_url_says(given, expected):
    assert server_url(given) == expected


def _ipv6_port() -> int | None:
    try:
        with socket.socket(socket.AF_INET6) as sock:
            sock.bind(("::1", 0))
            return sock.getsockname()[1]
    except OSError:
        return None


def test_a_chroma_server_on_ipv6_loopback(tmp_path):
    chroma = Path(sys.executable).parent / "chroma"
    port = _ipv6_port()
    if port is None or not chroma.exists():
        pytest.skip("no IPv6 loopback or no chroma CLI")
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    proc = subprocess.Popen([str(chroma), "run", "--path", str(tmp_path / "data"), "--host", "::1",
                             "--port", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env)
    url = f"http://[::1]:{port}"
    try:
        deadline = time.time() + 300  # generous: start-up under load
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1)
                break
            except OSError:
                if proc.poll() is not None or time.time() > deadline:
                    pytest.fail("chroma run on [::1] did not start")
                time.sleep(0.3)
        bank = Skillbank.open(tmp_path / "root", chroma_url=url,
                              embedding_function=HashEmbedding())
        try:
            bank.skills.save("slide-deck", "Turn meeting notes into a short slide deck.",
                             "# Steps\n\nOne idea per slide.\n")
            hits = bank.skills.search("turn meeting notes into slides", k=1)
            assert [hit.name for hit in hits] == ["slide-deck"]
            assert bank.stats()["chroma"] == url
        finally:
            bank.close()
    finally:
        stop_process(proc)


class _Recorder(http.server.BaseHTTPRequestHandler):
    seen: list[tuple[str, str | None]] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.seen.append((self.path, self.headers.get("Authorization")))
        self.send_response(503)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args) -> None:  # quiet
        pass


def test_the_urls_path_and_credentials_reach_the_server(caplog):
    import logging

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Recorder.seen.clear()
    try:
        port = server.server_address[1]
        with caplog.at_level(logging.DEBUG), pytest.raises(Exception):  # 503: no client
            make_client(url=f"http://alice:s3cret@127.0.0.1:{port}/chroma", timeout=10)
    finally:
        server.shutdown()
        server.server_close()
    assert _Recorder.seen, "chromadb asked nothing"
    path, auth = _Recorder.seen[0]
    assert path.startswith("/chroma/api/v2/"), path
    assert auth == "Basic " + base64.b64encode(b"alice:s3cret").decode()
    assert "HTTP Request" in caplog.text and "s3cret" not in caplog.text  # httpx logs URLs


@pytest.mark.parametrize("url, says", [
    ("htps://admin:S3cret@127.0.0.1:{port}", "must start with http:// or https://, not htps://"),
    ("ftp://127.0.0.1:{port}", "must start with http:// or https://, not ftp://"),
    ("htp://127.0.0.1:{port}", "must start with http:// or https://, not htp://"),
    ("http://127.0.0.1:99999", "impossible port (Port out of range"),
    ("http://127.0.0.1:80a", "impossible port (Port could not be cast"),
])
def test_a_chroma_url_that_cannot_be_right_is_refused_before_anything_is_sent(tmp_path, url,
                                                                             says):
    """hunt-chroma #6 and #7, session 29: a misspelt scheme was taken as plain http, so a
    `htps://user:password@host` URL sent the password in clear text to whoever listened; an
    impossible port was urllib's bare ValueError, exit 1, naming neither the URL nor the
    setting. Now both are refused at open (exit 2 in the CLI), and nothing reaches the port."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.settimeout(0.5)
    url = url.format(port=listener.getsockname()[1])
    from skillbank.errors import InvalidInputError

    try:
        with pytest.raises(InvalidInputError) as refused:
            Skillbank.open(tmp_path / "root", chroma_url=url, chroma_timeout=5,
                           embedding_function=HashEmbedding(), include_bundled=False)
        with pytest.raises(OSError):  # nobody connected: no request, no credentials sent
            listener.accept()
    finally:
        listener.close()
    message = str(refused.value)
    assert message.startswith("chroma_url ") and says in message, message
    assert "SKILLBANK_CHROMA_URL" in message and "S3cret" not in message, message
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLBANK_")
           or k == "SKILLBANK_MODEL_DIR"}
    env.update(SKILLBANK_CLI_OWNER="0", SKILLBANK_EMBEDDING="hash", ANONYMIZED_TELEMETRY="False")
    done = subprocess.run([sys.executable, "-m", "skillbank.cli", "--root", str(tmp_path / "cli"),
                           "--chroma-url", url, "--no-bundled", "stats"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert says in done.stderr and "S3cret" not in done.stderr + done.stdout, done.stderr
