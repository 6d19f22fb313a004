"""A person's hand edit of a rule file that lands INSIDE the bank's write of it, at a chosen
step, with no timing: hooks on the steps of `skillbank.store.files.guidelines` that run when an
order file exists (its JSON: the step, the file, the text to replace and by what), once.

The same hooks go into an owner process (`owner_client.owner_process(preamble=...)`), so the
edit lands inside the owner's write when a client votes (hunt-loop-shared #1, session 31).
"""

from __future__ import annotations

import json
from pathlib import Path

import skillbank.store.files.guidelines as files

#: Where the edit lands: after the write's stat check (before its read of the file), between
#: its read of the file and the rename, and just after the rename.
STEPS = ("after-stat-check", "before-rename", "after-rename")


def install(order: Path) -> None:
    """Hook the steps (in this process) to carry out the order at `order` when it is there."""
    order = Path(order)

    def edit(step: str) -> None:
        try:
            wanted = json.loads(order.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        if wanted["step"] != step:
            return
        order.unlink()
        path = Path(wanted["path"])
        text = path.read_text(encoding="utf-8")
        assert wanted["old"] in text, text
        path.write_text(text.replace(wanted["old"], wanted["new"]), encoding="utf-8")
        Path(f"{order}.done").touch()

    stale = files.FileGuidelineRecords.stale
    rewrite = files.rewrite_guideline
    atomic_write = files.atomic_write

    def stale_then_edit(self) -> bool:
        answer = stale(self)
        edit("after-stat-check")
        return answer

    def rewrite_then_edit(g, text):
        out = rewrite(g, text)
        edit("before-rename")
        return out

    def write_then_edit(path, data, **kwargs):
        written = atomic_write(path, data, **kwargs)
        if str(path).endswith(".md"):  # the rule file (not the digest beside it)
            edit("after-rename")
        return written

    files.FileGuidelineRecords.stale = stale_then_edit
    files.rewrite_guideline = rewrite_then_edit
    files.atomic_write = write_then_edit


def order_edit(order: Path, step: str, path: str, old: str, new: str) -> None:
    Path(order).write_text(json.dumps({"step": step, "path": path, "old": old, "new": new}),
                           encoding="utf-8")
