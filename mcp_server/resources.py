"""Skills as MCP resources, in the form of the MCP Skills extension (SEP-2640).

Every skill file is a resource `skill://<name>/<path>` (the SKILL.md is `skill://<name>/SKILL.md`).
`resources/list` carries each file's `size`, its digest in `_meta` and its modification time, and
the extension's `skills/list` / `skills/get` return the manifest in the spec's own shape:
`{uri, frontmatter, resources: [{uri, digest: "sha256:<hex>", size}]}`.

Skills change while the server runs, so listings are computed on each request. Digests are
cached per file by (size, mtime), so a repeated listing only stats the files.
"""

from __future__ import annotations

import codecs
import hashlib
import mimetypes
import os
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

SKILL_SCHEME = "skill://"
GUIDELINES_PREFIX = "skillbank://guidelines/"
STATS_URI = "skillbank://stats"
EXTENSION_ID = "io.modelcontextprotocol/skills"
DIGEST_META = "skillbank/digest"  # our own _meta prefix; the manifest digest is in skills/list
#: `_meta` key listing how a skill's name breaks the Agent Skills rules (absent when it does not)
NAME_ISSUES_META = "skillbank/name_issues"
#: `_meta` key with a skill's trust level, scan state, review state and findings (#28)
TRUST_META = "skillbank/trust"
#: `_meta` key marking a listed file a read never returns (over `MAX_RESOURCE_BYTES`, 1 MiB)
TOO_LARGE_META = "skillbank/too_large"


def skill_uri(name: str, path: str = "SKILL.md") -> str:
    """`skill://<name>/<path>` with both parts percent-encoded (RFC 3986): a name or file with
    spaces, '#', '?' or non-ASCII letters still gives one valid URI that reads back the same."""
    return f"{SKILL_SCHEME}{quote(name, safe='-_.~')}/{quote(path, safe='/-_.~')}"


def parse_skill_uri(uri: str) -> tuple[str, str] | None:
    """(name, relative path) of a `skill://` URI, or None when it is not one."""
    if not uri.startswith(SKILL_SCHEME):
        return None
    rest = uri[len(SKILL_SCHEME):]
    name, _, path = rest.partition("/")
    name, path = unquote(name), unquote(path)
    if not name:
        return None
    return name, path or "SKILL.md"


TEXT_TYPES = {".md": "text/markdown", ".markdown": "text/markdown", ".txt": "text/plain",
              ".py": "text/x-python", ".sh": "text/x-shellscript", ".yaml": "application/yaml",
              ".yml": "application/yaml", ".toml": "application/toml", ".json": "application/json",
              ".csv": "text/csv", ".ts": "text/x-typescript", ".js": "text/javascript"}
BINARY = "application/octet-stream"


def mime_type_for(path: str, binary: bool | None = None) -> str:
    """The MIME type of a skill file: by extension, and by content when that is known (a file
    that is not UTF-8 text is never labelled as text, whatever its name says)."""
    suffix = os.path.splitext(path)[1].lower()
    guess = TEXT_TYPES.get(suffix) or mimetypes.guess_type(path)[0]
    textual = guess is None or guess.startswith("text/") or guess in TEXT_TYPES.values()
    if binary is True and textual:
        return BINARY
    if binary is False and guess is None:
        return "text/plain"
    return guess or BINARY


@dataclass
class FileEntry:
    path: str  # relative, forward slashes; "SKILL.md" first
    size: int
    sha256: str
    mtime: float
    binary: bool = False

    @property
    def mime_type(self) -> str:
        return "text/markdown" if self.path == "SKILL.md" else mime_type_for(self.path, self.binary)


@dataclass
class SkillManifest:
    name: str
    description: str
    frontmatter: dict[str, Any]
    files: list[FileEntry] = field(default_factory=list)
    folder: str = ""
    trust: dict[str, Any] = field(default_factory=dict)

    @property
    def uri(self) -> str:
        return skill_uri(self.name)

    @property
    def name_issues(self) -> list[str]:
        """Where the name breaks the Agent Skills rules; such skills are served, but flagged."""
        from skillbank.memories.skills.skill_file import validate_name

        issues = [f.message for f in validate_name(self.name)]
        folder = os.path.basename(self.folder) if self.folder else self.name
        if folder != self.name:
            issues.append(f"name {self.name[:80]!r} differs from its folder {folder[:80]!r}")
        return issues

    def entry(self) -> dict[str, Any]:
        """The extension's `Skill` entry."""
        return {
            "uri": self.uri,
            "frontmatter": _jsonable({"name": self.name, "description": self.description,
                                      **self.frontmatter}),
            "resources": [{"uri": skill_uri(self.name, f.path), "digest": f"sha256:{f.sha256}",
                           "size": f.size, "mimeType": f.mime_type} for f in self.files],
            "_meta": {**({NAME_ISSUES_META: self.name_issues} if self.name_issues else {}),
                      TRUST_META: self.trust},
        }


