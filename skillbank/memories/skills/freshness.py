"""Skill reads that see the folders as they are now, with or without a file watcher.

Why (hunt-author #4, session 24): a LangChain agent set up as the README shows
(`Skillbank.open(root, skill_roots=[dir])` and `SkillbankMiddleware(bank)` in one long-running
process) never saw a skill added on disk, and showed an edited one with its old description
("Skills that may apply", from the index) beside its new body ("Skill instructions", read from
the file) — a skill no one wrote. Only a watcher kept the index current, and only the MCP
server, a served owner and `bank.watch()` started one: deepagents' "skills loaded once, so
changes never appear", the bug DESIGN.md names.

So each skill read (`search`, `catalog`, `list`, `load`) re-checks, at most every
`seconds` (the `skills_recheck_seconds` setting, default 2; 0 turns it off) and only while no
watcher runs, whether the skill folders still hold what the last sync saw, and syncs if not:

* Why on reads, not a watcher started on the first read: a read pays for the check only when it
  is due, on its own thread, so a one-shot script or CLI command leaves no thread behind, a
  test's explicit `sync()` is not raced by a background one, and no inotify instance (128 per
  user by default) is taken per bank. Changes show at the first read after them, which is when
  they matter.
* Why a cached walk: a no-change sync of 1,739 skills took 124-365 ms (median 178) on a loaded
  2-core machine (it lists every folder, stats every SKILL.md, reads the index's metadata);
  the re-check's walk, which lists only folders whose (mtime, ctime) moved since it last
  listed them, took 20-85 ms (median 36); 0.2 ms for 18 skills. A listing taken within
  `RACY_NS` of its folder's last change is not kept: a later change in the same timestamp tick
  would not move the stamp ("racy git").
* Why hits are checked too: inside the window a search answered from the index while `load`
  read the file. A search whose hits' SKILL.md files are not what the last sync saw (one stat
  each), or that ran while a sync changed the index, syncs and searches again, so its
  descriptions are those of the files `load` then reads.

What a re-check staged is searchable by keyword at once; the summary vectors of a skill or two
are embedded on the reading thread (by keyword alone an edited skill was listed without its
body), anything more on the `Filler`'s thread, which ends when they are in (as the watcher's).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
import threading
import time
from pathlib import Path
from typing import Any, Iterator

from skillbank.memories.skills.folder_files import SKILL_FILE, SKIP_DIRS

log = logging.getLogger("skillbank.skills")

#: A folder listed this soon after its last change is listed again next time (2 s: the coarsest
#: timestamps in use, FAT's, tick every 2 s; ext4 and APFS tick in milliseconds).
RACY_NS = 2_000_000_000
#: Up to this many changed skills get their summary vectors on the reading thread (one text
#: each; with SKILLBANK_BODY_SECTIONS=1 their body sections follow on the `Filler`'s thread);
#: more wait for the `Filler`. One skill took 96-141 ms, two 181 ms, four ~1 s on a loaded 2-core
#: machine: an author's edit, not a `git checkout`, is worth a read's wait.
INLINE_SKILLS = 2


def stat_key(path: str | Path) -> str:
    """A SKILL.md's "mtime_ns:size:ctime_ns" as the sync records it ("" when it cannot be
    stat-ed)."""
    try:
        stat = os.stat(path)
    except OSError:
        return ""
    return key_of(stat)


def key_of(stat: os.stat_result) -> str:
    """What tells a sync a SKILL.md may have changed, so it reads it again: its mtime and size,
    and its ctime. Why ctime (hunt-disk #7, session 29): `chmod 000` changes only the ctime, so
    a file made unreadable after indexing was called "unchanged" and its cached body served;
    ctime moves on any change to the file or its mode or owner, and nothing sets it back. An
    index written before keeps "mtime_ns:size": each file is read once more, found the same by
    its hash, and not embedded again."""
    return f"{stat.st_mtime_ns}:{stat.st_size}:{stat.st_ctime_ns}"


class Listings:
    """Each folder's sorted entries, kept while the folder's (device, inode, mtime, ctime)
    stay the same: adding, removing or renaming an entry changes the folder's mtime and
    ctime; nothing sets ctime back. Each walk keeps only the folders it visited."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[tuple[int, int, int, int], list[os.DirEntry[str]]]] = {}
        self._visited: dict[str, tuple[tuple[int, int, int, int], list[os.DirEntry[str]]]] = {}

    def entries(self, folder: str) -> list[os.DirEntry[str]]:
        stat = os.stat(folder)
        stamp = (stat.st_dev, stat.st_ino, stat.st_mtime_ns, stat.st_ctime_ns)
        kept = self._kept.get(folder)
        if kept is not None and kept[0] == stamp:
            entries = kept[1]
        else:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
            if time.time_ns() - stat.st_ctime_ns <= RACY_NS:
                return entries  # changed a moment ago: maybe again within the same tick
        self._visited[folder] = (stamp, entries)
        return entries

    def walked(self) -> None:
        """A walk ended: what it did not visit is not kept."""
        self._kept, self._visited = self._visited, {}


#: Folders a walk looks in per hidden folder, and in all, to count the skills hidden folders
#: hold (`skill_files`): one shared budget was spent on the `.github` folders of earlier
#: checkouts and the later ones' `.curated` went unnamed (review 2, session 36).
DOT_BUDGET = 64
DOT_TOTAL = 512
#: Hidden folders tools keep caches and settings in: never a skill collection.
_TOOL_CACHE = re.compile(r"^\.(?:tox|nox|eggs|idea|vscode|npm|yarn|gradle|m2|next|nuxt|terraform"
                         r"|cargo|rustup|pnpm-store|docker|local|config|DS_Store|direnv|hypothesis"
                         r"|ipynb_checkpoints|[\w-]*cache)$", re.I)


def is_tool_cache(name: str) -> bool:
    """Whether a hidden folder's `name` is a tool's cache or settings (`.tox`, `.mypy_cache`)."""
    return bool(_TOOL_CACHE.match(name))


def skill_files(root: Path, max_depth: int, max_dirs: int,
                listings: Listings | None = None,
                refused: list[tuple[str, OSError]] | None = None,
                odd: list[tuple[str, str]] | None = None,
                hidden: list[tuple[str, list[str]]] | None = None,
                dotted: list[tuple[str, int]] | None = None) -> list[str]:
    """SKILL.md files under `root`, skipping hidden and vendored folders and symlink loops
    (`SkillLibrary._walk`; with `listings`, unchanged folders are not listed again). Paths as
    text, gathered by plain recursion: `Path` objects and chained generators were half of a
    re-check's time. Folders that could not be listed go to `refused` when it is given (their
    skills are not found; `unreadable_files` names them).

    Skipped without a word before (hunt-corpus #5, session 30), so named when asked: `odd`
    gets each SKILL.md that is not a regular file (a FIFO, a link to a device, a folder) with
    what it is; `hidden`, each skill's SKILL.md with the SKILL.md files below it that the walk
    would have found without it (a skill's subfolders are its resources: a SKILL.md dropped in a
    collection's folder took the skills below it out of the index). That look below has its own
    budget and its own record of folders seen, so it never costs the walk a skill. `dotted`
    gets each hidden folder (a name starting with '.', not a VCS or vendored one) the walk
    skipped with how many SKILL.md files a walk of it would find, when it holds any: a checkout
    keeping all its skills in `skills/.curated` was "no SKILL.md found" and an empty index
    without a word why (hunt-clicorpus #1, session 36). Hidden folders stay unwalked: looking
    in them has a small budget (`DOT_BUDGET` folders each, `DOT_TOTAL` a walk, from the walk's
    own depth) and a record of folders seen of its own, and tool caches (`.tox`, `.mypy_cache` ...) are not
    looked in: a root holding a `.tox` of 6,600 folders made a no-change sync 1 ms -> 121 ms
    (review 1, session 36). A count is then at least what it says."""
    found: list[str] = []
    if not root.is_dir():
        return found
    # A folder is known by its (device, inode) — one stat, where `realpath` took an lstat per
    # path component; a thousand skill folders made it most of a no-change sync (#27: every
    # server start runs one on the snapshot). A folder that cannot be stat-ed is known by its
    # real path, as before.
    seen: set[object] = set()
    budget = [max_dirs]
    below: tuple[set[object], list[int]] = (set(), [max_dirs])  # the look below skills'
    dots_seen: set[object] = set()  # the look in hidden folders: its own record and budget
    dots_left = [min(max_dirs, DOT_TOTAL)]
    looking_below = [""]  # the skill folder whose look below runs (`descend`'s links)

    def identity(path: str, entry: os.DirEntry[str] | None = None) -> object:
        try:
            stat = entry.stat() if entry is not None else os.stat(path)
        except OSError:
            return os.path.realpath(path)
        if not stat.st_ino:  # no inode given (a DirEntry's stat on Windows, some mounts)
            return os.path.realpath(path)
        return (stat.st_dev, stat.st_ino)

    def visit(folder: str, key: object, depth: int, into: list[str] = found,
              walked: tuple[set[object], list[int]] = (seen, budget)) -> None:
        if key in walked[0] or walked[1][0] <= 0:
            return
        walked[0].add(key)
        walked[1][0] -= 1
        try:
            entries = listings.entries(folder) if listings is not None else \
                sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            if refused is not None and into is found:
                refused.append((folder, exc))
            return
        skill = next((e for e in entries if e.name == SKILL_FILE), None)
        if skill is not None and regular(skill):
            into.append(os.path.join(folder, SKILL_FILE))
            if hidden is not None and into is found:  # what it hides (see the docstring)
                hides: list[str] = []
                looking_below[0] = folder
                descend(entries, depth, hides, below)
                if hides:
                    hidden.append((into[-1], hides))
            return  # a skill's own subfolders are its resources, not more skills
        if skill is not None and odd is not None and into is found:
            odd.append((os.path.join(folder, SKILL_FILE), _what_it_is(skill)))
        descend(entries, depth, into, walked)

    def descend(entries: list[os.DirEntry[str]], depth: int, into: list[str],
                walked: tuple[set[object], list[int]]) -> None:
        if depth >= max_depth:
            return
        for entry in entries:
            if entry.name.startswith(".") and dotted is not None and into is found \
                    and entry.name not in SKIP_DIRS and not is_tool_cache(entry.name) \
                    and _is_folder(entry):
                inside: list[str] = []
                each = (dots_seen, [min(DOT_BUDGET, dots_left[0])])
                given = each[1][0]
                visit(entry.path, identity(entry.path, entry), depth + 1, inside, each)
                dots_left[0] -= given - each[1][0]
                if inside:
                    dotted.append((entry.path, len(inside)))
            if entry.name.startswith(".") or entry.name in SKIP_DIRS:
                continue
            try:
                folder = entry.is_dir()
            except OSError as exc:  # a link loop (ELOOP): no folder to look in; named (a
                # SKILL.md that loops is named by `odd`) and skipped, not the walk's end
                if refused is not None and into is found and entry.name != SKILL_FILE:
                    refused.append((entry.path, exc))
                continue
            if folder and walked is below and entry.is_symlink() \
                    and not _strictly_inside(entry.path, looking_below[0]):
                # A link out of the skill's folder (`up -> ..`) is not what it hides: the look
                # below followed it into the sibling skills the walk serves, and said the skill
                # hid them all (hunt-mcpcorpus #2, session 38). Reads refuse such paths too.
                continue
            if folder:
                visit(entry.path, identity(entry.path, entry), depth + 1, into, walked)

    visit(str(root), identity(str(root)), 0)
    return found


def _strictly_inside(path: str, folder: str) -> bool:
    """Whether `path`, links resolved, is inside `folder` (and not `folder` itself). Only a
    link's target is resolved: `realpath` costs an lstat per path component."""
    base = os.path.realpath(folder)
    return os.path.realpath(path).startswith(base.rstrip(os.sep) + os.sep)


def regular(entry: os.DirEntry[str]) -> bool:
    """Whether an entry is (or links to) a regular file. A link that loops (`SKILL.md ->
    SKILL.md`) is not: `is_file()` raised ELOOP out of the walk, and one such link in any skill
    folder kept the bank from opening and every later search from answering (hunt-badinput #1,
    session 34); it is named as `odd` instead."""
    try:
        return entry.is_file()
    except OSError:
        return False


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:  # a link loop: no folder to look in
        return False


def _what_it_is(entry: os.DirEntry[str]) -> str:
    """What a SKILL.md that is not a regular file is, in words."""
    import stat as kinds

    try:
        mode = entry.stat().st_mode  # through a link: what it points at
    except OSError as exc:
        return f"a link that leads nowhere ({(exc.strerror or str(exc)).lower()})"
    for test, words in ((kinds.S_ISDIR, "a folder"), (kinds.S_ISFIFO, "a FIFO"),
                        (kinds.S_ISCHR, "a device"), (kinds.S_ISBLK, "a device"),
                        (kinds.S_ISSOCK, "a socket")):
        if test(mode):
            return words
    return "not a regular file"


class Freshness:
    """When a library's reads re-sync it (see the module's docstring). Inert until the bank
    sets `seconds` (a snapshot library, `skillbank.snapshot_search`, never syncs)."""

    def __init__(self, library: Any) -> None:
        self._library = library
        #: At most this often a read re-checks the folders; 0: reads never sync.
        self.seconds = 0.0
        #: What the last sync saw: each SKILL.md's path and stat key. None: no sync yet.
        self._seen: dict[str, str] | None = None
        self._checked = -math.inf  # when the folders were last looked at (time.monotonic)
        #: Bumped as each sync's changes are in the index: a search that ran across one may
        #: mix before and after, and runs again.
        self.generation = 0
        self._watchers = 0
        self._lock = threading.Lock()
        self._checking = threading.Lock()
        self._listings = Listings()
        self._filler: Any = None
        self._ended = threading.Event()

    def saw(self, seen: dict[str, str], started: float) -> None:
        """A sync that began its walk at `started` put what it saw (`seen`) in the index."""
        with self._lock:
            self._seen = seen
            self._checked = max(self._checked, started)
            self.generation += 1

    def wrote(self, path: str, key: str) -> None:
        """The library itself wrote and indexed `path` (save, update, rename …): it is as
        the index says, so neither a re-check nor a search syncs for it."""
        with self._lock:
            if self._seen is not None:
                self._seen = {**self._seen, path: key}
                self.generation += 1

    @contextlib.contextmanager
    def watched(self) -> Iterator[None]:
        """While a watcher runs it keeps the index current: reads need not walk."""
        with self._lock:
            self._watchers += 1
        try:
            yield
        finally:
            with self._lock:
                self._watchers -= 1

    def recheck(self) -> None:
        """Before a read: when due, sync if the folders changed since the last sync. A read
        while another thread checks does not wait for it; one while `reindex` rebuilds the
        index does (`index_rebuild`: it searched an emptied index, "No skill fits")."""
        from skillbank.index_rebuild import wait_rebuilt

        held = getattr(self._library, "_sync_lock", None)
        if held is None or not held._is_owned():  # a write holding it: ordered with a reindex
            wait_rebuilt(getattr(self._library, "index", None))
        if self.seconds <= 0 or self._watchers:
            return
        now = time.monotonic()
        if now - self._checked < self.seconds or not self._checking.acquire(blocking=False):
            return
        try:
            self._checked = now
            if self._on_disk() != self._seen:
                self.refresh()
        finally:
            self._checking.release()

    def current(self, hits: Any, generation: int) -> bool:
        """Whether `hits` (found while `self.generation` was `generation`) are what the files
        say; if one's SKILL.md changed since the last sync, sync first. False: search again."""
        if self.seconds <= 0:
            return True
        seen = self._seen or {}
        if any(seen.get(hit.record.path) != stat_key(hit.record.path) for hit in hits):
            self.refresh()
            return False
        return self.generation == generation

    def declaration_key(self, path: str, indexed_hash: str) -> str:
        """What to read a skill's tool declaration under (`dependencies.of_file`): its indexed
        hash, or its file's stat key when the file changed since the last sync. A skill the tool
        gate leaves out is not a hit, so `current` did not see its edit: a loosened
        allowed-tools stayed gated until the re-check while a tightened one (on a hit) applied
        at once (hunt-routing #10, session 28). Served, it is a hit whose file changed, and the
        search syncs and runs again."""
        if self.seconds <= 0 or self._seen is None:
            return indexed_hash
        now = stat_key(path)
        return indexed_hash if self._seen.get(path) == now else f"stat:{now}"

    def refresh(self) -> None:
        """Sync now: searchable by keyword at once. The summary vectors of a few skills (an
        author's edit) are embedded on this thread, so this very read ranks them as before the
        edit (by keyword alone the edited skill was listed without its body); their body
        sections, and everything of more skills (a `git checkout`), behind on the `Filler`'s
        thread, as the watcher does."""
        try:
            report = self._library.sync(embed=False, asked=False)  # told later: unasked.py
        except Exception as exc:  # noqa: BLE001 - a read answers from the index it has; the
            # next re-check tries again (a Chroma server down, a folder unreadable meanwhile)
            log.warning("skillbank: re-syncing the changed skill folders failed: %s", exc)
            return
        if not (report.added or report.changed):
            return
        if self._library.index.pending <= INLINE_SKILLS:
            summaries_in = threading.Event()  # the body sections are the filler's
            try:  # another thread filling already takes them (wait=False)
                self._library.fill_dense(stop=summaries_in, wait=False,
                                         summaries_done=summaries_in.set)
            except Exception as exc:  # noqa: BLE001 - keyword search answers; the filler retries
                log.warning("skillbank: embedding changed skills failed: %s", exc)
        with self._lock:
            if self._filler is None:
                from skillbank.memories.skills.watching import Filler

                self._filler = Filler(self._library, self._ended)
            filler = self._filler
        filler.ask()

    def stop(self, timeout: float | None = None) -> bool:
        """Stop embedding what a re-check staged (between batches); False if still running
        after `timeout`. A later re-check embeds again (the bank calls this on close)."""
        with self._lock:
            filler, ended = self._filler, self._ended
            self._filler, self._ended = None, threading.Event()
        if filler is None:
            return True
        ended.set()
        return filler.join(timeout)

    def _on_disk(self) -> dict[str, str]:
        """Each SKILL.md under the library's roots with its stat key, as `_scan` records them."""
        library = self._library
        found: dict[str, str] = {}
        for root, _ in library.roots:
            for path in skill_files(root, library.max_depth, library.max_dirs, self._listings):
                if (key := stat_key(path)):
                    found[path] = key
        self._listings.walked()
        return found
