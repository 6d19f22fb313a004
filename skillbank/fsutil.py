"""Safe file operations: atomic writes, names that cannot leave their folder, a writer lock,
an exclusive OS lock between processes.

Files are skillbank's source of truth, so every write goes through here: a crash mid-write leaves
the old file or the new one, never half of either, and no name from a model or a network can
point outside the memory root.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import secrets
import stat
import time
import unicodedata
from contextlib import contextmanager
from glob import escape as glob_escape
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Iterator

from skillbank import text_words
from skillbank.errors import (InvalidInputError, PathBlockedError,  # noqa: F401 - re-exported
                              UnsafePathError)

#: Names Windows reserves for devices: a folder called `con` cannot be created or copied there.
_DEVICE_NAMES = frozenset(
    ["con", "prn", "aux", "nul"] + [f"com{i}" for i in range(10)] + [f"lpt{i}" for i in range(10)]
)
_SLUG = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")


def check_slug(value: str, what: str = "name") -> str:
    """Return `value` if it is a safe slug (a-z, 0-9, single hyphens, 1–64 chars), else raise.

    Slugs are the only names that become folders (skills, guideline topics and ids), which rules
    out `..`, separators of any platform, encoded tricks and reserved device names in one check.
    """
    if isinstance(value, str) and value in _DEVICE_NAMES:
        raise UnsafePathError(f"invalid {what} {value!r}: reserved as a device name on Windows")
    if not isinstance(value, str) or not _SLUG.match(value) or "--" in value:
        raise UnsafePathError(
            f"invalid {what} {value!r}: use 1-64 lowercase letters, digits and single hyphens, "
            "not starting or ending with a hyphen"
        )
    return value


#: A topic: words of any script (`text_words`: letters, digits, their combining marks; lower
#: case, NFC) joined by single hyphens. Topics are folder names, and every platform holds these:
#: no separator, no character Windows refuses (`<>:"/\\|?*`, controls), no trailing dot or space,
#: no case pair (lower case only, so a case-insensitive file system cannot merge two topics).
#: UTF-8 bytes a topic folder name may take (file systems allow 255; 64 CJK letters take 192).
_TOPIC_BYTES = 200
#: Latin letters NFKD does not split into a base letter and a mark.
_LATIN = str.maketrans({"ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "đ": "d", "ð": "d", "þ": "th",
                        "ł": "l", "ı": "i", "ħ": "h", "ŧ": "t", "ŋ": "n"})


def check_topic(value: str, what: str = "topic") -> str:
    """Return `value` in NFC if it is a safe topic name, else raise UnsafePathError.

    A topic is a slug (`check_slug`) whose letters may be of any script ("数据库", "безопасность"):
    Chinese topics all became "general", so `context_for(topic="前端")` served database rules.
    Skill names are not topics: the Agent Skills spec keeps them to a-z, 0-9 and hyphens.
    A folder name read back in NFD (macOS HFS+) is the same topic.
    """
    if not isinstance(value, str) or value.isascii():
        return check_slug(value, what)
    nfc = unicodedata.normalize("NFC", value)
    word = text_words.word()
    if (not re.fullmatch(f"{word}(?:-{word})*", nfc) or nfc != nfc.lower() or len(nfc) > 64
            or len(nfc.encode("utf-8", "replace")) > _TOPIC_BYTES):
        raise UnsafePathError(
            f"invalid {what} {value!r}: use 1-64 lower-case letters (any script), digits and "
            "single hyphens, not starting or ending with a hyphen")
    return nfc


def slugify(text: str, max_len: int = 48) -> str:
    """A topic name (`check_topic`) from free text: Latin letters lose their accents, as a
    person would type the folder ("Sécurité" -> "securite", "Größe" -> "grosse"); other
    scripts stay as they are ("数据库"); "general" only for text that names nothing.

    It kept only a-z0-9: "Sécurité" became "s-curit" and every Chinese topic "general", so
    `context_for(topic="前端")` served database rules. Text of symbols with no letter or digit
    ("🚀") gets a short stable hash; punctuation alone ("-") is "general".
    """
    slug = "-".join(text_words.word_pattern().findall(latin_plain(text or "")))
    slug = slug[:max_len].strip("-")
    while len(slug.encode("utf-8")) > _TOPIC_BYTES:
        slug = slug[:-1].rstrip("-")
    if slug:
        return unicodedata.normalize("NFC", slug)
    named = unicodedata.normalize("NFC", text or "").strip()
    if all(unicodedata.category(ch)[0] in "PZ" for ch in named):
        return "general"  # "", "-" or "...": what a distiller may answer for "no topic"
    return "topic-" + hashlib.sha256(named.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def latin_plain(text: str) -> str:
    """`text` in lower case (NFKC) with the marks of Latin letters dropped ("é" -> "e",
    "İ" -> "i"), other scripts' marks kept; NFC again."""
    decomposed = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", text).lower()
                                       .translate(_LATIN))
    kept: list[str] = []
    latin = False
    for ch in decomposed:
        if unicodedata.combining(ch):
            if not latin:
                kept.append(ch)
            continue
        latin = ch.isascii()
        kept.append(ch)
    return unicodedata.normalize("NFC", "".join(kept))


