"""The `git` command line, called one command at a time: the only place skillbank runs git.

Why the CLI and not a library: GitPython shells out to the same binary anyway, and dulwich
re-implements git (merges, worktrees, credential helpers) in ways a reviewer's own git would not
agree with. One small wrapper keeps every call the same: no prompt ever waits for a password
(`GIT_TERMINAL_PROMPT=0`), messages are in English (`LC_ALL=C`) so an error can be explained,
network commands have a timeout, and a failure is a `GitError` carrying the command and git's
own first lines of complaint — never a raw `CalledProcessError`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Mapping, Sequence

from skillbank.errors import SkillbankError

#: Fetch and push wait at most this long for a remote (seconds); local commands are quick.
NETWORK_TIMEOUT = 120.0
LOCAL_TIMEOUT = 60.0
_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


class GitError(SkillbankError):
    """A git command failed; the message names the command, git's reason and (from the caller)
    what to fix."""

    def __init__(self, message: str, *, stderr: str = "", returncode: int | None = None) -> None:
        super().__init__(message)
        self.stderr = stderr
        self.returncode = returncode


#: The operator's settings for reaching the remote (a deploy key, a private CA, a proxy).
PASS_THROUGH = frozenset({"GIT_SSH_COMMAND", "GIT_SSH", "GIT_SSH_VARIANT", "GIT_SSL_CAINFO",
                          "GIT_SSL_CAPATH", "GIT_SSL_CERT", "GIT_SSL_KEY", "GIT_PROXY_COMMAND",
                          "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM"})

#: `merge-tree --write-tree` (merging in memory, with no worktree to undo) came with git 2.38.
MIN_VERSION = (2, 38)


def available() -> bool:
    return shutil.which("git") is not None


def version(text: str) -> tuple[int, ...]:
    """(2, 39, 5) from `git version 2.39.5` (and from vendor suffixes such as `.windows.1`)."""
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    return tuple(int(p) for p in match.groups() if p is not None) if match else ()


def reason(stderr: str, limit: int = 3) -> str:
    """git's own complaint, shortened to its first meaningful lines (hints dropped), with any
    URL's user and password hidden: git echoes the remote's URL, and a token in it reached
    /readyz and every client's error text (team hunt, session 19)."""
    from skillbank.index_outage import text_without_credentials

    lines = [line.strip() for line in text_without_credentials(stderr).splitlines()
             if line.strip() and not line.lstrip().startswith("hint:")]
    return "; ".join(lines[:limit]) or "no message"


