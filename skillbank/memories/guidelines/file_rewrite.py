"""Writing a guideline over its file without undoing what a person wrote in it.

Guideline files are edited by hand and reviewed in git (docs/operating.md). Every vote (an
untrusted one included), reinforcement or status change used to render the whole file anew
(`render_guideline`): a curator's YAML comments (``status: active  # reviewed by carol``), keys
skillbank does not know (``reviewed_by: carol``) and the body's paragraph breaks were dropped,
and each vote showed as a rewrite of the curator's file (hunt-curator #6, session 25).

`rewrite_guideline` changes only the frontmatter entries whose value changed (a counter line,
``updated:``), adds the ones the file lacks, and leaves every other line as written: comments,
unknown keys, blank lines, the body while the rule's text is the same. The edit works on
top-level ``key:`` lines; a frontmatter it does not follow (a quoted or repeated key, an entry
that does not start at a line of its own) or an edit that does not read back as the record gets
the whole frontmatter rendered again, still with the person's unknown keys and body. Every
result is parsed back and compared with the record before it is used, so a kept line can
never change what the file says.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from skillbank.memories.guidelines.files import (
    _CLOSE, _OPEN, FRONTMATTER_KEYS, OPTIONAL_KEYS, _load_yaml, dump_yaml, frontmatter_text,
    frontmatter_values, parse_guideline, render_guideline)
from skillbank.records import Guideline

#: A top-level entry's first line: `key:` at the start of the line (the keys skillbank writes,
#: and the unknown ones a person adds, like `reviewed_by` or `reviewed-by`).
_KEY_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(?=[ \t\r\n]|$)")


def rewrite_guideline(g: Guideline, previous: str | None) -> str:
    """The file text of `g` written over `previous` (the file as it is now; None: no file):
    the person's lines kept, the changed entries rewritten (see the module docstring)."""
    if not previous:
        return render_guideline(g)
    # Read with the frontmatter's own topic: the folder files the rule, and a `topic:` line
    # that says otherwise (a file moved by hand to another topic folder) is rewritten to the
    # folder's, as it always was.
    old, findings = parse_guideline(previous, path=g.path, expected_id=g.id)
    if old is None:  # not readable as this rule: nothing of it to keep
        return render_guideline(g)
    if any(f.code == "id-mismatch" for f in findings):  # an `id:` line naming another rule
        old = old.model_copy(update={"id": ""})  # is rewritten, as the whole render did (F7)
    # The line edit first (it dumps only the changed entries), then a whole new frontmatter.
    for make in (_edited, _rendered_keeping):
        candidate = make(g, old, previous)
        if candidate is not None and _reads_back_as(candidate, g):
            return candidate
    return render_guideline(g)


def _reads_back_as(text: str, g: Guideline) -> bool:
    """Whether `text` parses to exactly what `g` holds (every frontmatter value and the rule)."""
    parsed, _ = parse_guideline(text, path=g.path, expected_id=g.id, expected_topic=g.topic)
    return (parsed is not None and parsed.text == g.text
            and frontmatter_values(parsed) == frontmatter_values(g))


def _split(text: str) -> tuple[str, str, str] | None:
    """(opening line, frontmatter, closing line and body) of a guideline file."""
    opening = _OPEN.match(text)
    closing = _CLOSE.search(text, opening.end()) if opening else None
    if opening is None or closing is None:
        return None
    return text[:opening.end()], text[opening.end():closing.start()], text[closing.start():]


def _body(g: Guideline, old: Guideline, tail: str, newline: str) -> str:
    """The closing line and the body: the person's as written while the rule is the same
    (paragraphs and all), else the new rule on one line."""
    if old.text == g.text:
        return tail
    closing = tail.split("\n", 1)[0].rstrip("\r")
    return f"{closing}{newline}{g.text}{newline}"


