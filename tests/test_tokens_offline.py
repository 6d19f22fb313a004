"""Token counting is offline and leaves the host process's tiktoken alone (hunt-wheel #1, session 38).

skillbank used to set TIKTOKEN_CACHE_DIR to its own folder (holding only cl100k_base), so every
other tiktoken use in the process, and every child process, stopped finding the app's own cache.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# The app's own cached tiktoken file, in tiktoken's default cache under $TMPDIR; an unresolvable
# URL, so the only way to get its content is from that cache (no network is ever reached).
APP = r"""
import hashlib, json, os, subprocess, sys, tempfile
from pathlib import Path
url = "https://skillbank-test.invalid/app.tiktoken"
cache = Path(tempfile.gettempdir()) / "data-gym-cache"
cache.mkdir(parents=True, exist_ok=True)
(cache / hashlib.sha1(url.encode()).hexdigest()).write_bytes(b"the app's own file")
import tiktoken.load
from skillbank.tokens import count_tokens
n = count_tokens("hello world, it's 2026")
try:
    app = tiktoken.load.read_file_cached(url).decode()
except Exception as exc:
    app = f"FAILED: {type(exc).__name__}"
child = subprocess.run([sys.executable, "-c", "import os; print(os.environ.get('TIKTOKEN_CACHE_DIR'))"],
                       capture_output=True, text=True).stdout.strip()
print(json.dumps({"n": n, "env": os.environ.get("TIKTOKEN_CACHE_DIR"), "child": child,
                  "app": app, "cache": sorted(p.name for p in cache.iterdir())}))
"""


def run(code: str, tmp_path: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR")}
    env.update({"TMPDIR": str(tmp_path), "PYTHONPATH": str(REPO), **extra})
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_counting_tokens_leaves_the_hosts_tiktoken_cache_alone(tmp_path):
    result = run(APP, tmp_path)
    assert result["env"] is None and result["child"] == "None"
    assert result["app"] == "the app's own file"
    # a real count (the estimate would be 7), and nothing copied into tiktoken's cache
    assert result["n"] == 8
    assert len(result["cache"]) == 1


def test_the_copied_cl100k_settings_match_tiktokens_own(tmp_path):
    code = r"""
import json
from skillbank import tokens
import tiktoken, tiktoken_ext.openai_public as public
own = public.cl100k_base()  # reads the shipped file through TIKTOKEN_CACHE_DIR, set for this child only
mine = tokens._local_encoding()
text = "Ünïcode  \n\n tabs\tand 1234567 numbers; it's <|endoftext|> done\r\n" * 50
reference = tiktoken.get_encoding("cl100k_base")
print(json.dumps({"pat": own["pat_str"] == tokens._PAT_STR,
                  "special": own["special_tokens"] == tokens._SPECIAL_TOKENS,
                  "ranks": own["mergeable_ranks"] == mine._mergeable_ranks,
                  "same": reference.encode(text, disallowed_special=()) == mine.encode(text, disallowed_special=())}))
"""
    shipped = REPO / "skillbank" / "_tiktoken_cache"
    assert run(code, tmp_path, TIKTOKEN_CACHE_DIR=str(shipped)) == {
        "pat": True, "special": True, "ranks": True, "same": True}
