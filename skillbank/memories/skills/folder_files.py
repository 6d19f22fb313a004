"""Which files a skill folder has, for each reader: the walk a skill's version is taken over
(`skill_files`), what a read of it serves (`served_files`), and what the scanner loads
(`every_file`).

One module so the version a pin accepts, the resources `load()` lists and the manifest the MCP
skills extension publishes are the same files: the manifest walked here while the library
listed its resources with a walk of its own, and the hard-link rule for third-party skills
lived in the MCP face.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from stat import S_ISREG

from skillbank.fsutil import path_refusal

SKILL_FILE = "SKILL.md"
MAX_FILES = 512  # the MCP skills extension's per-skill limit
#: Folders a skill's walk does not enter: version control, vendored packages, caches.
SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".hg", ".svn"})


def file_gone(path: str) -> bool:
    """Whether `path` no longer exists (a dangling link too). Only "no such file" counts: a
    folder the process may not read is unreadable, not gone."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except (OSError, ValueError):  # EACCES, ELOOP, a NUL in the path: not "gone"
        return False
    return False


def hard_linked(st: os.stat_result) -> bool:
    """Whether a regular file has other names (hard links), which may lie outside its skill.

    A `references/hard.md` hard-linked to a file outside the folder (a tar extracted without
    `filter="data"` makes one) served that file's content from a third-party skill, where a
    symlink out was refused. Where its other names are cannot be told cheaply, so a skill not
    the bank's own has no hard-linked resources."""
    return st.st_nlink > 1


#: Files an operating system writes into a folder someone browses, by name and first bytes:
#: Finder's `.DS_Store` ("Bud1"), AppleDouble `._*` files, Explorer's `Thumbs.db` (an OLE file).
#: An accepted third-party skill went back to review when a Mac opened its folder (review #6).
#: The bytes are checked too, so a script named `._run.sh` still counts.
OS_METADATA_MAGIC = {".DS_Store": b"\0\0\0\x01Bud1", "._": b"\0\x05\x16\x07",
                     "thumbs.db": b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"}
#: What a Windows `desktop.ini` holds: `[section]`, `key=value` and `;` lines, none of the
#: characters a shell would run something with (a shell runs `x=$(curl …)` in an INI file).
_INI_LINE = re.compile(r"^(?:\s*|\s*\[[^\]]*\]\s*|\s*;.*|[^=]+=.*)$")
_SHELL_CHARS = re.compile(r"[$`;|&<>()]")


def os_metadata(path: Path, stat: os.stat_result) -> bool:
    """Whether a file is folder metadata an operating system wrote, left out of a non-own
    skill's whole-folder version (`DigestCache.outside_digest`)."""
    name = path.name
    key = "._" if name.startswith("._") else (name.lower() if name.lower() in (
        "thumbs.db", "desktop.ini") else name)
    if key not in OS_METADATA_MAGIC and key != "desktop.ini":
        return False
    try:
        with path.open("rb") as handle:
            data = handle.read(4096 + 1)
    except OSError:
        return False
    if key != "desktop.ini":
        return data.startswith(OS_METADATA_MAGIC[key])
    if len(data) > 4096 or stat.st_size > 4096:
        return False
    text = data.decode("utf-16" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else "utf-8", "replace")
    lines = text.lstrip("\ufeff").splitlines()
    return all(_INI_LINE.match(line) and not (";" not in line[:1] and _SHELL_CHARS.search(line))
               for line in lines)


def skill_files(folder: Path) -> list[tuple[str, os.stat_result]]:
    """Files of a skill folder with their stat, the ones its version covers (the MCP skills
    extension's manifest lists them): hidden and vendored entries skipped, symlinks that leave
    the folder skipped, at most `MAX_FILES`."""
    out: list[tuple[str, os.stat_result]] = []
    try:
        real_folder = folder.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a link loop, on Python before 3.13
        return out
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS)
        for filename in sorted(filenames):
            if filename.startswith("."):
                continue
            path = Path(dirpath) / filename
            try:
                if path.is_symlink() and real_folder not in path.resolve().parents:
                    continue
                stat = path.stat()
            except (OSError, RuntimeError):  # a link loop (`self -> self`) is no file of it
                continue
            if not S_ISREG(stat.st_mode):
                continue  # a FIFO, socket or device: reading it would block or never end
            if filename.lower() in ("thumbs.db", "desktop.ini") and os_metadata(path, stat):
                continue  # not hidden, so pinned one by one: Explorer's files changed the pin
            out.append((path.relative_to(folder).as_posix(), stat))
            if len(out) >= MAX_FILES:
                return out
    return out


#: Folders no walk of a whole skill folder enters: version control metadata (rewritten by a
#: `git status`), as the scanner skips it too.
VCS_DIRS = frozenset({".git", ".hg", ".svn"})


def every_file(folder: Path, limit: int, skip: frozenset[str] = VCS_DIRS,
               ) -> tuple[list[tuple[str, os.stat_result]], bool]:
    """(files, complete): every regular file of a skill folder as the scanner loads it — hidden
    and vendored ones too, symlinks not followed, version control folders left out — with its
    lstat, at most `limit` of them (`complete` is False when there were more); folders named
    in `skip` are not entered.

    What `skill_files` leaves out is still there for a skill's script to run, and the scanner
    reads it: checks that guard the scan must look where the scanner looks."""
    out: list[tuple[str, os.stat_result]] = []
    pending = [("", str(folder))]
    while pending:
        prefix, path = pending.pop()
        try:
            with os.scandir(path) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in skip:
                        pending.append((prefix + entry.name + "/", entry.path))
                    continue
                stat = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if not S_ISREG(stat.st_mode):
                continue
            if len(out) >= limit:
                return out, False
            out.append((prefix + entry.name, stat))
    return out, True


def left_out(relative: str) -> bool:
    """Whether a path inside a skill folder is one no walk of it lists: a hidden or vendored
    part on the way (`.git/config`, `.env`, `node_modules/x/index.js`). A read refuses these
    for every skill: the bank's own skill folder that was a git clone served `.git/config`,
    remote URL and token, to an untrusted MCP client (hunt-git #4, session 23)."""
    return any(part.startswith(".") or part in SKIP_DIRS
               for part in relative.split("/") if part not in ("", "."))


def leads_left_out(folder: Path, relative: str) -> bool:
    """Whether `relative` leads, through a link on the way, to a file `left_out` names (or out
    of the folder): `notes.md -> .git/config` or a folder link `docs -> .git` served the token
    that `.git/config` itself no longer served (review of session 23)."""
    try:
        real = (folder / relative).resolve().relative_to(folder.resolve())
    except (OSError, RuntimeError, ValueError):  # RuntimeError: a link loop (Python < 3.13)
        return True
    return left_out(real.as_posix())


def served_files(folder: Path, own: bool = True) -> list[tuple[str, os.stat_result]]:
    """The files beside the top SKILL.md that a read of the skill serves: the version's walk
    (`skill_files`) less, for a skill not the bank's own, its hard-linked files, less a
    link to a hidden or vendored file, and less a file whose name no read accepts
    (`fsutil.path_refusal`: a backslash or a literal `%2e`, `%2f`, `%5c`), which every face
    listed and none could read (hunt-disclose #5, session 25). The version still covers it."""
    return [(relative, stat) for relative, stat in skill_files(folder)
            if relative != SKILL_FILE and (own or not hard_linked(stat))
            and path_refusal(relative) is None
            and not (os.path.islink(folder / relative) and leads_left_out(folder, relative))]