class Git:
    """git in one folder (`cwd`), with a fixed, prompt-free environment."""

    def __init__(self, cwd: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> None:
        if not available():
            raise GitError("git is not installed (team mode keeps skills in a git repository): "
                           "install it, e.g. `apt-get install -y git`")
        self.cwd = Path(cwd)
        # GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE … (set when skillbank runs inside a git hook)
        # would point git elsewhere: dropped. How to reach the remote is the operator's: kept.
        base = {k: v for k, v in os.environ.items()
                if not k.startswith("GIT_") or k in PASS_THROUGH}
        base.update({"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "LANG": "C",
                     "GIT_ASKPASS": "", "SSH_ASKPASS": "", "GIT_EDITOR": "true",
                     "GIT_MERGE_AUTOEDIT": "no"})
        base.update(env or {})
        self.env = base

    def run(self, *args: str, env: Mapping[str, str] | None = None, check: bool = True,
            timeout: float = LOCAL_TIMEOUT, input: str | None = None) -> subprocess.CompletedProcess[str]:
        """Run `git <args>`; with `check`, a non-zero exit is a GitError naming the command."""
        command = ["git", *args]
        try:
            # Never the caller's stdin (under `skillbank serve` the MCP stream): a hook or
            # helper that reads it gets nothing.
            done = subprocess.run(command, cwd=self.cwd, env={**self.env, **(env or {})},
                                  capture_output=True, text=True, timeout=timeout, input=input,
                                  **({} if input is not None else {"stdin": subprocess.DEVNULL}))
        except subprocess.TimeoutExpired:
            raise GitError(f"`git {' '.join(args[:3])}` in {self.cwd} took longer than "
                           f"{timeout:.0f} s (is the remote reachable?)") from None
        except OSError as exc:
            raise GitError(f"could not run git in {self.cwd}: {exc}") from None
        if check and done.returncode != 0:
            raise GitError(f"`git {' '.join(args[:3])}` failed in {self.cwd}: "
                           f"{reason(done.stderr or done.stdout)}",
                           stderr=done.stderr, returncode=done.returncode)
        return done

    def out(self, *args: str, **kwargs: object) -> str:
        return self.run(*args, **kwargs).stdout.strip()  # type: ignore[arg-type]

    # Questions ----------------------------------------------------------------------------------
    def is_work_tree(self) -> bool:
        """Whether `cwd` is the top of a git working tree (not merely inside another one)."""
        done = self.run("rev-parse", "--show-toplevel", check=False)
        if done.returncode != 0:
            return False
        return Path(done.stdout.strip()).resolve() == self.cwd.resolve()

    def commit_of(self, ref: str) -> str | None:
        """The commit `ref` names, or None when it names none."""
        done = self.run("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
        sha = done.stdout.strip()
        return sha if done.returncode == 0 and _SHA.match(sha) else None

    def is_ancestor(self, older: str, newer: str) -> bool:
        return self.run("merge-base", "--is-ancestor", older, newer, check=False).returncode == 0

    def remote_url(self, name: str = "origin") -> str | None:
        done = self.run("remote", "get-url", name, check=False)
        return done.stdout.strip() if done.returncode == 0 else None

    def unmerged(self) -> list[str]:
        """Paths with merge conflicts in the index."""
        return sorted(set(self.out("diff", "--name-only", "--diff-filter=U").splitlines()))

    def changes(self) -> list[str]:
        """Changed, staged and untracked paths (`git status --porcelain`), ignored ones left out."""
        text = self.run("status", "--porcelain", "--untracked-files=all").stdout
        return [line[3:] for line in text.splitlines() if line.strip()]

    def current_branch(self) -> str | None:
        done = self.run("symbolic-ref", "--quiet", "--short", "HEAD", check=False)
        return done.stdout.strip() if done.returncode == 0 else None

    def merge_tree(self, ours: str, theirs: str) -> tuple[str | None, list[str]]:
        """Merge `theirs` into `ours` in memory: (the merged tree, []) or (None, conflicting
        files).

        `git merge-tree --write-tree` (git 2.38+) touches no working tree or index, so asking
        costs nothing a failed answer has to undo, and a clean answer is a tree to commit."""
        done = self.run("merge-tree", "--write-tree", "--name-only", "--no-messages",
                        ours, theirs, check=False)
        lines = done.stdout.splitlines()
        if done.returncode == 0 and lines and _SHA.match(lines[0].strip()):
            return lines[0].strip(), []
        if done.returncode == 1:
            return None, sorted({line.strip() for line in lines[1:] if line.strip()}) \
                or ["(unknown)"]
        raise GitError(f"could not test-merge {theirs} into {ours}: {reason(done.stderr)}",
                       stderr=done.stderr, returncode=done.returncode)

    def conflicts(self, ours: str, theirs: str) -> list[str] | None:
        """Files that conflict when `theirs` is merged into `ours` (None: it merges cleanly)."""
        tree, conflicting = self.merge_tree(ours, theirs)
        return None if tree is not None else conflicting

    def valid_branch(self, name: str) -> bool:
        return self.run("check-ref-format", "--branch", name, check=False).returncode == 0


def identity_env(author: tuple[str, str], committer: tuple[str, str]) -> dict[str, str]:
    """The environment that makes a commit authored by `author` and committed by `committer`
    (name, email) without touching any git config."""
    return {"GIT_AUTHOR_NAME": author[0], "GIT_AUTHOR_EMAIL": author[1],
            "GIT_COMMITTER_NAME": committer[0], "GIT_COMMITTER_EMAIL": committer[1]}


def run_once(args: Sequence[str], cwd: str | os.PathLike[str]) -> str:
    """One git command in `cwd` (for tests and set-up scripts)."""
    return Git(cwd).out(*args)