def trust_meta(skill: Any) -> dict[str, Any]:
    """A skill's trust for MCP metadata: level, scan, review, notes and findings (#28)."""
    return {"level": getattr(skill, "trust", "own"), "scan": getattr(skill, "scan", ""),
            "review": getattr(skill, "review", ""), "notes": list(getattr(skill, "notes", [])),
            "findings": [f.model_dump() for f in getattr(skill, "findings", [])]}


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


class ManifestCache:
    """Skill manifests computed from the files, re-hashing only files whose stat changed."""

    def __init__(self) -> None:
        # abs path and served? -> ((size, mtime_ns, ctime_ns, inode), hex digest, binary?,
        # size): ctime and inode too, as pins.DigestCache: a same-size edit with its mtime put
        # back is still seen.
        self._digests: dict[str, tuple[tuple[int, int, int, int], str, bool, int]] = {}
        # name -> (SKILL.md hash, frontmatter, description, the entry of what a read serves
        # when that is not the file: a half-saved SKILL.md's last good version)
        self._frontmatter: dict[str, tuple[str, dict[str, Any], str, FileEntry | None]] = {}
        self._lock = threading.Lock()

    def _digest(self, path: Path, stat: os.stat_result, served: bool = False
                ) -> tuple[str, bool, int]:
        """(sha256 hex, whether the content is binary, size), cached by stat. With `served`
        (a skill not the bank's own): of the text a read serves, without the characters
        `trust.visible` removes, so a client checking the digest accepts what it is sent."""
        from skillbank.memories.skills.trust import visible

        key = f"{path}\0{served}"
        seen = (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino)
        cached = self._digests.get(key)
        if cached and cached[0] == seen:
            return cached[1], cached[2], cached[3]
        digest, shown = hashlib.sha256(), hashlib.sha256()
        text = codecs.getincrementaldecoder("utf-8")()
        binary, size = False, 0
        with path.open("rb") as handle:  # the whole file, as a read decodes it
            for block in iter(lambda: handle.read(1 << 16), b""):
                digest.update(block)
                if not binary:
                    try:
                        kept = visible(text.decode(block)).encode("utf-8")
                        shown.update(kept)
                        size += len(kept)
                        binary = b"\0" in block
                    except UnicodeDecodeError:
                        binary = True
        if not binary:
            try:
                text.decode(b"", final=True)
            except UnicodeDecodeError:
                binary = True  # the file ends inside a character
        value = (shown if served and not binary else digest).hexdigest()
        size = size if served and not binary else stat.st_size
        with self._lock:
            self._digests[key] = (seen, value, binary, size)
        return value, binary, size

    def manifest(self, bank: Any, name: str, summary: Any = None) -> SkillManifest:
        """The manifest of one skill (raises the bank's NotFoundError for unknown names).

        `summary` is a catalog-level Skill (from `skills.list()`); without it the skill is loaded.
        Its description is the listed one (within the spec's 1,024 characters).
        """
        from skillbank.memories.skills.folder_files import served_files
        from skillbank.memories.skills.skill_file import listed_description

        loaded = None
        if summary is None:
            loaded = summary = bank.skills.load(name)
        skill_md = Path(summary.path)
        folder = skill_md.parent
        skill_stat = skill_md.stat()
        served = getattr(summary, "trust", "own") != "own"  # reads drop hidden characters
        digest, _, size = self._digest(skill_md, skill_stat, served)
        files = [FileEntry("SKILL.md", size, digest, skill_stat.st_mtime)]
        for relative, stat in served_files(folder, own=not served):  # what a read serves
            try:
                digest, binary, size = self._digest(folder / relative, stat, served)
            except OSError:
                continue
            files.append(FileEntry(relative, size, digest, stat.st_mtime, binary))
        content_hash = files[0].sha256
        cached = self._frontmatter.get(name)
        if cached and cached[0] == content_hash:
            frontmatter, description, served = cached[1], cached[2], cached[3]
        else:
            skill = loaded if loaded is not None else bank.skills.load(name)
            frontmatter = {k: v for k, v in dict(skill.frontmatter).items()
                           if k not in ("name", "description")}
            description = listed_description(skill.description)
            served = _served_skill_md(bank, skill, skill_stat.st_mtime)
            with self._lock:
                self._frontmatter[name] = (content_hash, frontmatter, description, served)
        if served is not None:
            files[0] = served
        return SkillManifest(name=name, description=description, frontmatter=frontmatter,
                             files=files, folder=str(folder), trust=trust_meta(summary))

    def all(self, bank: Any) -> list[SkillManifest]:
        out = []
        for summary in bank.skills.list():
            try:
                out.append(self.manifest(bank, summary.name, summary))
            except Exception:  # noqa: BLE001 - a skill deleted mid-listing is simply skipped
                continue
        return out


