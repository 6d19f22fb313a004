"""Skills in a git repository: a served checkout that follows one branch, and proposals on others.

With `skills_repo` set (`SKILLBANK_SKILLS_REPO`: the URL or path of a git remote), the bank's own
skill folder `<root>/skills` is a checkout of that repository's `skills_branch` (default `main`):

- **Served at a known commit.** `status()` names the branch and the commit served (in `stats`
  and the team worker's `/readyz`). The checkout moves only by fast-forward to a commit of that
  branch (`follow`: fetch, then `merge --ff-only`), on an interval (`skills_follow_seconds`) or
  on demand; then the library's normal sync indexes what changed. A rewritten branch, a dirty
  checkout or an unmerged index stops the following, with an error naming the fix; the commit
  already served stays served.
- **Writes become proposals.** A skill saved, updated or adopted from a draft through skillbank
  becomes a commit on `skillbank/proposals/<principal>/<skill>`, authored by the caller's
  principal, pushed to the remote for a reviewer to merge. It is not served until merged into
  the served branch. The commit is built in a separate worktree under `<root>/.skills-work/`:
  the served checkout (files, index, HEAD) is never touched by a proposal, so a proposal that
  fails (no remote, a branch that no longer applies, a push refused) leaves nothing behind.
- **Publishing** (merging a proposal into the served branch through skillbank) is for a trusted
  reviewer or admin, and only where the deployment allows it (`skills_direct_publish`, off by
  default); an untrusted caller can propose, never publish.

Why a worktree and not writes into the checkout plus `git stash`: the checkout is what every
search and load reads at that moment, and a failure halfway through must not change what is
served. Why a remote is required: a proposal is for a person to review and merge elsewhere
(a forge, or `git merge` in their own clone); a checkout without one has nowhere to send it.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import tempfile
import threading
from contextlib import contextmanager, nullcontext
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, ContextManager, Iterator

from skillbank import scope as scopes
from skillbank.errors import NotFoundError, PermissionDeniedError, SkillbankError
from skillbank.index_outage import holds_password, without_credentials
from skillbank.team.git import (MIN_VERSION, NETWORK_TIMEOUT, Git, GitError, identity_env,
                                reason, version)
from skillbank.team.proposals import Proposal, ProposalBase

log = logging.getLogger("skillbank.skills_repo")

PROPOSALS = "skillbank/proposals"
WORK_DIR = ".skills-work"
LOCK_FILE = ".skills-repo.lock"  # also marks a served checkout: repo_api.SERVED_MARK
COMMITTER = ("skillbank", "skillbank@skillbank.invalid")
SETTING = "skills_repo (SKILLBANK_SKILLS_REPO)"
_EMAIL = re.compile(r"^[^@\s<>]+@[^@\s<>]+\.[^@\s<>]+$")
_NAMED = re.compile(r"^\s*(?P<name>[^<>]*?)\s*<(?P<email>[^<>\s]+@[^<>\s]+)>\s*$")


class SkillsRepoError(SkillbankError):
    """The skills repository cannot do what was asked; the message names what to fix. Nothing
    was written and the served checkout did not change."""

    exit_code = 8


def flag(value: Any) -> bool:
    """A boolean setting given as TOML true/false or an environment string ("1", "true")."""
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def identity(principal: str) -> tuple[str, str]:
    """(name, email) for commits authored by `principal`.

    "Ada <ada@example.org>" and "ada@example.org" carry their address; any other principal
    (a token's name, a JWT subject) gets `<slug>@skillbank.invalid` (RFC 2606: never a real
    mailbox), so the commit still names exactly who it was."""
    named = _NAMED.match(principal)
    if named and named.group("name"):
        return named.group("name"), named.group("email")
    if _EMAIL.match(principal):
        return principal, principal
    clean = principal.replace("<", "").replace(">", "").strip() or "unknown"
    return clean, f"{principal_slug(principal)}@skillbank.invalid"


#: The hash a slug carries (hex digits): long enough that no one finds, by trying names, one
#: whose slug is another person's.
SLUG_HASH = 12
_HASHED = re.compile(rf"-[0-9a-f]{{{SLUG_HASH}}}$")


def principal_slug(principal: str) -> str:
    """A branch-safe form of a principal; a hash of it is added whenever the slug differs from
    the principal, the principal itself ends like a hashed slug (`alice-<hash of "Alice">`
    is a name anyone can compute and sign up as), or git would refuse it as a ref component,
    so two principals never share a proposal branch and every principal can propose."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", principal.lower())
    slug = re.sub(r"\.{2,}", ".", slug).strip("-._")[:48].strip("-._") or "user"
    if slug != principal or _HASHED.search(principal) or not ref_component_ok(slug):
        slug += "-" + hashlib.sha256(principal.encode("utf-8")).hexdigest()[:SLUG_HASH]
    return slug


