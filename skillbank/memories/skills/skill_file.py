"""Read, validate and write SKILL.md files (the Agent Skills open format).

A SKILL.md is YAML frontmatter between two ``---`` lines followed by a markdown body.

Two levels of strictness, because the format has two audiences:

* **Loading** (:func:`parse_skill_text`, :func:`read_skill_file`) follows the client guide's
  lenient parsing: a skill written for another client should still load. Only files that cannot
  be understood at all are refused — too large, binary, not UTF-8, no frontmatter, unparseable or
  hostile YAML, no description, or one that is a YAML list or mapping (served as Python text
  such as "['one', 'two']" before, hunt-corpus #7). Everything else is reported as a *warning*
  and the skill loads.
  Contract: the returned document is ``None`` exactly when there is at least one ``error``
  finding.
* **Validating** (:func:`validate_skill`, :func:`validate_name`) applies the spec as written and
  reports violations as *errors*; that is what ``skillbank skills validate`` and skill authoring
  use.

Files are untrusted input (they come from git clones and models), so parsing is bounded: file
size, frontmatter size, YAML alias count, node count and nesting depth are all capped before a
Python object is ever built.
"""

from __future__ import annotations

import os
import re
import stat
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

from skillbank.records import Finding

if TYPE_CHECKING:
    import yaml

__all__ = [
    "MAX_SKILL_BYTES",
    "MAX_FRONTMATTER_CHARS",
    "KNOWN_KEYS",
    "SkillFileError",
    "SkillDocument",
    "parse_skill_text",
    "merge_conflicts",
    "read_skill_file",
    "validate_skill",
    "validate_name",
    "render_skill",
    "load_or_raise",
]

#: Largest SKILL.md we read. Skills are prompts; a bigger file is a mistake or an attack.
MAX_SKILL_BYTES = 1 << 20
#: Largest frontmatter block (characters). Real frontmatter is a few hundred bytes.
MAX_FRONTMATTER_CHARS = 64 * 1024
#: YAML bomb guards (billion laughs, deep nesting, self-referencing anchors).
MAX_ALIASES = 100
MAX_NODES = 10_000
MAX_DEPTH = 20

MAX_NAME = 64
#: The longest name a served skill can have: its frontmatter holds it. `MAX_NAME` is the spec's
#: limit for a name skillbank creates; a skill whose name breaks it is still served (and
#: flagged), so what loads a served skill by name takes any name a search can return: the MCP
#: `load_skill` refused, as a schema error, a 76-character name `find_skills` had just routed to
#: (hunt-routing #7, session 28).
MAX_SERVED_NAME = MAX_FRONTMATTER_CHARS
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
KNOWN_KEYS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")


def listed_description(description: str) -> str:
    """A description as a listing of skills carries it: within the spec's `MAX_DESCRIPTION`.

    A longer one is served by `load` with a warning, but MCP `resources/list` carried a
    third-party skill's 60 KB description whole, into every listing a client loads into its
    context (`find_skills` and the memory block trimmed it)."""
    from skillbank.text_cut import cut_at_word

    return cut_at_word(description, MAX_DESCRIPTION)


@cache
def _yaml() -> Any:
    """PyYAML, imported on the first parse or render, not with this module: a server whose skill
    files are unchanged since its index snapshot never parses one before its first answer, and
    the import was ~15-20 ms of it (#27)."""
    import yaml

    return yaml


def _loader(text: str) -> Any:
    # libyaml's parser is ~10x faster; fall back to pure Python where it is not compiled in.
    yaml = _yaml()
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)


_OPEN = re.compile(r"\A(?:[ \t]*\r?\n)*?---[ \t]*\r?\n")
_CLOSE = re.compile(r"^---[ \t]*\r?$", re.M)
_NAME_CHARS = re.compile(r"[a-z0-9-]+")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
#: Bidirectional embedding, override and isolate controls: a description holding U+202E shows
#: its text in another order than it is stored ("Trojan Source"), and was accepted and served
#: while C0 controls were refused (hunt-mcphttp #4b, session 36). No description needs them
#: (right-to-left scripts display without them; the marks U+200E/U+200F stay allowed).
BIDI_CONTROL = re.compile("[\u202a-\u202e\u2066-\u2069]")
# A top-level `key: value` line whose plain value may hold a colon (repair candidates).
_PLAIN_LINE = re.compile(r"([A-Za-z0-9_][\w.-]*[ \t]*:[ \t]+)(.*)")
_NOT_PLAIN = tuple("'\"|>[{&*!#%@`")

