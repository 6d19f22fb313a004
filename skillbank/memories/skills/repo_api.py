"""The skill library's side of skills in git (team mode): proposals instead of writes.

When the bank's settings name a `skills_repo`, the bank attaches a
`skillbank.team.skills_repo.SkillsRepo` as `library.skills_repo`; the library's own folder is
then that repository's served checkout. Authoring (`save`, `create`, `update`) and adopting a
draft then hand their finished, validated SKILL.md to `_propose` instead of writing it: it
becomes a commit on the caller's proposal branch, and the `Skill` returned carries a
`SkillProposal` (branch, commit, author) — nothing is served until a reviewer merges it.
Renames, deletes and version restores change the served branch itself, so in git mode they
are refused with the way to do them (a commit a reviewer merges).

Without a `skills_repo` (the embedded default) `skills_repo` is None, every method here is a
no-op or a clear error, and nothing of `skillbank.team` is imported.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Callable

from skillbank.audit import note
from skillbank.errors import InvalidInputError, ReadOnlyError
from skillbank.memories.skills.draft_files import copy_served
from skillbank.memories.skills.folder_files import SKILL_FILE
from skillbank.records import Skill, SkillProposal


#: Beside a served skills checkout: the lock a team worker serving it from git keeps
#: (`skillbank.team.skills_repo.LOCK_FILE`; not imported: this module stays clear of team code).
SERVED_MARK = ".skills-repo.lock"


def _regular_files_but(skip: str) -> Callable[[str, list[str]], set[str]]:
    """copytree's ignore for a commit: only regular files and folders, never `skip`. A link in
    a draft folder would otherwise be followed and whatever it points at committed."""
    def ignore(folder: str, names: list[str]) -> set[str]:
        out = {skip}
        for entry in names:
            path = Path(folder) / entry
            if path.is_symlink() or not (path.is_file() or path.is_dir()):
                out.add(entry)
        return out
    return ignore


class SkillsInGit:
    """Mixin of `SkillLibrary`: git-mode writes, following and publishing."""

    #: The served skills repository (`skillbank.team.skills_repo.SkillsRepo`), or None.
    skills_repo: Any = None
    writable_root: Path
    # Provided by SkillLibrary / SkillAuthoring (not defined here: this mixin comes last).
    _write: Callable[..., Path]
    load: Callable[..., Skill]

    # Writes -------------------------------------------------------------------------------------
    def _propose(self, folder: Path, doc: Any, resources: Any, action: str) -> Skill:
        """Commit `doc` (and `resources`) at `folder`'s place in the repository onto the
        caller's proposal branch; the served checkout is not touched."""
        rel = self.skills_repo.relative(folder)

        def write(tree: Path, base: Any) -> None:
            self._write(tree / rel, doc, resources, root=tree)

        return self._proposed(doc, rel, self.skills_repo.propose(doc.name, rel, write,
                                                                  action=action))

    def _propose_draft(self, draft_folder: Path, doc: Any, skip: str,
                       check: Callable[[str | None, Any], None],
                       revised_folder: Path | None = None, text: str | None = None) -> Skill:
        """Commit an adopted draft's folder (SKILL.md and its files, not `skip`) as the skill;
        `text`: the SKILL.md to commit instead of the draft's (naming its author, as an
        embedded adopt writes it: hunt-scope #3, session 28).

        `check(held, base)` is shown the SKILL.md text the proposal's base holds for the skill
        (None: none) and what that base is, before anything is written, and raises to refuse:
        the draft was copied over whatever the base held, undoing a pushed edit or another
        root's adopted revision (hunt-git #1 and #2, session 27). A revision of a read-only
        skill (`revised_folder`, not in the repository) first commits that skill's files as
        found (its text, scripts/, references/, assets/), as the embedded adopt stages them:
        the proposal held SKILL.md alone, so once merged the served skill had lost the
        scripts its text says to run (hunt-git #0, session 27)."""
        name = doc.name
        rel = self.skills_repo.relative(self.writable_root / name)

        def as_found(tree: Path, base: Any) -> None:
            destination = tree / rel
            if destination.is_symlink():
                raise InvalidInputError(f"skill folder {name!r} is a link in the repository; "
                                        "it is never written through")
            held = destination / SKILL_FILE
            check(held.read_text(encoding="utf-8", errors="replace")
                  if held.is_file() and not held.is_symlink() else None, base)
            if revised_folder is not None and not destination.exists():
                destination.mkdir(parents=True)
                copy_served(revised_folder, destination)
                shutil.copyfile(revised_folder / SKILL_FILE, destination / SKILL_FILE)

        def write(tree: Path, base: Any) -> None:
            shutil.copytree(draft_folder, tree / rel, dirs_exist_ok=True,
                            ignore=_regular_files_but(skip))
            if text is not None:
                (tree / rel / SKILL_FILE).write_text(text, encoding="utf-8")

        # `as_found` commits nothing unless it copied a read-only skill: only then is it titled.
        # Named by the skill only: a local path (a home folder) was pushed to the team's remote
        # in the message (review #4, session 27).
        found = f"Copy skill {name} as found in its read-only root, to revise it" \
            if revised_folder is not None else f"Check skill {name}"
        return self._proposed(doc, rel, self.skills_repo.propose(
            name, rel, write, action="Adopt draft as", first=(found, as_found)))

    def _proposed(self, doc: Any, rel: str, proposal: Any) -> Skill:
        note(self, "propose", "skill", f"skill:{doc.name}")
        record = SkillProposal(branch=proposal.branch, commit=proposal.commit,
                               author=proposal.author, email=proposal.email,
                               remote=proposal.remote, served_branch=proposal.served_branch,
                               published=proposal.published, changed=proposal.changed,
                               note=proposal.note)
        return Skill(name=doc.name, description=doc.description, body=doc.body,
                     path=f"{proposal.branch}:{rel}/SKILL.md", root=proposal.remote,
                     frontmatter=dict(doc.frontmatter), writable=True,
                     notes=[proposal.note], proposal=record)

    def _not_a_served_checkout(self, verb: str) -> None:
        """Refuse `verb` a skill straight into a folder that a team worker serves from git when
        this bank was opened without `skills_repo` (a worker started with `--skills-repo` on the
        root, the CLI on it without the setting): the skill was served unreviewed, and the
        checkout's local change stopped every worker following the branch. The mark outlives
        the worker (filelock never deletes its file), so a root that once ran in git mode was
        refused for good with no word of it: the refusal names the mark as the way out."""
        mark = self.writable_root.parent / SERVED_MARK
        if self.skills_repo is None and (self.writable_root / ".git").exists() and \
                mark.exists():
            raise ReadOnlyError(
                f"{verb} a skill here would change {self.writable_root}, the git checkout a team "
                "worker serves (unreviewed, and the workers could no longer follow its "
                "branch): set skills_repo (SKILLBANK_SKILLS_REPO, or skills_repo in the root's "
                "skillbank.toml) to the skills repository's URL, so the skill is proposed for "
                f"review instead. If no worker serves this checkout any more, delete {mark} "
                "(left by the worker that did) and the folder is yours to write")

    def _served_read_only(self, verb: str) -> None:
        """In git mode, `verb` (rename, delete, restore) would change the served branch
        directly: refused, naming the way (a commit a reviewer merges)."""
        self._not_a_served_checkout(verb)
        if self.skills_repo is not None:
            raise ReadOnlyError(
                f"{verb} a skill is done in the skills repository in git mode: commit it on a "
                f"branch of {self.skills_repo.shown} and have a reviewer merge it into "
                f"{self.skills_repo.branch} (the served checkout changes only by following it)")

    # Following and publishing -------------------------------------------------------------------
    def _repo(self, what: str) -> Any:
        if self.skills_repo is None:
            raise InvalidInputError(f"{what} needs skills in git: set skills_repo "
                                    "(SKILLBANK_SKILLS_REPO) to the skills repository's URL")
        return self.skills_repo

    def follow(self) -> dict[str, Any]:
        """Fetch the served branch now and serve its newest commit (then sync)."""
        return self._repo("following a branch").follow()

    def publish(self, name: str, principal: str | None = None) -> Skill:
        """Merge a proposal branch into the served branch and serve it (a trusted reviewer, and
        only where `skills_direct_publish` is on); `principal`: whose proposal (default: own)."""
        repo = self._repo("publishing a skill")
        proposal = repo.publish(name, principal)
        note(self, "accept", "skill", f"skill:{name}")
        skill = self.load(name)
        return skill.model_copy(update={"proposal": SkillProposal(
            branch=proposal.branch, commit=proposal.commit, author=proposal.author,
            email=proposal.email, remote=proposal.remote,
            served_branch=proposal.served_branch, published=True, note=proposal.note)})

    def proposals(self) -> list[dict[str, str]]:
        """Open proposal branches (a reviewer sees everyone's, others their own)."""
        return self._repo("listing proposals").proposals()

    def repo_status(self) -> dict[str, Any] | None:
        """The served branch and commit (None without skills in git)."""
        return self.skills_repo.status() if self.skills_repo is not None else None

    def stop_following(self) -> None:
        if self.skills_repo is not None:
            self.skills_repo.stop()
