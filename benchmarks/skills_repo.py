"""Skills in git (issue 24 item 4): what a proposal costs, and how soon a merge is served.

Same run, same machine, a local bare repository as the remote:
- save through the embedded default (a direct write into <root>/skills): the baseline;
- save with `skills_repo` set (a commit on a proposal branch, pushed), at a library of N skills;
- from a reviewer's push to main until two workers both serve the merged skill, with a follow
  interval of F seconds (the bound is F plus one fetch and one sync).

    .venv/bin/python benchmarks/skills_repo.py [--skills 2000] [--follow 1.0] [--rounds 8]

The machine load is printed with the figures (`os.getloadavg`): on a shared machine they are
upper bounds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from skillbank import Skillbank
from skillbank import scope as scopes
from skillbank.embeddings import HashEmbedding

ADA = scopes.Scope(principal="ada@example.org", namespace="ada", role="contributor")


def git(cwd: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="Rev", GIT_AUTHOR_EMAIL="rev@example.org",
               GIT_COMMITTER_NAME="Rev", GIT_COMMITTER_EMAIL="rev@example.org")
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def skill_text(name: str, n: int) -> str:
    return (f"---\nname: {name}\ndescription: Skill number {n} does one thing well.\n---\n\n"
            f"# {name}\n\n" + "Step.\n" * 200)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--skills", type=int, default=2000)
    parser.add_argument("--follow", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="skills-repo-bench-"))
    git(tmp, "init", "--quiet", "--bare", "--initial-branch=main", "skills.git")
    git(tmp, "clone", "--quiet", "skills.git", "reviewer")
    reviewer = tmp / "reviewer"
    for n in range(args.skills):
        (reviewer / f"s-{n}").mkdir()
        (reviewer / f"s-{n}" / "SKILL.md").write_text(skill_text(f"s-{n}", n))
    git(reviewer, "add", ".")
    git(reviewer, "commit", "--quiet", "-m", "library")
    git(reviewer, "push", "--quiet", "origin", "HEAD:main")
    print(f"load before: {os.getloadavg()[0]:.1f}")

    embedded = Skillbank.open(tmp / "embedded", embedding_function=HashEmbedding(), share=False)
    workers = [Skillbank.open(tmp / f"worker-{i}", embedding_function=HashEmbedding(),
                              share=False, skills_repo=str(tmp / "skills.git"),
                              skills_follow_seconds=args.follow) for i in range(2)]
    direct, proposed, served = [], [], []
    try:
        for n in range(args.rounds):
            started = time.perf_counter()
            embedded.skills.save(f"new-{n}", f"Do task number {n} carefully.", "Steps.\n")
            direct.append(time.perf_counter() - started)
            started = time.perf_counter()
            with scopes.using(ADA):
                branch = workers[0].skills.save(f"new-{n}", f"Do task number {n} carefully.",
                                                "Steps.\n").proposal.branch
            proposed.append(time.perf_counter() - started)
            git(reviewer, "fetch", "--quiet", "origin")
            git(reviewer, "merge", "--quiet", "--no-ff", "-m", "merge", f"origin/{branch}")
            git(reviewer, "push", "--quiet", "origin", "HEAD:main")
            started = time.perf_counter()
            while not all(f"new-{n}" in w.skills.names() for w in workers):
                time.sleep(0.01)
            served.append(time.perf_counter() - started)
    finally:
        for bank in (embedded, *workers):
            bank.close()
    ms = lambda xs: f"median {statistics.median(xs) * 1000:.0f} ms, max {max(xs) * 1000:.0f} ms"
    print(f"library of {args.skills} skills, {args.rounds} rounds, load after: "
          f"{os.getloadavg()[0]:.1f}")
    print(f"embedded save (baseline):      {ms(direct)}")
    print(f"proposal (commit + push):      {ms(proposed)}  "
          f"({statistics.median(proposed) / statistics.median(direct):.1f}x the baseline)")
    print(f"merge -> served on 2 workers:  {ms(served)}  (follow interval {args.follow:.1f} s)")


if __name__ == "__main__":
    main()