def _segments(front: str) -> list[list[Any]] | None:
    """The frontmatter as [key or None, lines]: one per top-level entry (its `key:` line and the
    indented or `- ` lines under it) and one per blank or comment line between entries. None
    when a line is none of these (a quoted key, a flow mapping at the margin ...)."""
    segments: list[list[Any]] = []
    for line in re.split(r"(?<=\n)", front):
        if not line:
            continue
        if line[:1] in (" ", "\t", "-"):  # under the last entry (a blank line inside included)
            last = max((i for i, seg in enumerate(segments) if seg[0] is not None), default=None)
            if last is None:
                return None
            for seg in segments[last + 1:]:
                segments[last][1].extend(seg[1])
            del segments[last + 1:]
            segments[last][1].append(line)
        elif not line.strip() or line.lstrip().startswith("#"):
            segments.append([None, [line]])
        else:
            key = _KEY_LINE.match(line)
            if key is None:
                return None
            segments.append([key.group(1), [line]])
    keys = [seg[0] for seg in segments if seg[0] is not None]
    return segments if len(keys) == len(set(keys)) else None


def _inline_comment(line: str) -> str:
    """The `  # ...` comment a one-line entry ends with ("" if none): the first `#` after a
    space whose removal leaves the value the same."""
    text = line.rstrip("\r\n")
    try:
        whole = yaml.safe_load(text)
    except yaml.YAMLError:
        return ""
    for found in re.finditer(r"[ \t]#", text):
        value = text[:found.start()].rstrip()
        try:
            if yaml.safe_load(value) == whole:
                return text[len(value):]
        except yaml.YAMLError:
            continue
    return ""


def _entry(key: str, value: Any, newline: str, old_lines: list[str] | None) -> list[str]:
    """`key: value` as `render_guideline` writes it; a one-line entry keeps the comment its
    old line ended with."""
    lines = dump_yaml({key: value}).splitlines()
    if old_lines is not None and len(old_lines) == 1 and len(lines) == 1:
        lines[0] += _inline_comment(old_lines[0])
    return [line + newline for line in lines]


def _edited(g: Guideline, old: Guideline, previous: str) -> str | None:
    """`previous` with only the changed entries rewritten and the missing ones added."""
    parts = _split(previous)
    segments = _segments(parts[1]) if parts else None
    if parts is None or segments is None:
        return None
    head, _, tail = parts
    newline = "\r\n" if head.endswith("\r\n") else "\n"
    before, after = frontmatter_values(old), frontmatter_values(g)
    for key in FRONTMATTER_KEYS:
        wanted = key not in OPTIONAL_KEYS or bool(after[key])
        at = next((i for i, seg in enumerate(segments) if seg[0] == key), None)
        if at is not None:
            if before[key] == after[key]:
                continue  # the person's line, as written
            if wanted:
                segments[at][1] = _entry(key, after[key], newline, segments[at][1])
            else:
                del segments[at]
        elif wanted:
            segments.insert(_insert_at(segments, key), [key, _entry(key, after[key], newline,
                                                                    None)])
    front = "".join(line for seg in segments for line in seg[1])
    return head + front + _body(g, old, tail, newline)


def _insert_at(segments: list[list[Any]], key: str) -> int:
    """Where a missing entry goes: after the entry written before it, else before the one
    written after it (the order `render_guideline` writes), else at the end."""
    order = FRONTMATTER_KEYS.index(key)
    earlier, later = set(FRONTMATTER_KEYS[:order]), set(FRONTMATTER_KEYS[order + 1:])
    found = [i for i, seg in enumerate(segments) if seg[0] in earlier]
    if found:
        return found[-1] + 1
    return next((i for i, seg in enumerate(segments) if seg[0] in later), len(segments))


def _rendered_keeping(g: Guideline, old: Guideline, previous: str) -> str | None:
    """The whole frontmatter rendered again, plus the unknown keys `previous` holds, and its
    body while the rule is the same: what is kept when `_edited` cannot follow the file."""
    parts = _split(previous)
    if parts is None:
        return None
    try:
        data = _load_yaml(parts[1])
    except Exception:  # the same loader read it a moment ago (`parse_guideline`)
        return None
    if not isinstance(data, dict):
        return None
    unknown = {k: v for k, v in data.items() if k not in FRONTMATTER_KEYS}
    try:
        kept = dump_yaml(unknown) if unknown else ""
    except yaml.YAMLError:  # a key or value YAML cannot write back as it read it
        return None
    return "---\n" + frontmatter_text(g) + kept + _body(g, old, parts[2], "\n")
