"""Which tools a skill declares it needs, and whether the calling agent has them.

A skill that runs `git` through the Bash tool is no help to an agent without a shell; routing it
there wastes a turn (raised on the MCP skills extension and the Agent Skills spec). What a
SKILL.md declares, read leniently (skills come from many clients):

* `allowed-tools` (spec, experimental): the tools *pre-approved* while the skill runs, names
  with an optional argument pattern, space- or comma-separated (a YAML list is accepted too):
  `Bash(git:*) Read Write`. Pre-approval is not a list of needs: a skill listing `Read Write
  Edit Bash Glob Grep WebFetch WebSearch` was hidden from an agent with Read, Write, Edit and
  Bash. So the gate reads it as Claude Code does, and asks little of it:
    - a tool given with an argument pattern is needed: `Bash(git:*)` says the skill runs git
      commands, so an agent without `Bash` cannot follow it;
    - of the other names, the agent needs at least one (it can use none of what the skill
      expects to use otherwise).
* `requires: {tools: [...], mcp: [...]}` (a non-spec key common in published skill sets): tool
  names, every one needed, and MCP servers whose tools must be present (server `rube` is there
  when some tool is named `rube`, `mcp__rube__*`, `rube__*`, `rube_*` or `rube.*`).
* `compatibility`: free text in the spec ("Requires git and docker"), so it is not parsed for
  names; a mapping with `tools` (some clients write one) is, every name needed.

A name may be a pattern as Claude Code's permission rules write them, matched fnmatch-style on
the tool name: `mcp__chrome-devtools__*` is any tool of that server (it was read as a literal
tool name, so an agent with every chrome-devtools tool lacked it), and `mcp__chrome-devtools`
is too. Names compare case-insensitively. Anything malformed (a number, a nested mapping where
names belong) is a warning in the log and declares nothing: it never hides a skill or crashes
search; `skills validate` and sync report each such warning (`unread_entries`). A `requires`
written as a list or string of names (`requires: [Bash, WebFetch]`, by analogy with
`allowed-tools`) is read as its `tools`: every name needed.
"""

from __future__ import annotations

import fnmatch
import logging
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

log = logging.getLogger("skillbank.skills")
_PATTERN = re.compile(r"\(.*\)$")
#: The most tool names one declaration (`allowed-tools`, `requires.tools` ...) may list; no
#: published skill lists more than 13. Past it the declaration is ignored and reported, never
#: cut: a cut at 64 gated out an agent holding the 100th pre-approved tool and served a skill
#: whose 65th required tool the agent lacked (hunt-routing #1, session 28).
MAX_NAMES = 1000
_UNCLOSED = "has an unclosed parenthesis"
_GLUED = "has text right after a closing parenthesis (separate names with a space)"
_NOT_A_NAME = "is not a tool name"


def shown_item(item: Any) -> str:
    """An item where a tool name belongs, as a message shows it: its value and type. "has a dict
    where a tool name belongs" named no item, and `skills validate` blamed the list around it
    (hunt-badinput #6, session 26)."""
    text, kind = repr(item), type(item).__name__
    article = "an" if kind[0] in "aeiou" else "a"
    return f"{text[:77] + '...' if len(text) > 80 else text} ({article} {kind})"


@dataclass(frozen=True)
class Declared:
    """What one skill needs (lowercase names): `tools`, every one; of `approved` (the names in
    `allowed-tools`), at least one; MCP `servers`; and what was unreadable."""

    tools: frozenset[str] = frozenset()
    servers: frozenset[str] = frozenset()
    warnings: tuple[str, ...] = field(default=())
    approved: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.tools or self.servers or self.approved)


def _entries(value: Any, where: str, warnings: list[str], split: bool
             ) -> list[tuple[str, bool]]:
    """(lowercase tool name, whether an argument pattern was given) for each entry: all of them,
    or none (a warning) when there are more than `MAX_NAMES`."""
    if value is None or value == "":
        return []
    if isinstance(value, str):
        items: Iterable[Any] = [value]
    elif isinstance(value, (list, tuple)):
        items = value
    else:
        warnings.append(f"{where} must be a string or a list of names, "
                        f"got {type(value).__name__}; ignored")
        return []
    found: list[tuple[str, bool]] = []
    for number, item in enumerate(items, 1):
        if not isinstance(item, str) or not item.strip():
            label = where if isinstance(value, str) else f"{where} item {number}"
            warnings.append(f"{label}, {shown_item(item)}, {_NOT_A_NAME}; ignored")
            continue
        why: list[str] = []
        entries = split_entries(item, why) if split else [item.strip()]
        if entries is None:
            # `Bash(git:*` was read as a tool named "bash(git:*" that no agent has, hiding the
            # skill from all of them (hunt-disclose #4, session 25): it declares nothing. So
            # does `Bash(git:*)Read`, read as one tool "bash(git:*)read" (hunt-evalgate #3,
            # session 37).
            warnings.append(f"{where} entry {item.strip()[:80]!r} "
                            f"{why[0] if why else _UNCLOSED}; ignored")
            continue
        for entry in entries:
            name = _PATTERN.sub("", entry).strip().lower()
            if name:
                found.append((name, name != entry.strip().lower()))
        if len(found) > MAX_NAMES:
            warnings.append(f"{where} lists more than {MAX_NAMES:,} tool names, the most the "
                            "tool gate reads; ignored")
            return []
    return found