def ref_component_ok(part: str) -> bool:
    """Whether git accepts `part` as one component of a ref name (`git check-ref-format`),
    for the characters a slug may hold (letters, digits, `.`, `_`, `-`). A principal named
    `frank.lock` (which `skillbank tokens add` accepts) kept its name as slug, git refuses a
    component ending in `.lock`, and every proposal failed as "cannot reach the remote" (team
    hunt, session 19)."""
    return bool(part) and not part.startswith(".") and not part.endswith((".", ".lock")) \
        and ".." not in part


def proposal_branch(principal: str, skill: str) -> str:
    return f"{PROPOSALS}/{principal_slug(principal)}/{skill}"


def _same_remote(a: str, b: str) -> bool:
    def norm(url: str) -> str:
        url = url.strip().rstrip("/")
        if "://" not in url and not re.match(r"^[\w.-]+@[\w.-]+:", url):
            try:
                return str(Path(url).expanduser().resolve())
            except OSError:
                return url
        return url
    return norm(a) == norm(b)


class SkillsRepo:
    """The served checkout of one branch, and the proposals made through this bank."""

    def __init__(self, checkout: Path, url: str, branch: str = "main", *,
                 follow_seconds: float = 30.0, direct_publish: bool = False) -> None:
        # Absolute: git runs with another working folder (the clone's staging folder, a
        # proposal's worktree), so a relative `--root` made the clone fail with a raw OS error
        # and every proposal fail, leaving empty folders inside the served checkout.
        self.checkout = Path(checkout).resolve()
        #: The URL git is given; never shown. `shown` is the URL without its user and
        #: password: a deploy token in it was served by the unauthenticated /readyz, readers'
        #: stats and every proposal's note (team hunt, session 19).
        self.url = url
        self.shown = without_credentials(url)
        self.branch = branch
        self.follow_seconds = float(follow_seconds)
        self.direct_publish = direct_publish
        self.root = self.checkout.parent
        self.git = Git(self.checkout)
        self._lock = threading.RLock()
        self._file_lock: Any = None
        self.followed_at: str | None = None
        #: The commit the library last synced (set by `follow`; the bank's open syncs the first).
        self._synced: str | None = None
        self.last_error: str | None = None
        #: Why the checkout itself cannot follow the branch (local changes, an unmerged index,
        #: another branch checked out): a cause in this worker's checkout, fixed only there, so
        #: the worker is not ready. An unreachable remote is not this (the next fetch may work).
        self.stuck: str | None = None
        #: Why the branch left the served commit behind on the remote (rewritten by a
        #: force-push, or deleted). Every worker sees it at once and each still serves its
        #: last commit, so it is reported (/readyz body, /metrics, the log) but leaves the
        #: worker ready: as `stuck` it once took the whole team service out of the balancer.
        self.behind: str | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        #: Set by `attach`: runs the library's sync after the checkout moved.
        self.on_change: Callable[[], Any] | None = None
        #: Set by `attach`: held while the checkout's files change (the library's sync lock).
        self.guard: Callable[[], ContextManager[Any]] = nullcontext

    # Opening ------------------------------------------------------------------------------------
    def prepare(self) -> "SkillsRepo":
        """Clone the branch into an empty checkout, or check an existing one (SkillsRepoError
        naming the fix when it is not a clean checkout of this remote's branch)."""
        self.root.mkdir(parents=True, exist_ok=True)  # git runs in it (a root not made yet)
        found = version(Git(self.root).out("version"))
        if found < MIN_VERSION:
            raise SkillsRepoError(
                f"skills in git need git {'.'.join(map(str, MIN_VERSION))} or newer (it merges "
                f"proposals in memory); this machine has {'.'.join(map(str, found)) or '?'}: "
                "upgrade git, or unset skills_repo")
        if not Git(self.root).valid_branch(self.branch):
            raise SkillsRepoError(f"skills_branch {self.branch!r} is not a valid branch name")
        folder = self.checkout
        self.root.mkdir(parents=True, exist_ok=True)
        with self._locked():  # workers starting together on one root: one clones, one checks
            if not folder.exists() or (folder.is_dir() and not any(folder.iterdir())):
                self._clone()
            elif not folder.is_dir() or not self.git.is_work_tree():
                raise SkillsRepoError(
                    f"{folder} is not a git checkout, but {SETTING} is set to {self.shown}: "
                    "move its skills into the repository (commit them there), then remove the folder "
                    "so skillbank clones the repository into it; or unset skills_repo")
            else:
                self._check_checkout()
            self._keep_private()
            self._clear_leftovers()
        self.last_error = None
        return self

    def _keep_private(self) -> None:
        """git records the remote's URL in the checkout's `.git/config`; when that URL carries a
        password (a deploy token), the file is made the owner's only, as git's own credential
        store keeps `~/.git-credentials` (0600). git keeps the mode when it rewrites it."""
        if holds_password(self.url):
            try:
                os.chmod(self.checkout / ".git" / "config", 0o600)
            except OSError as exc:
                log.warning("skills: could not make %s private: %s",
                            self.checkout / ".git" / "config", exc)

    def _clear_leftovers(self) -> None:
        """Worktrees a process killed mid-proposal left under `<root>/.skills-work/` (never
        pushed, so never anyone's proposal): removed, and git's record of them pruned."""
        work = self.root / WORK_DIR
        if not work.is_dir():
            return
        with self._locked():  # another process's proposal in flight holds this lock
            for holder in work.iterdir():
                shutil.rmtree(holder, ignore_errors=True)
            self.git.run("worktree", "prune", check=False)

    def _clone(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".skills-clone-", dir=self.root))
        try:
            done = Git(staging).run("clone", "--quiet", "--no-tags", "--branch", self.branch,
                                    "--", self.url, str(staging / "tree"), check=False,
                                    timeout=NETWORK_TIMEOUT)
            if done.returncode != 0:
                why = reason(done.stderr)
                if "not found in upstream" in why or "Remote branch" in why:
                    raise SkillsRepoError(
                        f"the skills repository {self.shown} has no branch {self.branch!r}: "
                        f"push a first commit to it (git push <remote> HEAD:{self.branch}), or set "
                        "skills_branch (SKILLBANK_SKILLS_BRANCH) to the branch to serve")
                raise SkillsRepoError(
                    f"cannot clone the skills repository {self.shown} ({why}): check "
                    f"{SETTING}, that it names a git repository, and that this machine may read it")
            if self.checkout.exists():
                self.checkout.rmdir()  # empty (checked by the caller)
            os.replace(staging / "tree", self.checkout)  # a whole clone, or none
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        log.info("skills: cloned %s (%s) into %s", self.shown, self.branch, self.checkout)

    def _check_checkout(self) -> None:
        """The served checkout is a clean checkout of this remote's branch, or an error."""
        where = f"the skills checkout {self.checkout}"
        origin = self.git.remote_url("origin")
        if origin is None:
            raise SkillsRepoError(
                f"{where} has no remote 'origin', so proposals have nowhere to go: "
                f"git -C {self.checkout} remote add origin {self.shown}")
        if not _same_remote(origin, self.url):
            raise SkillsRepoError(
                f"{where} is a checkout of {without_credentials(origin)}, not of "
                f"{self.shown} ({SETTING}): fix the setting, or git -C {self.checkout} remote set-url origin {self.shown}")
        unmerged = self.git.unmerged()
        if unmerged:
            raise SkillsRepoError(
                f"{where} has unmerged files (a merge left conflicts): {', '.join(unmerged[:5])};"
                f" resolve them or run git -C {self.checkout} merge --abort")
        current = self.git.current_branch()
        if current != self.branch:
            raise SkillsRepoError(
                f"{where} has {current or 'a detached HEAD'} checked out, but skillbank serves "
                f"{self.branch!r} (skills_branch): git -C {self.checkout} switch {self.branch}")
        changes = self.git.changes()
        if changes:
            raise SkillsRepoError(
                f"{where} has local changes ({len(changes)}: {', '.join(changes[:5])}); it "
                "serves only commits of its branch: propose them through skillbank or commit "
                f"them elsewhere, then discard them here (git -C {self.checkout} status)")

    # Following ----------------------------------------------------------------------------------
    @contextmanager
    def _locked(self) -> Iterator[None]:
        """This repository's lock, for threads and for processes sharing the root. Taken after
        the library's sync lock where both are needed (writes hold that one first)."""
        from filelock import FileLock, Timeout

        with self._lock:
            if self._file_lock is None:
                self._file_lock = FileLock(str(self.root / LOCK_FILE), timeout=NETWORK_TIMEOUT)
            try:
                with self._file_lock:
                    yield
            except Timeout:
                raise SkillsRepoError(f"another process holds {self.root / LOCK_FILE} (a git "
                                      "operation on the skills repository); try again") from None

    def commit(self) -> str | None:
        return self.git.commit_of("HEAD")

    def status(self) -> dict[str, Any]:
        """Which branch and commit this worker serves, and how following goes."""
        return {"remote": self.shown, "branch": self.branch, "commit": self.commit(),
                "followed_at": self.followed_at, "follow_seconds": self.follow_seconds,
                "direct_publish": self.direct_publish, "error": self.last_error,
                "stuck": self.stuck, "behind": self.behind}

    def _fetch(self, branch: str, *maybe: str) -> None:
        """Fetch `branch` (which must exist) and the branches `maybe` (which may not: fetched
        by pattern, and pruned when gone, so a deleted proposal is not continued)."""
        specs = [f"+refs/heads/{branch}:refs/remotes/origin/{branch}"]
        specs += [f"+refs/heads/{r}*:refs/remotes/origin/{r}*" for r in maybe]
        try:
            self.git.run("fetch", "--quiet", "--no-tags", "--prune", "origin", *specs,
                         timeout=NETWORK_TIMEOUT)
        except GitError as exc:
            if "invalid refspec" in (exc.stderr or ""):  # our branch name, not the remote
                raise SkillsRepoError(
                    f"git refuses a branch name skillbank made ({reason(exc.stderr)}): "
                    f"{', '.join(maybe) or branch} is not a valid ref (git check-ref-format); "
                    "report this as a skillbank bug; nothing was written") from None
            raise SkillsRepoError(
                f"cannot reach the skills repository's remote origin ({self.shown}): "
                f"{reason(exc.stderr) if exc.stderr else exc}; check {SETTING} and that the "
                "remote exists and this machine may read it (nothing was written)") from None

    def follow(self) -> dict[str, Any]:
        """Fetch the served branch and fast-forward to it; the library syncs what changed.

        The checkout moves only to a commit that descends from the one served (a commit of the
        branch), and only when it is clean; otherwise SkillsRepoError names the fix and the
        commit served stays as it was."""
        try:
            with self._locked():  # the fetch: no sync lock held, writes go on meanwhile
                fetched_before = self.git.commit_of(f"refs/remotes/origin/{self.branch}")
                self._fetch(self.branch)
            # Then the library's sync lock before this one, in the order writes take them.
            with self.guard(), self._locked():
                before, tip = self._fast_forward(fetched_before)
        except SkillbankError as exc:
            self.last_error = str(exc)
            raise
        changed = tip != before
        if changed:
            log.info("skills: %s moved %s -> %s", self.branch, (before or "none")[:12], tip[:12])
        # Synced by the commit this library last indexed, not by who moved the checkout: a
        # worker sharing the root may have fast-forwarded it already.
        if tip != self._synced:
            if self.on_change is not None:
                self.on_change()
            self._synced = tip
        return {"branch": self.branch, "commit": tip, "previous": before, "changed": changed}

    def _fast_forward(self, fetched_before: str | None = None) -> tuple[str | None, str]:
        """Move the checkout to the fetched branch's tip: (the commit before, the tip). A
        checkout that cannot move there is `stuck` (a local cause) or `behind` (the branch
        was rewritten or deleted on the remote) until someone fixes it. `fetched_before`: the
        branch's tip as last fetched, before this fetch."""
        before = self.commit()
        local = self._local_commits(before, fetched_before)
        if local:
            self.stuck = local  # served unreviewed: this worker is not ready until it is fixed
            raise SkillsRepoError(local)
        try:
            tip = self._remote_tip(before)
        except SkillsRepoError as exc:
            self.behind = str(exc)
            self.stuck = self._local_fault()  # still judged: only a local cause is unready
            raise
        try:
            if tip != before:
                self._check_checkout()
                self.git.run("merge", "--ff-only", "--quiet", tip)
                if self.commit() != tip:
                    raise SkillsRepoError(f"the skills checkout did not reach {tip[:12]}")
        except SkillbankError as exc:
            self.stuck = str(exc)
            raise
        self.followed_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
        self.last_error = self.stuck = self.behind = None
        return before, tip

    def _local_commits(self, before: str | None, fetched_before: str | None) -> str | None:
        """Commits made in the served checkout itself (on top of what the branch had), named,
        or None. An operator's quick fix committed there was served unreviewed, then blamed on
        a "rewritten" main when the branch moved on (hunt, session 17)."""
        tip = self.git.commit_of(f"refs/remotes/origin/{self.branch}")
        base = next((c for c in (fetched_before, tip) if c and c != before
                     and self.git.is_ancestor(c, before or "HEAD")
                     and (tip is None or self.git.is_ancestor(c, tip))), None)
        if before is None or base is None:
            return None
        listed = self.git.run("log", "--format=%h %s", "-5", f"{base}..{before}").stdout.split("\n")
        return (f"the served skills checkout {self.checkout} has commits made in it, not on "
                f"{self.branch} of {self.shown} (served unreviewed): "
                + "; ".join(line for line in listed if line)
                + f". Push them for review (git -C {self.checkout} push origin "
                f"HEAD:skillbank/proposals/<you>/<skill>), then git -C {self.checkout} reset "
                f"--hard origin/{self.branch}")

    def _local_fault(self) -> str | None:
        """What in this checkout would stop it following (None: nothing)."""
        try:
            self._check_checkout()
        except SkillbankError as exc:
            return str(exc)
        return None

    def _remote_tip(self, before: str | None) -> str:
        """The fetched branch's tip, or SkillsRepoError when the branch no longer holds the
        served commit (deleted, or rewritten so that `before` is not an ancestor of its tip)."""
        tip = self.git.commit_of(f"refs/remotes/origin/{self.branch}")
        if tip is None:
            raise SkillsRepoError(f"the skills repository {self.shown} has no branch "
                                  f"{self.branch!r} any more; it keeps serving "
                                  f"{(before or '?')[:12]}")
        if tip != before and before is not None and not self.git.is_ancestor(before, tip):
            raise SkillsRepoError(
                f"{self.branch} on {self.shown} was rewritten: the served commit "
                f"{before[:12]} is not an ancestor of {tip[:12]}; it keeps serving "
                f"{before[:12]}. If the rewrite is meant, re-clone the checkout "
                f"(remove {self.checkout} and reopen)")
        return tip

    def start_following(self) -> None:
        """Follow the branch every `follow_seconds` in a daemon thread (0 or less: only on
        demand). A failure is logged once per distinct message and kept in `status()`."""
        if self.follow_seconds <= 0 or self._thread is not None:
            return
        self._stop.clear()

        def loop() -> None:
            said = None
            while not self._stop.wait(self.follow_seconds):
                try:
                    self.follow()
                    said = None
                except Exception as exc:  # noqa: BLE001 - kept in status(), logged once
                    if str(exc) != said:
                        log.warning("skills: following %s failed: %s", self.branch, exc)
                        said = str(exc)

        self._thread = threading.Thread(target=loop, daemon=True, name="skillbank-skills-follow")
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=NETWORK_TIMEOUT)

    # Proposals ----------------------------------------------------------------------------------
    @contextmanager
    def _worktree(self, base: str, folder: str) -> Iterator[Path]:
        """A detached worktree at `base`, beside (never inside) the served checkout, with only
        `folder` on disk: the index holds every file of `base` (so a commit keeps them), but
        checking out a whole library of skills for each proposal cost seconds."""
        work = self.root / WORK_DIR
        work.mkdir(parents=True, exist_ok=True)
        holder = Path(tempfile.mkdtemp(prefix="proposal-", dir=work))
        tree = holder / "tree"
        try:
            self.git.run("worktree", "add", "--quiet", "--no-checkout", "--detach", str(tree),
                         base)
            wt = Git(tree)
            wt.run("read-tree", base)
            if wt.out("ls-tree", "--name-only", base, "--", folder):
                wt.run("checkout", base, "--", folder)
            yield tree
        finally:
            self.git.run("worktree", "remove", "--force", str(tree), check=False)
            shutil.rmtree(holder, ignore_errors=True)
            self.git.run("worktree", "prune", check=False)

    def relative(self, folder: Path) -> str:
        """A served skill folder as a path inside the repository."""
        folder = Path(folder)  # its folder resolved as the checkout is (it may not exist yet)
        try:
            return (folder.parent.resolve() / folder.name).relative_to(self.checkout).as_posix()
        except ValueError:
            raise SkillsRepoError(f"{folder} is not inside the skills checkout "
                                  f"{self.checkout}") from None

    def propose(self, skill: str, folder: str, write: Callable[[Path, ProposalBase], None], *,
                action: str, first: tuple[str, Callable[[Path, ProposalBase], None]] | None = None
                ) -> Proposal:
        """Commit what `write(worktree, base)` writes under `folder` onto the caller's proposal
        branch for `skill`, authored by the caller's principal, and push it. `base` says what
        the commit is built on; `write` may refuse (raise) having seen what it holds there.
        `first` (title, write): a commit made before that one, when it changes anything (an
        adopted revision of a read-only skill commits that skill as found, hunt-git #0).

        The branch starts from the served branch's newest commit, or continues a proposal not
        yet merged (then it must still merge cleanly into the served branch). Nothing changes
        anywhere unless the push succeeds."""
        scope = scopes.caller("default")
        scope.require(scopes.Role.CONTRIBUTOR, "proposing a skill")
        author = identity(scope.principal)
        branch = proposal_branch(scope.principal, skill)
        with self._locked():
            self._fetch(self.branch, branch)
            served = self._served_tip()
            tip = self.git.commit_of(f"refs/remotes/origin/{branch}")
            base = served
            if tip is not None and not self.git.is_ancestor(tip, served):
                conflicts = self.git.conflicts(served, tip)
                if conflicts is not None:
                    raise SkillsRepoError(
                        f"the proposal branch {branch} no longer applies to {self.branch} "
                        f"(conflicts in {', '.join(conflicts[:5])}): merge {self.branch} into it "
                        f"and resolve them, or delete it (git push origin --delete {branch}); "
                        "nothing was written")
                base = tip
            on = ProposalBase(base, branch if base != served else self.branch, self.shown,
                              self.branch)
            with self._worktree(base, folder) as tree:
                commit = base
                for title, step in [*([first] if first else []),
                                    (f"{action} skill {skill}", write)]:
                    step(tree, on)
                    commit = self._commit(tree, folder, commit, title, author)
                if commit == base:
                    return Proposal(skill, branch, base, *author, self.shown, self.branch,
                                    changed=False, proposed=base != served)
                self._push(commit, branch, f"the proposal branch {branch}")
        return Proposal(skill, branch, commit, *author, self.shown, self.branch)

    def _commit(self, tree: Path, folder: str, parent: str, title: str,
                author: tuple[str, str]) -> str:
        """Commit what the worktree `tree` holds under `folder`; `parent` when nothing changed."""
        scope = scopes.caller("default")
        wt = Git(tree)
        if not (tree / folder).exists() and not wt.out("ls-files", "--", folder):
            return parent  # nothing there, before or now (git add refuses such a path)
        wt.run("add", "--all", "--", folder)
        if wt.run("diff", "--cached", "--quiet", check=False).returncode == 0:
            return parent
        message = (f"{title}\n\nProposed through skillbank by {scope.principal} ({scope.face}, "
                   f"{scope.role.value}{'' if scope.trusted else ', untrusted'}).\n")
        wt.run("commit", "--quiet", "--no-verify", "-m", message,
               env=identity_env(author, COMMITTER))
        commit = wt.commit_of("HEAD")
        assert commit is not None
        return commit

    def _served_tip(self) -> str:
        served = self.git.commit_of(f"refs/remotes/origin/{self.branch}")
        if served is None:
            raise SkillsRepoError(f"the skills repository {self.shown} has no branch "
                                  f"{self.branch!r}; nothing was written")
        return served

    def _push(self, commit: str, branch: str, what: str) -> None:
        try:
            self.git.run("push", "--quiet", "--no-verify", "origin",
                         f"{commit}:refs/heads/{branch}", timeout=NETWORK_TIMEOUT)
        except GitError as exc:
            why = reason(exc.stderr) if exc.stderr else str(exc)
            moved = "fetch first" in why or "non-fast-forward" in why
            raise SkillsRepoError(
                f"could not push {what} to {self.shown} ({why}): "
                + ("it moved meanwhile; try again" if moved else
                   f"check {SETTING} and that this machine may push there")
                + "; nothing was written") from None
        self.git.run("update-ref", f"refs/remotes/origin/{branch}", commit, check=False)

    def proposals(self) -> list[dict[str, str]]:
        """Open proposal branches on the remote (a reviewer sees all, others their own)."""
        scope = scopes.caller("default")
        pattern = f"refs/heads/{PROPOSALS}/"
        if not (scope.trusted and scope.role.allows(scopes.Role.REVIEWER)):
            pattern += principal_slug(scope.principal) + "/"
        try:
            text = self.git.out("ls-remote", "origin", pattern + "*", timeout=NETWORK_TIMEOUT)
        except GitError as exc:
            raise SkillsRepoError(f"cannot list proposals on {self.shown}: {exc}") from None
        out = []
        for line in text.splitlines():
            commit, _, ref = line.partition("\t")
            branch = ref.removeprefix("refs/heads/")
            out.append({"branch": branch, "skill": branch.rsplit("/", 1)[-1], "commit": commit})
        return out

    def proposal_gone(self, branch: str, folder: str) -> bool:
        """Whether the proposal `branch` left the remote unmerged: no such branch, and the
        served branch's newest commit holds no `folder`. False whenever the remote cannot be
        read: a proposal is taken as open until it is seen gone (hunt-git #4, session 27)."""
        with self._locked():
            try:
                self._fetch(self.branch, branch)
            except SkillsRepoError:
                return False
            if self.git.commit_of(f"refs/remotes/origin/{branch}") is not None:
                return False
            return not self.git.out("ls-tree", "--name-only",
                                    f"refs/remotes/origin/{self.branch}", "--", folder)

    # Publishing ---------------------------------------------------------------------------------
    def publish(self, skill: str, principal: str | None = None) -> Proposal:
        """Merge a proposal branch into the served branch and serve it here at once.

        For a trusted reviewer or admin, and only with `skills_direct_publish` on; an untrusted
        caller is refused whatever the setting. `principal`: whose proposal (default: the
        caller's own)."""
        scope = scopes.caller("default")
        if not scope.trusted:
            raise PermissionDeniedError(
                f"{scope.principal} is untrusted: it can propose skills, never publish them; "
                f"a reviewer merges its proposal branch into {self.branch}")
        scope.require(scopes.Role.REVIEWER, "publishing a skill")
        if not self.direct_publish:
            raise PermissionDeniedError(
                f"publishing through skillbank is off in this deployment: merge the proposal "
                f"branch into {self.branch} in the repository ({self.shown}), or set "
                "skills_direct_publish = true (SKILLBANK_SKILLS_DIRECT_PUBLISH)")
        whose = principal or scope.principal
        branch = proposal_branch(whose, skill)
        name, email = identity(scope.principal)
        with self._locked():
            self._fetch(self.branch, branch)
            served = self._served_tip()
            tip = self.git.commit_of(f"refs/remotes/origin/{branch}")
            if tip is None:
                raise NotFoundError(f"no proposal branch {branch} on {self.shown}")
            if self.git.is_ancestor(tip, served):
                merged = served  # merged already
            else:
                # The merge is made in memory and committed from its tree: no worktree, and
                # nothing to undo when it conflicts.
                tree, conflicts = self.git.merge_tree(served, tip)
                if tree is None:
                    raise SkillsRepoError(
                        f"the proposal branch {branch} no longer applies to {self.branch} "
                        f"(conflicts in {', '.join(conflicts[:5])}): merge {self.branch} into "
                        "it and resolve them first; nothing was written")
                merged = self.git.out(
                    "commit-tree", str(tree), "-p", served, "-p", tip, "-m",
                    f"Publish skill {skill} (proposed by {whose})\n\nPublished through "
                    f"skillbank by {scope.principal}.\n",
                    env=identity_env((name, email), (name, email)))
                self._push(merged, self.branch, self.branch)
        self.follow()
        return Proposal(skill, branch, merged, name, email, self.shown, self.branch,
                        published=True)