def safe_join(root: Path, relative: str) -> Path:
    """Join a user-supplied relative path under `root`, refusing anything that leaves it.

    Refuses absolute paths, drive letters, backslashes, `..` parts, NUL bytes, percent-encoded
    separators, and symlinks anywhere on the way that resolve outside the root. The name checks
    are `path_refusal`'s, which the listings share: a file no read accepts is never listed.
    """
    refusal = path_refusal(relative)
    if refusal:
        raise UnsafePathError(refusal)
    root_resolved = root.resolve()
    try:
        candidate = (root / relative).resolve()
    except OSError as exc:
        raise UnsafePathError(f"path {relative!r} cannot be used: {exc.strerror or exc}") from None
    except RuntimeError:  # "Symlink loop from …" (Python before 3.13): not a SkillbankError
        raise UnsafePathError(f"path {relative!r} cannot be used: a link on the way loops "
                              "back on itself") from None
    if candidate != root_resolved and root_resolved not in candidate.parents:
        raise UnsafePathError(f"path {relative!r} resolves outside its folder")
    for parent in candidate.parents:
        if parent == root_resolved:
            break
        if parent.exists() and not parent.is_dir():
            raise UnsafePathError(f"path {relative!r} goes through {parent.name!r}, which is a file")
    return root / relative


def path_refusal(relative: str) -> str | None:
    """Why `safe_join` refuses `relative` by its text alone (None when it does not): the checks
    that need no file system, so a listing can leave out the files no read accepts.

    A resource named `back\\slash.md` or `v1%2e0 notes.md` was listed on every face and readable
    on none (hunt-disclose #5, session 25). The names stay refused: a backslash is a separator
    on Windows, and a literal `%2e`/`%2f`/`%5c` is what a second decoding layer (a proxy, a
    client) turns into `.`, `/` or `\\`, so no face may take one for a plain name.
    Each refusal says its own reason: `./references/x.md` and `references/x.md/` were refused
    with "no '..'" (hunt-disclose #8, session 25).
    """
    if not isinstance(relative, str) or not relative or "\x00" in relative:
        return f"invalid path {relative!r}"
    try:
        relative.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate names no file (it raised a bare ValueError)
        return f"invalid path {relative!r}: not valid Unicode"
    lowered = relative.lower()
    if "\\" in relative:
        return f"path {relative!r}: separators must be plain '/' (no backslash)"
    if "%2f" in lowered or "%5c" in lowered or "%2e" in lowered:
        return (f"path {relative!r} holds a percent-encoded '.', '/' or '\\' (%2e, %2f, %5c), "
                "which a second decoding would turn into a separator or '..'")
    if relative.startswith("/") or re.match(r"^[a-zA-Z]:", relative):
        return f"path {relative!r} must be relative"
    parts = relative.split("/")
    if ".." in parts:
        return f"path {relative!r} must stay inside its folder (no '..')"
    plain = "/".join(part for part in parts if part not in ("", "."))
    if not plain:
        return f"path {relative!r} names no file"
    if parts[0] == ".":
        return f"path {relative!r}: leave out the leading './' (write {plain!r})"
    if "." in parts:  # `references/./x.md` read a pinned file under a name its digests lack
        return f"path {relative!r} has a '.' part: write {plain!r}"
    if parts[-1] == "":
        return f"path {relative!r} ends with '/': name a file (write {plain!r})"
    if "" in parts:
        return f"path {relative!r} has an empty part ('//'): write {plain!r}"
    if len(relative) > 1024 or any(len(part.encode("utf-8", "replace")) > 255 for part in parts):
        return f"path {relative[:80]!r}… is too long"
    return None