Severity = Literal["error", "warning"]


class SkillFileError(ValueError):
    """A SKILL.md that cannot be loaded at all; ``findings`` says why."""

    def __init__(self, message: str, findings: list[Finding]):
        super().__init__(message)
        self.findings = findings


@dataclass
class SkillDocument:
    """A parsed SKILL.md: the frontmatter mapping verbatim (file order, unknown keys kept) and body.

    ``fallback_name`` is the skill folder's name; it stands in for a missing ``name`` so that a
    lenient load still yields a usable skill, and it is what ``name`` must match.
    """

    frontmatter: dict[str, Any]
    body: str
    fallback_name: str | None = None

    @property
    def name(self) -> str:
        value = self.frontmatter.get("name")
        if value is None or value == "":
            return self.fallback_name or ""
        return str(value)

    @property
    def description(self) -> str:
        value = self.frontmatter.get("description")
        return "" if value is None else str(value)


def _finding(severity: Severity, code: str, message: str, path: str | None) -> Finding:
    return Finding(severity=severity, code=code, message=message, path=path)


# --------------------------------------------------------------------------------------- parsing


class _TooComplex(Exception):
    """Frontmatter that would be too expensive to build (a YAML bomb or absurd nesting)."""


def _check_graph(root: yaml.Node) -> list[str]:
    """Walk the composed node graph as it would be expanded and refuse bombs.

    The composer shares one node object for an anchor and all its aliases, so a billion-laughs
    document is small here; counting nodes *as expanded* (with early exit) catches it before the
    constructor would build the exponential object. Returns duplicate top-level keys.
    """
    yaml = _yaml()
    seen: set[int] = set()
    aliases = 0
    nodes = 0
    stack: list[tuple[yaml.Node, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if id(node) in seen:  # the composer shares one node per anchor: this is an alias use
            aliases += 1
        seen.add(id(node))
        if depth > MAX_DEPTH:
            raise _TooComplex(f"nesting deeper than {MAX_DEPTH}")
        if nodes > MAX_NODES:
            raise _TooComplex(f"more than {MAX_NODES} nodes once aliases are expanded")
        if aliases > MAX_ALIASES:
            raise _TooComplex(f"more than {MAX_ALIASES} aliases")
        if isinstance(node, yaml.SequenceNode):
            stack.extend((child, depth + 1) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.append((key, depth + 1))
                stack.append((value, depth + 1))
    if not isinstance(root, yaml.MappingNode):
        return []
    counts = Counter(k.value for k, _ in root.value if isinstance(k, yaml.ScalarNode))
    return [k for k, n in counts.items() if n > 1]


def _load_yaml(text: str) -> tuple[Any, list[str]]:
    """``safe_load`` with the bomb guards; returns (data, duplicate top-level keys)."""
    yaml = _yaml()
    loader = _loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, []
        duplicates = _check_graph(node)
        try:
            return loader.construct_document(node), duplicates
        except yaml.YAMLError:
            raise
        except Exception as exc:  # e.g. `date: 2024-13-45` raises ValueError in the constructor
            raise yaml.constructor.ConstructorError(None, None, f"cannot build value ({exc})") from exc
    finally:
        loader.dispose()


def _repair_colons(text: str) -> str:
    """Quote top-level plain values that contain a colon (``description: Use when: X``).

    Such lines are invalid YAML but common in hand-written skills, and lenient clients accept
    them. Only single-line plain values are touched, and only after a strict parse has failed,
    so no valid file ever changes meaning.
    """
    out = []
    for line in text.split("\n"):
        m = _PLAIN_LINE.fullmatch(line)
        if m:
            value = m.group(2).rstrip()  # also drops a CRLF's '\r'
            if ":" in value and not value.startswith(_NOT_PLAIN):
                line = m.group(1) + "'" + value.replace("'", "''") + "'"
        out.append(line)
    return "\n".join(out)


def _yaml_problem(exc: yaml.YAMLError, line_offset: int) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    where = f" (line {mark.line + 1 + line_offset})" if mark is not None else ""
    return f"{problem}{where}"


_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})")


def _marker(line: str, sign: str) -> bool:
    """Whether `line` is git's conflict marker of `sign` ('<' or '>'): seven of it at the start,
    then a space and a label, or nothing."""
    return line.startswith(sign * 7) and (len(line) == 7 or line[7] == " ")


def merge_conflicts(text: str) -> list[int]:
    """The lines (1-based) where git's unresolved merge conflicts start in `text`.

    Why: a SKILL.md left mid-merge passed `skills validate` and both sides of the conflict were
    served to agents as the skill's instructions; in the frontmatter only a raw YAML error said
    something was wrong (hunt-git #2, session 23). A conflict is git's whole pattern, in order:
    a `<<<<<<< ` line, a `=======` line, a `>>>>>>> ` line, each at the start of its line (a
    line of `=======` alone is also a markdown heading's underline). A `<<<<<<< ` inside a fenced
    code block is not one (a skill may teach how to resolve a conflict); the sides of a real
    conflict may open or close fences of their own, so its `=======` and `>>>>>>> ` are looked
    for whatever the fences. A conflict wholly inside a code block is therefore not found.
    """
    if "<<<<<<<" not in text:
        return []
    lines = [line.rstrip("\r") for line in text.split("\n")]
    found: list[int] = []
    fence = ""  # the opening fence (``` or ~~~, or longer) while inside a fenced code block
    for number, line in enumerate(lines):
        if fence:
            if line.strip() and line.strip() == fence[0] * len(line.strip()) \
                    and len(line.strip()) >= len(fence):
                fence = ""
        elif opening := _FENCE.match(line):
            fence = opening.group(1)
        elif _marker(line, "<") and _conflict_closes(lines, number + 1):
            found.append(number + 1)
    return found


def _conflict_closes(lines: list[str], start: int) -> bool:
    """Whether a `=======` and then a `>>>>>>> ` line follow `lines[start - 1]`'s `<<<<<<< `
    before the next `<<<<<<< ` (each line is looked at from at most two starts: linear)."""
    middle = False
    for line in lines[start:]:
        if _marker(line, "<"):
            return False
        if line.rstrip() == "=" * 7:
            middle = True
        elif middle and _marker(line, ">"):
            return True
    return False


def _conflict_finding(text: str, label: str, path: str | None) -> Finding | None:
    """The error for a file with unresolved merge conflicts (`merge_conflicts`), or None."""
    lines = merge_conflicts(text)
    if not lines:
        return None
    more = f", and {len(lines) - 1} more" if len(lines) > 1 else ""
    return _finding("error", "merge-conflict",
                    f"{label}: unresolved merge conflict (line {lines[0]}{more}): git's "
                    "<<<<<<< / ======= / >>>>>>> markers are still in the file; resolve the "
                    "conflict and remove them", path)


def parse_skill_text(
    text: str, *, path: str | None = None, folder_name: str | None = None
) -> tuple[SkillDocument | None, list[Finding]]:
    """Leniently parse SKILL.md text. Returns ``(doc, findings)``; ``doc`` is None iff any error.

    Load errors: unresolved git merge conflicts (`merge_conflicts`), no frontmatter,
    frontmatter too large / too complex, unparseable YAML, a frontmatter that is not a mapping,
    missing or empty description. Every spec violation that
    :func:`validate_skill` would report as an error is downgraded to a warning here, because the
    client guide says to load such skills and tell the user. ``folder_name`` becomes the
    document's ``fallback_name`` (used when ``name`` is missing, and checked against ``name``).
    """
    label = path or "SKILL.md"
    if text.startswith("\ufeff"):
        text = text[1:]
    conflict = _conflict_finding(text, label, path)
    if conflict is not None:  # before the YAML, whose error would not say "merge conflict"
        return None, [conflict]
    opening = _OPEN.match(text)
    if not opening:
        return None, [_finding("error", "no-frontmatter",
                               f"{label} does not start with a '---' frontmatter line", path)]
    findings: list[Finding] = []
    if not text.startswith("---"):
        findings.append(_finding("warning", "leading-blank-lines",
                                 "blank lines before the opening '---'", path))
    start = opening.end()
    closing = _CLOSE.search(text, start)
    if not closing:
        return None, [_finding("error", "no-frontmatter",
                               f"{label}: frontmatter opened with '---' is never closed", path)]
    raw = text[start:closing.start()]
    end = closing.end()
    body = text[end + 1:] if text.startswith("\n", end) else text[end:]
    if len(raw) > MAX_FRONTMATTER_CHARS:
        return None, [_finding("error", "frontmatter-too-large",
                               f"{label}: frontmatter exceeds {MAX_FRONTMATTER_CHARS} characters",
                               path)]

    line_offset = text.count("\n", 0, start)
    yaml = _yaml()
    try:
        try:
            data, duplicates = _load_yaml(raw)
        except yaml.YAMLError as first:
            repaired = _repair_colons(raw)
            if repaired == raw:
                raise
            try:
                data, duplicates = _load_yaml(repaired)
            except yaml.YAMLError:
                raise first from None
            findings.append(_finding("warning", "yaml-repaired",
                                     "frontmatter values containing ':' were quoted to parse it",
                                     path))
    except (_TooComplex, RecursionError) as exc:
        reason = str(exc) if isinstance(exc, _TooComplex) else "nesting too deep"
        return None, [_finding("error", "yaml-too-complex",
                               f"{label}: frontmatter refused: {reason}", path)]
    except yaml.YAMLError as exc:
        if "nesting depth" in str(exc):  # libyaml's own flow-nesting guard fired
            return None, [_finding("error", "yaml-too-complex",
                                   f"{label}: frontmatter refused: nesting too deep", path)]
        return None, [_finding("error", "yaml", f"invalid YAML frontmatter in {label}: "
                               f"{_yaml_problem(exc, line_offset)}", path)]

    if data is None:
        data = {}
    if not isinstance(data, dict):
        return None, [_finding("error", "frontmatter-type",
                               f"{label}: frontmatter must be a mapping, got "
                               f"{type(data).__name__}", path)]
    for key in duplicates:
        findings.append(_finding("warning", "duplicate-key",
                                 f"key {key!r} appears more than once; the last value wins", path))
    description = data.get("description")
    if description is None or (isinstance(description, str) and not description.strip()):
        return None, [*findings, _finding("error", "missing-description",
                                          f"{label}: 'description' is missing or empty; the "
                                          "skill cannot be offered to a model without it", path)]
    if isinstance(description, (list, dict)):  # served as "['one', 'two']" (hunt-corpus #7)
        kind = "list" if isinstance(description, list) else "mapping"
        return None, [*findings, _finding("error", "description-type",
                                          f"{label}: 'description' must be a string, got a YAML "
                                          f"{kind}; the skill is not served until it is one (one "
                                          "line, or a folded '>' block)", path)]

    doc = SkillDocument(frontmatter=data, body=body, fallback_name=folder_name)
    for f in validate_skill(doc, folder_name=folder_name, path=path):
        findings.append(f.model_copy(update={"severity": "warning"}) if f.severity == "error" else f)
    return doc, findings


def read_skill_file(path: str | os.PathLike[str]) -> tuple[SkillDocument | None, list[Finding]]:
    """Read and leniently parse a SKILL.md; never raises for bad content or an unreadable path.

    Size is checked before reading (at most ``MAX_SKILL_BYTES + 1`` bytes are ever read), and
    only regular files are opened, so a FIFO or device cannot block or flood the loader.
    """
    p = Path(path)
    where = str(p)
    try:
        st = p.stat()
        if not stat.S_ISREG(st.st_mode):
            return None, [_finding("error", "unreadable", f"{where} is not a regular file", where)]
        if st.st_size > MAX_SKILL_BYTES:
            return None, [too_large(where)]
        with open(p, "rb") as fh:
            data = fh.read(MAX_SKILL_BYTES + 1)
    except OSError as exc:
        return None, [_finding("error", "unreadable", f"cannot read {where}: {exc.strerror or exc}",
                               where)]
    return parse_skill_bytes(data, p)


def parse_skill_bytes(data: bytes, path: str | os.PathLike[str]
                      ) -> tuple[SkillDocument | None, list[Finding]]:
    """Parse the bytes of the SKILL.md at `path` as `read_skill_file` would, without reading
    it again: a scan hashes the bytes it read, and the skill indexed beside that hash must be
    the one those bytes say (a re-read could meet a later version)."""
    p = Path(path)
    where = str(p)
    if len(data) > MAX_SKILL_BYTES:  # grew between stat and read
        return None, [too_large(where)]
    if b"\x00" in data:
        return None, [_finding("error", "binary", f"{where} contains NUL bytes; not a text file",
                               where)]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, [_finding("error", "encoding",
                               f"{where} is not valid UTF-8 (byte {exc.start})", where)]
    return parse_skill_text(text, path=where, folder_name=p.absolute().parent.name or None)


def too_large(where: str) -> Finding:
    return _finding("error", "too-large", f"{where} is larger than {MAX_SKILL_BYTES} bytes", where)


def load_or_raise(path: str | os.PathLike[str]) -> tuple[SkillDocument, list[Finding]]:
    """Like :func:`read_skill_file` but raise :class:`SkillFileError` when nothing loads."""
    doc, findings = read_skill_file(path)
    if doc is None:
        errors = [f for f in findings if f.severity == "error"] or findings
        raise SkillFileError("; ".join(str(f) for f in errors), findings)
    return doc, findings


# ------------------------------------------------------------------------------------ validation


def validate_name(name: str) -> list[Finding]:
    """The spec's rules for a skill name, as errors (checked before a skill is created)."""
    if not isinstance(name, str):
        return [_finding("error", "name-type", f"name must be a string, got {type(name).__name__}",
                         None)]
    out: list[Finding] = []
    if not 1 <= len(name) <= MAX_NAME:
        out.append(_finding("error", "name-length",
                            f"name must be 1-{MAX_NAME} characters, got {len(name)}", None))
    if name and not _NAME_CHARS.fullmatch(name):
        out.append(_finding("error", "name-chars",
                            f"name {name[:80]!r} may only contain a-z, 0-9 and '-'", None))
    if name.startswith("-") or name.endswith("-") or "--" in name:
        out.append(_finding("error", "name-hyphen",
                            f"name {name[:80]!r} must not start or end with '-' or contain '--'",
                            None))
    return out


#: The non-spec forms the tool gate (dependencies.py) reads: docs/api.md documented them and
#: users met `skills validate` failing them as spec errors (exit 2, "breaks the spec" in sync).
_GATE_FORM = ("{key} is read by skillbank's tool gate but is not in the Agent Skills spec "
              "(it says {spec}); other clients may reject it. Portable: allowed-tools as a "
              "space-separated string, or requires: {{tools: [...]}}")


def _gate_reads(value: Any, key: str) -> bool:
    """Whether `value` is a non-string form of `key` the tool gate reads: a list of names for
    `allowed-tools`, a mapping with a `tools` list or string for `compatibility`."""
    if key == "compatibility":
        return isinstance(value, dict) and "tools" in value and _names(value["tools"])
    # A list with one tool name is read (its other items are ignored, each named by
    # `unread_entries`): "got list", an error, blamed the list for a dict inside it, where sync
    # and the gate read the rest (hunt-badinput #6, session 26).
    return isinstance(value, list) and any(isinstance(v, str) and v.strip() for v in value)


def _names(value: Any) -> bool:
    if isinstance(value, str):
        return bool(value.strip())
    return isinstance(value, list) and bool(value) and all(
        isinstance(v, str) and bool(v.strip()) for v in value)


def validate_skill(
    doc: SkillDocument, *, folder_name: str | None = None, path: str | None = None
) -> list[Finding]:
    """Strict spec check of a parsed skill: violations are errors, unknown keys are warnings.

    ``folder_name`` defaults to ``doc.fallback_name``; the name is only compared to the folder
    when one of them is known.
    """
    fm = doc.frontmatter
    folder = folder_name if folder_name is not None else doc.fallback_name
    out: list[Finding] = []

    def err(code: str, message: str) -> None:
        out.append(_finding("error", code, message, path))

    name = fm.get("name")
    if name is None or name == "":
        fallback = f"; using folder name {folder!r}" if folder else ""
        err("missing-name", f"'name' is missing{fallback}")
    elif not isinstance(name, str):
        err("name-type", f"'name' must be a string, got {type(name).__name__}")
    else:
        out.extend(f.model_copy(update={"path": path}) for f in validate_name(name))
        if folder is not None and name != folder:
            err("name-mismatch", f"name {name!r} does not match its folder {folder!r}")

    description = fm.get("description")
    if description is None or (isinstance(description, str) and not description.strip()):
        err("missing-description", "'description' is missing or empty")
    elif not isinstance(description, str):
        err("description-type", f"'description' must be a string, got {type(description).__name__}")
    else:
        if len(description) > MAX_DESCRIPTION:
            err("description-length",
                f"description must be at most {MAX_DESCRIPTION} characters, got {len(description)}")
        if _CONTROL.search(description):
            err("description-control", "description contains control characters")
        elif bidi := BIDI_CONTROL.search(description):
            err("description-control", f"description contains a bidirectional control character "
                f"(U+{ord(bidi.group()):04X}), which shows the text in another order than it is "
                "stored; remove it")

    if "license" in fm and not isinstance(fm["license"], str):
        err("license-type", f"'license' must be a string, got {type(fm['license']).__name__}")

    if "compatibility" in fm:
        compat = fm["compatibility"]
        if _gate_reads(compat, "compatibility"):
            out.append(_finding("warning", "compatibility-type", _GATE_FORM.format(
                key="compatibility: {tools: [...]}", spec="a string"), path))
        elif not isinstance(compat, str):
            err("compatibility-type",
                f"'compatibility' must be a string, got {type(compat).__name__}")
        elif not 1 <= len(compat) <= MAX_COMPATIBILITY:
            err("compatibility-length",
                f"compatibility must be 1-{MAX_COMPATIBILITY} characters, got {len(compat)}")

    if "metadata" in fm:
        meta = fm["metadata"]
        if not isinstance(meta, dict):
            err("metadata-type", f"'metadata' must be a mapping, got {type(meta).__name__}")
        else:
            bad = [k for k, v in meta.items() if not isinstance(k, str) or not isinstance(v, str)]
            if bad:
                err("metadata-type", "'metadata' must map strings to strings; not so for "
                    + ", ".join(repr(k) for k in bad[:5]))

    from skillbank.memories.skills.dependencies import shown_item, unread_entries

    allowed = fm.get("allowed-tools")
    unread = unread_entries(fm)
    if _gate_reads(allowed, "allowed-tools"):
        out.append(_finding("warning", "allowed-tools-type", _GATE_FORM.format(
            key="allowed-tools as a YAML list", spec="a space-separated string"), path))
    elif "allowed-tools" in fm and not isinstance(allowed, str):
        items = (" with no tool name in it: " + ", ".join(shown_item(v) for v in allowed[:5])
                 if isinstance(allowed, list) and allowed else "")
        err("allowed-tools-type", "'allowed-tools' must be a space-separated string, got "
            f"{type(allowed).__name__}{items}")
        unread = [w for w in unread if not w.startswith("allowed-tools item")]  # said above

    requires = fm.get("requires")
    if isinstance(requires, (list, str)) and _names(requires):
        # Read by the gate as its tools, where it was ignored with only the "unknown key"
        # warning a working `requires` gets (hunt-routing #6, session 28).
        form = "a YAML list" if isinstance(requires, list) else "a string"
        out.append(_finding("warning", "requires-type", f"requires as {form} is read by "
                            "skillbank's tool gate as requires: {tools: [...]} (every name "
                            "needed); write it as that mapping, the form other tools read",
                            path))
    out.extend(_finding("warning", "tool-gate-unread", f"{w} by the tool gate (the skill is "
                        "served as if it declared nothing there)", path)
               for w in unread)
    for key in fm:
        if key not in KNOWN_KEYS:
            out.append(_finding("warning", "unknown-key",
                                f"unknown frontmatter key {key!r} (kept, but not in the spec)",
                                path))
    return out


# ------------------------------------------------------------------------------------- rendering


@cache
def _dumper() -> Any:
    """SafeDumper that double-quotes strings holding Unicode line breaks (NEL, LS, PS).

    PyYAML otherwise writes them raw inside single quotes, where YAML folds them into spaces,
    so the value would not survive a round trip; in double quotes they are escaped instead.
    """
    yaml = _yaml()

    class Dumper(yaml.SafeDumper):
        pass

    def represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
        style = '"' if any(ch in value for ch in "\x85\u2028\u2029") else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, represent_str)
    return Dumper


def render_skill(doc: SkillDocument) -> str:
    """Serialise back to SKILL.md text; ``parse_skill_text`` of the result gives the same doc.

    Always the pure-Python dumper so that output is byte-identical whether or not libyaml is
    installed (rendering is rare; parsing is the hot path). Keys keep their order; width is
    unbounded so long descriptions are not folded across lines.
    """
    dumped = _yaml().dump(doc.frontmatter, Dumper=_dumper(), sort_keys=False,
                       allow_unicode=True, default_flow_style=False, width=10**9)
    return f"---\n{dumped}---\n{doc.body}"