def served(bank: Any) -> dict[str, Any] | None:
    """For a worker's /readyz: the branch and commit served, read without opening or syncing
    the skill library (a probe must not wait on Chroma); None without skills in git."""
    library = getattr(bank, "_memories", {}).get("skills")
    repo = getattr(library, "skills_repo", None)
    return repo.status() if repo is not None else None


def open_repo(checkout: Path, settings: Any) -> SkillsRepo:
    """The skills repository a bank's settings name, prepared (cloned or checked)."""
    return SkillsRepo(checkout, str(settings.skills_repo), settings.skills_branch or "main",
                      follow_seconds=float(settings.skills_follow_seconds),
                      direct_publish=flag(settings.skills_direct_publish)).prepare()


def attach(library: Any, settings: Any) -> SkillsRepo:
    """Serve `library`'s own folder from the skills repository: clone or check it, sync after
    each move of the branch, and follow it on the configured interval."""
    repo = open_repo(Path(library.writable_root), settings)
    repo.guard = lambda: library._sync_lock
    try:
        repo.follow()  # start at the branch's newest commit (the bank syncs after opening)
    except SkillbankError as exc:
        log.warning("skills: serving %s at %s: %s", repo.branch, (repo.commit() or "?")[:12], exc)
    repo.on_change = library.sync
    library.skills_repo = repo
    repo.start_following()
    return repo