def check_unicode(value: str, what: str) -> str:
    """`value` in NFC, or InvalidInputError naming `what` for a lone surrogate (what
    `json.loads` makes of an emoji escape a web client cut in half, "\\ud83d"). Every read
    that embeds a caller's text checks it first: `context_for` and `skills.search` met the
    tokenizer's raw TypeError where `guidelines.search` said what was wrong.

    NFC: a rule typed on macOS (decomposed, "U\u0308berpru\u0308fe") and the same rule typed
    elsewhere were two active rules, "the same rule with other values ('berpr' for 'u berpr')".
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputError(f"{what} is not valid Unicode text (it holds a lone surrogate); "
                                "send UTF-8 text") from None
    return nfc(value)


def nfc(value: str) -> str:
    """`value` in Unicode NFC (composed: "ü" as one character), the form text is kept in."""
    return value if value.isascii() else unicodedata.normalize("NFC", value)


def check_text(value: str, what: str = "text") -> str:
    """Refuse text that cannot be stored as UTF-8 (lone surrogates) or that hides NUL bytes."""
    if "\x00" in value:
        raise InvalidInputError(f"{what} contains a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputError(f"{what} contains characters that are not valid Unicode text "
                                "(lone surrogates)") from None
    return value


def atomic_write(path: Path, data: str | bytes | Iterable[str | bytes], *,
                 mode: int | None = None, private: bool = True,
                 before_replace: Callable[[], object] | None = None) -> os.stat_result | None:
    """Write `data` to `path` so readers see the old content or the new, never a mix.

    Temp file in the same folder, fsync, rename over the target, fsync the folder. An iterable
    of strings (or bytes) is streamed (for exports and copied files larger than memory should
    hold at once).

    A file that is replaced keeps its mode (a hand-written 0644 SKILL.md, a 0755 script stay
    so; the temp file's 0600 used to replace it). A new file is private (0600: memory records
    hold what users told their agent) unless ``private=False``, for files a person shares as
    any other (skill folders: 0666 less the umask, as `open()` gives). `mode` sets the bits
    outright, whatever the umask (a secret: the owner's endpoint, the tokens file).

    Returns the written file's `stat` (None for a device or pipe written through): the file
    this call wrote, which `os.stat(path)` afterwards may not be when another process replaces
    it meanwhile (a usage log's fold, review2 #7, session 27).

    `before_replace` runs once the new bytes are durable, just before the rename: an exception
    it raises leaves the file as it is (a rule file a person edited while the bank rewrote it:
    `skillbank.store.files.guidelines`).
    """
    if _special_file(path):
        _write_through(path, data)
        return None
    make_folder(path.parent, f"cannot write {path}")
    kept = _kept_mode(path)
    fd, tmp = _temp_file(path, mode if mode is not None else kept if kept is not None
                         else None if not private else 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            _write_data(handle, data)
            handle.flush()
            os.fsync(handle.fileno())
            written = os.fstat(handle.fileno())
        if before_replace is not None:
            before_replace()
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError) and exc.filename is None:
            # A write through a handle names no file: "[Errno 27] File too large" said neither
            # which file nor why (hunt-disk #4, session 29).
            exc.filename = str(path)
        raise
    fsync_dir(path.parent)
    return written


def _kept_mode(path: Path) -> int | None:
    """The permission bits of the regular file at `path`, which a rewrite keeps (None: there is
    none, so the new file gets the umask's default)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return stat.S_IMODE(info.st_mode) & 0o777 if stat.S_ISREG(info.st_mode) else None


def _temp_file(path: Path, mode: int | None) -> tuple[int, str]:
    """Create `.<name>.<random>.tmp` beside `path` (the name `remove_leftovers` knows) and
    open it for writing.

    Created like any file (0666 less the umask) rather than with mkstemp's fixed 0600, then
    set to `mode` when one is given, before a byte is written: a private file is never
    readable by others, even empty."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | \
        getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        name = os.path.join(path.parent, f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(name, flags, 0o666 if mode is None else mode)
        except FileExistsError:
            continue
        if mode is not None and hasattr(os, "fchmod"):
            try:
                os.fchmod(fd, mode)  # the umask may have taken bits the kept mode has
            except BaseException:
                os.close(fd)
                os.unlink(name)
                raise
        return fd, name
    raise FileExistsError(errno.EEXIST, f"no free temp file name beside {path}")


def _special_file(path: Path) -> bool:
    """Whether `path` is (or links to) a device, a pipe or a socket: `/dev/null`,
    `/dev/stdout`, a FIFO another program reads. Renaming a temp file over it replaced it with
    a regular file (an export to /dev/null run as root broke /dev/null for the machine)."""
    if os.path.abspath(path).startswith(("/dev/", "/proc/")):
        # /dev/stdout links to the process's stdout, a regular file when redirected: renaming
        # over it would still replace the link (and put a temp file in /dev).
        return os.path.lexists(path)
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


#: How long a write into a pipe waits for a program to open it for reading.
PIPE_READER_WAIT = 5.0


def make_folder(folder: Path, doing: str) -> None:
    """`folder.mkdir(parents=True, exist_ok=True)`, or a clear PathBlockedError ("`doing`:
    X on its path is a broken link / not a folder") where a file or a dangling symlink stands
    in the way. Why: `<root>/skills` a dangling link made every skill command and `stats` fail
    with a bare "[Errno 17] File exists" (hunt-disk #6, session 29)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        blocker = _first_file_on(folder)
        what = f"a broken link (to {os.readlink(blocker)})" if blocker.is_symlink() and \
            not blocker.exists() else "not a folder"
        where = f"{blocker} is" if blocker == folder else f"{blocker} on its path is"
        raise PathBlockedError(f"{doing}: {where} {what}") from None


def _first_file_on(folder: Path) -> Path:
    """The first path on the way to `folder` that is there and is not a folder (a broken
    link included: `exists()` is False for it)."""
    for part in reversed([folder, *folder.parents]):
        if os.path.lexists(part) and not part.is_dir():
            return part
    return folder


def _write_through(path: Path, data: str | bytes | Iterable[str | bytes]) -> None:
    """Write `data` into a special file as it is (nothing to rename over, nothing to fsync).

    A pipe waits for its reader at most ``PIPE_READER_WAIT`` seconds: with nobody reading it,
    opening it for writing blocked the call (and an MCP or owner process with it) for good."""
    deadline = time.monotonic() + PIPE_READER_WAIT
    while True:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as exc:
            # ENXIO: a FIFO nobody has open for reading yet (a socket file gives it too, and
            # waiting would not help it)
            if exc.errno != errno.ENXIO or not stat.S_ISFIFO(os.stat(path).st_mode):
                raise
            if time.monotonic() >= deadline:
                raise InvalidInputError(f"cannot write {path}: nothing is reading that pipe "
                                        f"(waited {PIPE_READER_WAIT:g} s)") from None
            time.sleep(0.02)
    os.set_blocking(fd, True)  # from here on, wait for the reader like any writer
    with os.fdopen(fd, "wb") as handle:
        _write_data(handle, data)


def _write_data(handle: Any, data: str | bytes | Iterable[str | bytes]) -> None:
    if isinstance(data, (str, bytes)):
        handle.write(data.encode("utf-8") if isinstance(data, str) else data)
    else:
        for chunk in data:
            handle.write(chunk if isinstance(chunk, bytes) else chunk.encode("utf-8"))


def remove_leftovers(path: Path) -> None:
    """Delete the temp files `atomic_write` left beside `path` when a process died mid-write
    (``.<name>.<random>.tmp``).

    Only for a file whose writers all hold one lock (or whose writes are over): a live
    writer's temp file would be taken from under it. Nothing reads them; they may hold text
    that was meant to be gone (a forgotten rule) or a dead owner's secret."""
    for leftover in Path(path).parent.glob(f".{glob_escape(Path(path).name)}.*.tmp"):
        try:
            leftover.unlink()
        except OSError:
            pass  # removed by another process meanwhile, or not ours to remove


def append_line(path: Path, line: str) -> None:
    """Append one line to a journal and fsync it. A torn last line is skipped on replay."""
    with open_journal(path) as handle:
        handle.write(line.rstrip("\n").encode("utf-8") + b"\n")
        handle.flush()
        os.fsync(handle.fileno())


def open_journal(path: Path) -> BinaryIO:
    """`path` opened to append bytes (its folder made if missing). A new journal is private
    (0600), as `atomic_write` makes a new file: the experiences journal held every task and
    feedback an agent recorded ("new password is hunter2") at 0644, readable by every account
    on a shared host, while the guideline files beside it were 0600 (soak #5). An existing
    journal keeps its mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | \
        getattr(os, "O_BINARY", 0)
    return os.fdopen(os.open(path, flags, 0o600), "ab")


@contextmanager
def locked_journal(path: Path, *, exclusive: bool = False) -> Iterator[BinaryIO]:
    """`path` opened to read and append (made as `open_journal` makes it), holding an OS lock
    (`flock`) on that file for the block: shared for processes that append, which never wait
    for one another, exclusive for one that replaces the file whole (a usage log's fold).

    The lock is on the file the path names once the lock is granted: a file replaced meanwhile
    (renamed over) is opened again, so an append never lands in a file already renamed away,
    where it would be lost. Where there is no `flock` (Windows) nothing is locked:
    `can_lock_journals()` says so, and nothing replaces a journal other processes append to.
    """
    fcntl = _fcntl()
    path.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | \
        getattr(os, "O_BINARY", 0)
    while True:
        handle = os.fdopen(os.open(path, flags, 0o600), "a+b")
        try:
            if fcntl is not None:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            held = os.fstat(handle.fileno())
            try:
                named = os.stat(path)
            except FileNotFoundError:
                named = None
        except BaseException:
            handle.close()
            raise
        if named is not None and (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino):
            break
        _unlock_and_close(handle, fcntl)  # replaced while we waited for it
    try:
        yield handle
    finally:
        _unlock_and_close(handle, fcntl)


def _unlock_and_close(handle: BinaryIO, fcntl: Any) -> None:
    """Let the lock go, then close. Closing alone does not release an flock while a forked
    child still holds a copy of the descriptor (the lock is the open file's, which parent and
    child share): a fork during an append left every later append of the parent, and the
    child's own, waiting until the child exited (review of fix-disk, session 29)."""
    try:
        if fcntl is not None:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    except OSError:
        pass
    finally:
        handle.close()


def can_lock_journals() -> bool:
    """Whether `locked_journal` locks (POSIX)."""
    return _fcntl() is not None


def _fcntl() -> Any:
    try:  # imported here, not at start-up (as `exclusive_lock`)
        import fcntl
    except ImportError:  # Windows
        return None
    return fcntl


#: Folders of a new embedded root that hold copies of every record (Chroma's database, the
#: keyword snapshots): made private with it. A root on a Chroma server has neither.
PRIVATE_FOLDERS = ("chroma", ".cache")


def make_root(root: Path, *, embedded: bool = True) -> bool:
    """Make the memory root `root` if it is not there yet; True when this call made it.

    A new root is private (0700), with, for the embedded index, its `chroma/` and `.cache/`:
    under the usual umask 022 a new root was 0755 and Chroma's `chroma.sqlite3` and the
    keyword snapshots, which skillbank does not write file by file, were readable by every
    account (soak #5). A root that exists keeps its mode: a folder someone set up (a group's
    shared root) is theirs to open or close; but a `chroma/` or `.cache/` skillbank makes in it
    is private too, as every file skillbank creates is (a mounted volume or a `mkdir`-ed root got
    a 0755 `chroma/` with a 0644 database beside 0600 journals: hunt-upgrade #5)."""
    root = Path(root)
    made = False
    if not root.is_dir():
        root.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.mkdir(root, 0o700)
            made = True
        except FileExistsError:  # another process made it meanwhile: theirs, as made
            pass
    for name in PRIVATE_FOLDERS if embedded else ():
        try:
            (root / name).mkdir(mode=0o700)
        except FileExistsError:  # there already: it keeps its mode
            pass
    return made


def fsync_dir(folder: Path) -> None:
    """Make a rename durable (POSIX); a no-op where folders cannot be opened."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def exclusive_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive OS lock (`flock`) on `path`, created if missing, for the block: another
    process taking it waits its turn, and the kernel releases it when a holder dies, so a killed
    command never leaves a stale lock behind. POSIX only (imported here, not at start-up)."""
    import fcntl

    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def through_link(root: Path, path: Path) -> bool:
    """Whether `path` under `root` is reached through a symbolic link below `root`."""
    folder = path.parent
    while folder != root and root in folder.parents:
        if folder.is_symlink():
            return True
        folder = folder.parent
    return False
