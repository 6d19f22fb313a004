#!/usr/bin/env python3
"""Check SKILL.md files against the Agent Skills format (https://agentskills.io/specification).

Usage:
    python check_skill.py path/to/skill-name/SKILL.md [path/to/other-skill ...] [--strict]

A path may be a SKILL.md file or a skill folder containing one. Prints one line per problem,
"<path>: <severity> [<code>] <message>", or "<path>: ok". Exits 1 if any error was found (or any
warning, with --strict), 2 on bad usage or missing PyYAML, 0 otherwise. Needs Python 3.8+ and PyYAML.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

try:
    import yaml
except ImportError:  # pragma: no cover - depends on the environment
    print("check_skill.py needs PyYAML: pip install pyyaml", file=sys.stderr)
    sys.exit(2)

NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
KNOWN_KEYS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MIN_DESCRIPTION = 40  # below this a router has almost nothing to match on
MAX_COMPATIBILITY = 500
MAX_BODY_LINES = 500
WHEN_RE = re.compile(r"\b(when|whenever|before|after|if)\b", re.IGNORECASE)
NOT_THIRD_PERSON_RE = re.compile(r"^\s*(I|I'm|I'll|We|You)\b|\bI (can|will|help)\b")
TAG_RE = re.compile(r"<[A-Za-z/][^>]*>")
# Relative paths to bundled files mentioned in the body, e.g. references/guide.md, scripts/run.py.
RESOURCE_RE = re.compile(r"(?<![\w/.-])((?:references|scripts|assets)/[\w./-]*\w)")


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys instead of silently keeping the last one."""