def split_entries(text: str, why: list[str] | None = None) -> list[str] | None:
    """The entries of one `allowed-tools` string: names with an optional argument pattern,
    split at spaces and commas outside the pattern (`Bash(npm run test:*)` is one entry; it was
    split into three "tools"). A pattern's quoted text is not scanned for parentheses, so
    `Bash(echo ")")` is one entry (counting parentheses called it unclosed; review F6, session
    25); a quote with no partner, or an apostrophe inside a word (`Bash(don't:*)
    Read(it's)`), is a plain character. `Bash (git:*)` is read
    as `Bash(git:*)`. None when a parenthesis does not close, or closes nothing, or when text
    follows a closing parenthesis with no space or comma: `Bash(git:*)Read` was one tool
    "bash(git:*)read" that no agent has, hiding the skill from every agent while validate called
    it valid (hunt-evalgate #3, session 37). Guessing where the typo ends is not ours to do, so
    it declares nothing, as an unclosed one does; `why` (when given) gets the reason."""
    entries: list[str] = []
    current = ""
    depth, quote, closed = 0, "", False
    for at, char in enumerate(text):
        if closed and not (char.isspace() or char == ","):
            if why is not None:
                why.append(_GLUED)
            return None
        closed = False
        if quote:
            current += char
            quote = "" if char == quote else quote
        elif depth:
            current += char
            if char in "\"'" and char in text[at + 1:] and not (
                    char == "'" and at and text[at - 1].isalnum()):
                quote = char  # an apostrophe inside a word (`don't`) opens nothing
            depth += {"(": 1, ")": -1}.get(char, 0)
            closed = not depth
        elif char == "(":
            if not current and entries:
                current = entries.pop()
            current, depth = current + char, 1
        elif char == ")":
            return None
        elif char.isspace() or char == ",":
            if current:
                entries.append(current)
            current = ""
        else:
            current += char
    if depth or quote:
        return None
    return entries + [current] if current else entries


def _names(value: Any, where: str, warnings: list[str], split: bool) -> set[str]:
    return {name for name, _ in _entries(value, where, warnings, split)}


def declared(frontmatter: Any) -> Declared:
    """The tools and MCP servers a skill's frontmatter declares (see the module docstring)."""
    if not isinstance(frontmatter, dict):
        return Declared()
    warnings: list[str] = []
    allowed = _entries(frontmatter.get("allowed-tools"), "allowed-tools", warnings, split=True)
    tools = {name for name, patterned in allowed if patterned}
    approved = {name for name, _ in allowed}
    servers: set[str] = set()
    requires = frontmatter.get("requires")
    if isinstance(requires, dict):
        tools |= _names(requires.get("tools"), "requires.tools", warnings, split=True)
        servers |= _names(requires.get("mcp"), "requires.mcp", warnings, split=True)
    elif isinstance(requires, (list, str)):
        # `requires: [Bash, WebFetch]` was ignored, so the skill was served to an agent with
        # only Read (hunt-routing #6, session 28): the names are readable, so they are needed.
        tools |= _names(requires, "requires", warnings, split=True)
    elif requires is not None:
        warnings.append(f"requires must be a mapping with tools and mcp, got "
                        f"{type(requires).__name__}; ignored")
    compatibility = frontmatter.get("compatibility")
    if isinstance(compatibility, dict):
        tools |= _names(compatibility.get("tools"), "compatibility.tools", warnings, split=True)
    return Declared(frozenset(tools), frozenset(servers), tuple(warnings), frozenset(approved))


def unread_entries(frontmatter: Any) -> list[str]:
    """What `skills validate` warns of that its spec checks do not see: what the gate ignores,
    each named: an entry with an unclosed parenthesis (the validator was silent;
    hunt-disclose #4, session 25), a list item that is not a tool name (a mapping, a number),
    which it reported as "must be a string, got list" while the list is read and the item is
    what is ignored (hunt-badinput #6, session 26), a declaration over `MAX_NAMES`, and a
    `requires` (or its `tools`, `mcp`) of a shape the gate cannot read: `requires: {tools: 42}`
    drew only the "unknown key" warning a working `requires` gets (hunt-routing #1 and #6,
    session 28). A whole `allowed-tools` of a wrong type is already a spec error there."""
    return [w for w in declared(frontmatter).warnings if not w.startswith("allowed-tools must")]


