"""A `chroma_url` that reaches an HTTP server which is not Chroma: one clear error naming the
URL (without its password) and the setting to fix (hunt-chroma #2, session 24).

A wrong port that is another web service, or Chroma under a wrong path, made chromadb raise a
bare ValueError holding the answer's body: the CLI printed a whole HTML 404 page, or only
"(trace ID: 00000000000000000000000000000000)", and every MCP tool said the same. A proxy's
502/503/504 (its Chroma does not answer) is an outage, worded and handled as one.
"""

from __future__ import annotations

import http.server
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from conftest import free_port, stop_process
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.errors import InvalidInputError
from skillbank.index_outage import ChromaUnavailableError


@pytest.fixture
def web_server(tmp_path):
    """Another web service (`python -m http.server`); under /app every page is an HTML page
    answered with 200, as a single-page app answers."""
    site = tmp_path / "site"
    page = site / "app" / "api" / "v2" / "auth" / "identity"
    page.parent.mkdir(parents=True)
    page.write_text("<!DOCTYPE html><html><body>Welcome</body></html>\n")
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind",
                             "127.0.0.1", "--directory", str(site)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while True:
        try:
            urllib.request.urlopen(url, timeout=1)
            break
        except urllib.error.HTTPError:
            break
        except OSError:
            if proc.poll() is not None or time.time() > deadline:
                pytest.fail("python -m http.server did not start")
            time.sleep(0.2)
    yield url
    stop_process(proc)


def _open(root: Path, url: str, **kw) -> Skillbank:
    return Skillbank.open(root, chroma_url=url, embedding_function=HashEmbedding(),
                          include_bundled=False, **kw)


def test_the_cli_names_the_url_and_the_setting_not_an_html_page(tmp_path, web_server):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLBANK_")}
    env.update(SKILLBANK_EMBEDDING="hash", SKILLBANK_CHROMA_URL=web_server,
               ANONYMIZED_TELEMETRY="False")
    done = subprocess.run([sys.executable, "-m", "skillbank.cli", "--root", str(tmp_path / "r"),
                           "guidelines", "list"], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    said = lines[0]
    assert f"the server at {web_server} did not answer as a Chroma server" in said, said
    assert "HTTP 404" in said and "/api/v2/" in said, said
    assert "SKILLBANK_CHROMA_URL" in said and "--chroma-url" in said, said
    assert "<html" not in said.lower() and "doctype" not in said.lower(), said


def test_the_api_hides_the_password_and_names_a_page_that_is_not_json(tmp_path, web_server):
    port = web_server.rsplit(":", 1)[1]
    with pytest.raises(InvalidInputError) as wrong:
        _open(tmp_path / "r", f"http://alice:s3cret@127.0.0.1:{port}").close()
    assert f"the server at http://127.0.0.1:{port} did not answer" in str(wrong.value)
    assert "s3cret" not in str(wrong.value) and "alice" not in str(wrong.value)
    with pytest.raises(InvalidInputError, match="did not answer as a Chroma server "
                       r"\(its answer is not JSON\)"):
        _open(tmp_path / "r", f"{web_server}/app").close()


def test_chroma_under_a_wrong_path_names_the_url_not_a_trace_id(tmp_path, chroma_server):
    url = f"{chroma_server}/chroma"
    with pytest.raises(InvalidInputError) as wrong:
        _open(tmp_path / "r", url).close()
    said = str(wrong.value)
    assert f"the server at {url} did not answer as a Chroma server (HTTP 404" in said, said
    assert "trace ID" not in said and "SKILLBANK_CHROMA_URL" in said, said


class _ProxyWithoutChroma(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.send_response(503)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_POST = do_GET

    def log_message(self, *args) -> None:  # quiet
        pass


def test_a_proxy_whose_chroma_is_down_is_an_outage(tmp_path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _ProxyWithoutChroma)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with pytest.raises(ChromaUnavailableError, match=r"does not answer \(HTTP 503"):
            _open(tmp_path / "r", url).close()
        # A server's open (`skillbank serve`) starts all the same, searching by keyword.
        with _open(tmp_path / "r", url, start_without_chroma=True) as bank:
            bank.guidelines.learn("Always sign release tarballs with the ocelot key.")
            hits = bank.guidelines.search("sign the ocelot release tarballs")
            assert hits and hits[0].why == "keyword"
    finally:
        server.shutdown()
        server.server_close()