def list_entries(manifests: list[SkillManifest]) -> list[dict[str, Any]]:
    """`resources/list` entries (as dicts for mcp_types.Resource) for every skill file."""
    from skillbank.memories.skills.authoring import MAX_RESOURCE_BYTES

    out: list[dict[str, Any]] = []
    for manifest in manifests:
        issues = manifest.name_issues
        for f in manifest.files:
            is_main = f.path == "SKILL.md"
            meta: dict[str, Any] = {DIGEST_META: f"sha256:{f.sha256}"}
            if issues:
                meta[NAME_ISSUES_META] = issues
            if is_main:
                meta[TRUST_META] = manifest.trust
            about = manifest.description if is_main else f"File {f.path} of skill {manifest.name}"
            if not is_main and f.size > MAX_RESOURCE_BYTES:  # listed but never readable:
                meta[TOO_LARGE_META] = True  # said so (hunt-mcpauthor #4, session 37)
                about += f" ({f.size} bytes: too large to read; reads stop at 1 MiB)"
            out.append({
                "uri": skill_uri(manifest.name, f.path),
                "name": manifest.name if is_main else f"{manifest.name}/{f.path}",
                "title": None,
                "description": about,
                "mime_type": f.mime_type,
                "size": f.size,
                "annotations": {"last_modified": datetime.fromtimestamp(f.mtime, timezone.utc)
                                .isoformat().replace("+00:00", "Z")},
                "meta": meta,
            })
    return out


def _served_skill_md(bank: Any, skill: Any, mtime: float) -> FileEntry | None:
    """The SKILL.md entry of what a read serves while the file is half-saved (its last good
    version, skillbank.memories.skills.last_good), or None when a read serves the file.

    Why: the listing and the Skills extension's manifest advertised the torn file's digest and
    size while a read served the last good bytes, so a client checking the digest rejected
    them (review, session 21)."""
    from skillbank.memories.skills.last_good import is_editing_note

    if not any(is_editing_note(note) for note in skill.notes):
        return None
    data = bank.skills.read_resource(skill.name, "SKILL.md").encode("utf-8")
    return FileEntry("SKILL.md", len(data), hashlib.sha256(data).hexdigest(), mtime)


def read_skill_file(bank: Any, name: str, path: str) -> tuple[str | bytes, str]:
    """Content and mime type of one skill file, through the library (which refuses unsafe
    paths and checks a pinned file's bytes): text, or the bytes of a file that is not text.
    It read such a file again here, past the pin check and the hidden-character rules of a
    skill not the bank's own (hunt-mcpauthor #2, session 37)."""
    content = bank.skills.read_resource(name, path, blob=True)
    if isinstance(content, bytes):
        return content, mime_type_for(path, True)
    return content, "text/markdown" if path == "SKILL.md" else mime_type_for(path, False)


# The audit log for reviewers ------------------------------------------------------------------
AUDIT_URI = "skillbank://audit"
AUDIT_LIMIT = 500


def register_audit(server: Any, *, trusted: bool) -> None:
    """`skillbank://audit`: the newest audit events (never memory text) for reviewers.

    Listed only by a server that may have reviewers (trusted clients, or a tokens file with
    principals); each read checks the caller's own scope: a session whose role is below
    reviewer gets a clear error, and a reviewer sees only the namespaces it reviews.

    A server whose clients are all untrusted (HTTP without --trust, no tokens file) has no
    reviewer, ever: it listed the resource and every read was refused "for reviewers"
    (hunt-mcp-longlived #5, session 31), so it does not register it.
    """
    if not trusted:
        return
    from mcp.server.mcpserver.exceptions import ResourceError

    @server.resource(AUDIT_URI, name="audit", mime_type="application/json",
                     description="Who wrote, reviewed, voted, pruned or forgot what (reviewers)")
    async def audit() -> str:
        import json

        from skillbank import scope as scopes

        def collect(bank: Any) -> list[dict[str, Any]]:
            caller = scopes.active() or scopes.default_scope(
                getattr(getattr(bank, "settings", None), "namespace", None) or "default",
                trusted=trusted, face="mcp")
            from skillbank.audit import log_of, reviewed_namespaces, visible_to

            # Refused before anything is read; the scope and the bound go into the query, which
            # read the whole log for its last AUDIT_LIMIT events (as the browser's page did).
            reviewed = reviewed_namespaces(caller, AUDIT_URI)
            events = log_of(bank).query(namespaces=reviewed, limit=AUDIT_LIMIT)
            return [e.to_json() for e in visible_to(caller, events, AUDIT_URI)]

        from skillbank.errors import PermissionDeniedError

        try:
            rows = await server.run_bank("experiences", collect)
        except PermissionDeniedError as exc:
            raise ResourceError(str(exc)) from None
        except Exception as exc:  # noqa: BLE001 - a clear message, never a traceback
            raise ResourceError(f"{AUDIT_URI}: {exc}") from None
        return json.dumps({"events": rows, "newest_last": True}, indent=2)
