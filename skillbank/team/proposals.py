"""What a proposal is built on and what it did (`skills_repo.SkillsRepo.propose`, `publish`).

Split out of `skills_repo` when the base a proposal is built on began to be told to the code
writing it (hunt-git #1, session 27): that module stays under the layout's line limit.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Proposal:
    """What a proposal (or a publish) did: the branch and commit, for the caller to pass on."""

    skill: str
    branch: str
    commit: str
    author: str
    email: str
    remote: str
    served_branch: str
    published: bool = False
    changed: bool = True
    proposed: bool = True  # False: nothing to propose (the served branch holds exactly this)

    @property
    def note(self) -> str:
        if not self.proposed:
            return (f"no change: {self.served_branch} at {self.commit[:12]} already holds "
                    f"exactly this skill; nothing was proposed")
        if self.published:
            return (f"published: {self.served_branch} is now at {self.commit[:12]} "
                    f"(merged from {self.branch})")
        what = "proposed" if self.changed else "already proposed (no change)"
        return (f"{what} on branch {self.branch} at commit {self.commit[:12]}, pushed to "
                f"{self.remote}; not served until a reviewer merges it into "
                f"{self.served_branch}")


@dataclass(frozen=True)
class ProposalBase:
    """What a proposal's commit is built on: the served branch's newest commit, or the caller's
    open proposal branch (`proposal`), which the commit continues."""

    commit: str
    branch: str
    remote: str
    served_branch: str

    @property
    def proposal(self) -> bool:
        return self.branch != self.served_branch

    def __str__(self) -> str:
        where = (f"the open proposal branch {self.branch}" if self.proposal
                 else f"{self.branch} of {self.remote}")
        return f"{where} (commit {self.commit[:12]})"