def _construct_mapping(loader, node, deep=False):
    seen = set()
    for key_node, _ in node.value:
        try:
            key = loader.construct_object(key_node, deep=deep)
            duplicate = key in seen
            seen.add(key)
        except TypeError:  # unhashable key; let the normal constructor complain
            continue
        if duplicate:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def split_frontmatter(text):
    """Return (frontmatter_text, body) or None when there is no closed --- block at the top."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return None
    for i in range(1, len(lines)):
        if lines[i].rstrip() == "---":
            return "\n".join(lines[1:i]), "\n".join(lines[i + 1 :])
    return None


def check(path):
    """Return a list of (severity, code, message) for one SKILL.md."""
    problems = []

    def error(code, message):
        problems.append(("error", code, message))

    def warn(code, message):
        problems.append(("warning", code, message))

    if path.name != "SKILL.md":
        warn("file-name", f"file is named {path.name!r}; clients look for 'SKILL.md'")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        error("unreadable", str(exc))
        return problems
    if raw.startswith(b"\xef\xbb\xbf"):
        warn("bom", "file starts with a UTF-8 byte-order mark; some parsers then miss the frontmatter")
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        error("encoding", f"not valid UTF-8: {exc}")
        return problems

    parts = split_frontmatter(text)
    if parts is None:
        error("frontmatter-missing", "file must start with a '---' line and close the YAML block with another '---'")
        return problems
    fm_text, body = parts
    try:
        fm = yaml.load(fm_text, Loader=_UniqueKeyLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None)
        if mark is not None and problem:
            detail = f"{problem} at line {mark.line + 2}"  # +1 for 0-based, +1 for the opening ---
        else:
            detail = " ".join(str(exc).split())
        hint = "" if "duplicate key" in detail else (
            " (quote values that contain ': ' or start with a quote, '[', '{', '*', '&' or '>')"
        )
        error("frontmatter-yaml", f"frontmatter is not valid YAML: {detail}{hint}")
        return problems
    if fm is None:
        error("frontmatter-empty", "frontmatter is empty; 'name' and 'description' are required")
        return problems
    if not isinstance(fm, dict):
        error("frontmatter-type", f"frontmatter must be a YAML mapping, got {type(fm).__name__}")
        return problems

    # name
    name = fm.get("name")
    if name is None:
        error("name-missing", "'name' is required")
    elif not isinstance(name, str):
        error("name-type", f"'name' must be a string, got {type(name).__name__} ({name!r}); quote it")
    else:
        if not 1 <= len(name) <= MAX_NAME:
            error("name-length", f"'name' must be 1-{MAX_NAME} characters, got {len(name)}")
        if not NAME_RE.match(name):
            error(
                "name-format",
                f"'name' {name!r} must use only a-z, 0-9 and single hyphens, "
                "not start or end with a hyphen",
            )
        folder = path.resolve().parent.name
        if name != folder:
            error("name-folder", f"'name' {name!r} must equal the skill folder name {folder!r}")
        if "anthropic" in name or "claude" in name:
            warn("name-reserved", "'name' contains a word some clients reserve ('anthropic', 'claude')")

    # description
    desc = fm.get("description")
    if desc is None:
        error("description-missing", "'description' is required")
    elif not isinstance(desc, str):
        error("description-type", f"'description' must be a string, got {type(desc).__name__}")
    elif not desc.strip():
        error("description-empty", "'description' must not be empty")
    else:
        if len(desc) > MAX_DESCRIPTION:
            error("description-length", f"'description' is {len(desc)} characters; the limit is {MAX_DESCRIPTION}")
        if len(desc.strip()) < MIN_DESCRIPTION:
            warn("description-short", f"'description' has {len(desc.strip())} characters; say what it does and when to use it")
        if not WHEN_RE.search(desc):
            warn("description-when", "'description' should say when to use the skill (e.g. 'Use when ...')")
        if NOT_THIRD_PERSON_RE.search(desc):
            warn("description-person", "write 'description' in the third person ('Extracts ...', not 'I extract ...')")
        if TAG_RE.search(desc):
            warn("description-tags", "'description' contains something that looks like an XML/HTML tag")

    # optional fields
    if "license" in fm and not isinstance(fm["license"], str):
        error("license-type", "'license' must be a string, e.g. 'Apache-2.0' or 'LICENSE.txt'")
    if "compatibility" in fm:
        comp = fm["compatibility"]
        if not isinstance(comp, str) or not comp.strip():
            error("compatibility-type", "'compatibility' must be a non-empty string")
        elif len(comp) > MAX_COMPATIBILITY:
            error("compatibility-length", f"'compatibility' is {len(comp)} characters; the limit is {MAX_COMPATIBILITY}")
    if "metadata" in fm:
        meta = fm["metadata"]
        if not isinstance(meta, dict):
            error("metadata-type", "'metadata' must be a mapping of string keys to string values")
        else:
            for key, value in meta.items():
                if not isinstance(key, str):
                    error("metadata-type", f"metadata key {key!r} must be a string")
                if not isinstance(value, str):
                    error(
                        "metadata-type",
                        f"metadata value for {key!r} must be a string, got {type(value).__name__} "
                        f"({value!r}); quote it: {key}: \"{value}\"",
                    )
    if "allowed-tools" in fm and not isinstance(fm["allowed-tools"], str):
        warn("allowed-tools-type", "'allowed-tools' should be one space-separated string")
    unknown = [str(k) for k in fm if k not in KNOWN_KEYS]
    if unknown:
        warn(
            "unknown-field",
            f"fields not in the spec: {', '.join(unknown)} (strict validators reject them; "
            "put custom data under 'metadata')",
        )

    # body
    if not body.strip():
        warn("body-empty", "the body is empty; add the instructions below the frontmatter")
    else:
        n_lines = len(body.splitlines())
        if n_lines > MAX_BODY_LINES:
            warn("body-length", f"body has {n_lines} lines; keep it under {MAX_BODY_LINES} and move detail to references/")
        root = path.resolve().parent
        for ref in sorted(set(RESOURCE_RE.findall(body))):
            target = (root / ref).resolve()
            if root not in target.parents:
                warn("resource-outside", f"'{ref}' points outside the skill folder")
            elif not target.exists():
                warn("resource-missing", f"body mentions '{ref}' but the file does not exist")
    return problems


def main(argv=None):
    parser = argparse.ArgumentParser(description="Check SKILL.md files against the Agent Skills format.")
    parser.add_argument("paths", nargs="+", type=Path, help="SKILL.md files or skill folders")
    parser.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    args = parser.parse_args(argv)

    errors = warnings = 0
    for given in args.paths:
        path = given / "SKILL.md" if given.is_dir() else given
        if not path.is_file():
            print(f"{given}: error [not-found] no such SKILL.md file")
            errors += 1
            continue
        problems = check(path)
        for severity, code, message in problems:
            print(f"{path}: {severity} [{code}] {message}")
        if not problems:
            print(f"{path}: ok")
        errors += sum(1 for p in problems if p[0] == "error")
        warnings += sum(1 for p in problems if p[0] == "warning")
    if len(args.paths) > 1 or errors or warnings:
        print(f"{errors} error(s), {warnings} warning(s)", file=sys.stderr)
    return 1 if errors or (args.strict and warnings) else 0


if __name__ == "__main__":
    sys.exit(main())