def _has(pattern: str, available: set[str]) -> bool:
    """Whether some available tool is `pattern`, or matches it (Claude Code's rule forms:
    `mcp__server__*` and `mcp__server` are any tool of that server)."""
    if pattern in available:
        return True
    if pattern.startswith("mcp__") and pattern.count("__") == 1:
        pattern += "__*"
    if not any(ch in pattern for ch in "*?["):
        return False
    return any(fnmatch.fnmatchcase(name, pattern) for name in available)


def _server_present(server: str, available: set[str]) -> bool:
    return server in available or any(
        name.startswith((f"mcp__{server}__", f"{server}__", f"{server}_", f"{server}."))
        for name in available)


def missing(need: Declared, available: Iterable[str]) -> list[str]:
    """What of `need` the agent lacks, sorted ('mcp:<server>' for a missing server): every
    needed tool it lacks, and all of `approved` when it has none of them."""
    have = {str(name).strip().lower() for name in available if str(name).strip()}
    lacking = {t for t in need.tools if not _has(t, have)}
    if need.approved and not any(_has(t, have) for t in need.approved):
        lacking |= need.approved
    return sorted(lacking) + sorted(
        f"mcp:{s}" for s in need.servers if not _server_present(s, have))


def check_available(available_tools: Any, label: str = "available_tools") -> list[str] | None:
    """`available_tools` as a list of names, or None (no gate). A clear error otherwise, naming
    the argument as the caller's face spells it (`label`: the CLI's `--tool`).

    A blank name is refused: `skills search --tool ""` was taken as a tool no skill names, so
    every skill that declares tools was gated out, where MCP's schema refuses an empty name
    (hunt-routing #3, session 28). Every face reaches this one check."""
    from skillbank.errors import InvalidInputError

    if available_tools is None:
        return None
    if isinstance(available_tools, str) or not isinstance(available_tools, (list, tuple, set,
                                                                            frozenset)):
        raise InvalidInputError(f"{label} must be a list of tool names (or None for no "
                                f"tool gate), got {type(available_tools).__name__}")
    names = []
    for name in available_tools:
        if not isinstance(name, str):
            raise InvalidInputError(f"{label} must hold tool names (strings), got "
                                    f"{type(name).__name__}")
        if not name.strip():
            raise InvalidInputError(f"{label} holds an empty tool name ({name!r}); give each "
                                    "tool's name, e.g. Bash")
        names.append(name)
    if len(names) > 10_000:
        raise InvalidInputError(f"{label} holds more than 10,000 names")
    return names


def warn_once(name: str, need: Declared, _seen: set[tuple[str, tuple[str, ...]]] = set()) -> None:
    """Log a skill's unreadable declarations once per process (search runs often)."""
    key = (name, need.warnings)
    if need.warnings and key not in _seen:
        _seen.add(key)
        for warning in need.warnings:
            log.warning("skill %r: %s", name, warning)


_by_hash: dict[tuple[str, str], Declared] = {}


def of_file(path: str, content_hash: str) -> Declared:
    """What the SKILL.md at `path` declares, kept by content hash (a changed file is read again).
    An unreadable file declares nothing (search does not fail on it)."""
    key = (path, content_hash)
    known = _by_hash.get(key)
    if known is None:
        from skillbank.memories.skills.skill_file import read_skill_file

        try:
            doc, _ = read_skill_file(path)
        except OSError:
            doc = None
        known = declared(doc.frontmatter if doc is not None else None)
        if len(_by_hash) > 20_000:
            _by_hash.clear()
        _by_hash[key] = known
    return known


# The calling agent's tools, for faces that know them but reach skill search through another
# call (the LangChain middleware builds memory context with `bank.context_for`): set around that
# call, read by `skills.search` when it is given no `available_tools` of its own.
_agent_tools: "contextvars.ContextVar[tuple[str, ...] | None]"


import contextvars  # noqa: E402
from contextlib import contextmanager  # noqa: E402

_agent_tools = contextvars.ContextVar("skillbank_agent_tools", default=None)


@contextmanager
def agent_tools(names: Iterable[str] | None) -> Any:
    """Within this block, skill search gates on these tool names (None: no gate). They pass the
    one check every face's `available_tools` passes (`check_available`): a blank name set here
    was dropped or gated out every skill that declares tools, where MCP refused it (the
    LangChain toolkit took `["  "]`; hunt-evalgate #5, session 37)."""
    checked = None if names is None else check_available(list(names))
    value = None if checked is None else tuple(checked)
    token = _agent_tools.set(value)
    try:
        yield
    finally:
        _agent_tools.reset(token)


def current_agent_tools() -> list[str] | None:
    value = _agent_tools.get()
    return None if value is None else list(value)
