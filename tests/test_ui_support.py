"""Shared by the memory-browser tests (no tests here): a seeded root and the server in a thread."""

from __future__ import annotations

import inspect
import socket
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from conftest import write_skill

PDF_BODY = """# Filling PDF forms

Use `pypdf` to read the fields, then write the values.

## Steps

1. List the fields with `scripts/fields.py`.
2. Fill them **by name**; never by position.
3. Flatten the form so values cannot be edited.

<script>alert("not run")</script>

```bash
python scripts/fields.py in.pdf
```
"""


CSV_TASKS = [
    "Import the sales CSV file into the orders database table",
    "Import the customers CSV file into the accounts database table",
    "Import the returns CSV file into the refunds database table",
]


def seed(bank: Any, skills_root: Path) -> dict[str, str]:
    """A small but varied memory: skills, guidelines (one pending), experiences and lessons."""
    write_skill(skills_root, "pdf-forms", "Fill, flatten and merge PDF forms. Use when a task "
                "mentions PDF forms or fields.", PDF_BODY)
    (skills_root / "pdf-forms" / "scripts").mkdir(exist_ok=True)
    (skills_root / "pdf-forms" / "scripts" / "fields.py").write_text("print('fields')\n")
    write_skill(skills_root, "slide-deck", "Turn meeting notes into a slide deck. Use for "
                "presentations and talks.")
    write_skill(skills_root, "sql-migrations", "Write safe database schema migrations for "
                "tables and indexes. Use when changing a schema.")
    bank.sync()
    bank.skills.create("release-notes", "Write release notes from merged pull requests.",
                       "# Release notes\n\nGroup changes by *feature*, *fix* and *breaking*.\n")
    for _ in range(3):
        bank.skills.record_use("pdf-forms", success=True)
    bank.skills.record_use("sql-migrations", success=False)
    bank.skills.record_use("slide-deck", success=True)
    british = bank.guidelines.learn("Use British spelling in all documentation.")
    american = bank.guidelines.learn("Use American spelling in all documentation.",
                                     task="Write the install guide")
    bank.guidelines.learn("Indent Python code with four spaces.")
    pending = bank.guidelines.learn("Never build SQL queries with f-strings.",
                                    trusted=False, source="web-page")
    failed = bank.experiences.record(
        task="Migrate the users table to add an email column", outcome="failure",
        feedback="Forgot to lock the table; concurrent writes were lost.",
        lessons=["Lock the table before altering it"], tags=["db", "migration"])
    ok = bank.experiences.record(task="Deploy the web app to staging", outcome="success",
                                 feedback="Smooth: the health check passed first time.",
                                 tags=["deploy"])
    other = bank.experiences.record(task="Summarise the quarterly report", outcome="partial",
                                    tags=["docs"], namespace="research")
    untrusted = ""
    if "trusted" in inspect.signature(bank.experiences.record).parameters:
        untrusted = bank.experiences.record(
            task="Renew the vendor's TLS certificate", outcome="success", tags=["vendor"],
            feedback="Reported by a web page the agent read.", trusted=False)
    if callable(getattr(bank.skills, "propose", None)):  # skills written from experience
        for task in CSV_TASKS:
            bank.experiences.record(
                task=task, outcome="success", namespace="imports",
                when_to_use="When loading CSV exports into a SQL database",
                steps=[{"action": "detect_encoding"}, {"action": "copy_into_table"}],
                lessons=["Detect the file encoding before parsing."])
        bank.skills.propose(namespace="imports", min_support=3)
    return {"pending": pending.entries[0].guideline_id or "", "failed": failed, "ok": ok,
            "other": other, "untrusted": untrusted, "old_rule": british.entries[0].guideline_id or "",
            "new_rule": american.entries[0].guideline_id or ""}


@contextmanager
def served(app: Any) -> Iterator[str]:
    """Run the app with uvicorn on a free loopback port in a thread; yields its base URL."""
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 300  # a bounded wait for start-up, not a timing assertion
    while not server.started and time.monotonic() < deadline:  # (20 s was tight at load 20)
        threading.Event().wait(0.05)
    assert server.started, "the browser's server did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
