"""The skill tools of the MCP face: find, load, read a file, save.

Thin: each validates its arguments (the schema does), awaits the skills stage of the bank and
calls one `bank.skills` method on a worker thread. No `from __future__ import annotations`:
the SDK reads these annotations when the tools are registered.
"""

from typing import Annotated, Any, Optional

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from skillbank.mcp_server import models as m
from skillbank.mcp_server import resources as res
from skillbank.mcp_server.annotations import Registrar
from skillbank.mcp_server.modes import keyword_reason, mode_of, note_mode
from skillbank.memories.skills.skill_file import MAX_SERVED_NAME
from skillbank.tool_text import skill_search_note

Task = Annotated[str, Field(min_length=1, max_length=20_000,
                            description="the task in plain words, as the user would state it")]
K = Annotated[int, Field(ge=1, le=50, strict=True, description="how many results at most (1-50)"), m.WHOLE]
AvailableTools = Annotated[Optional[list[Annotated[str, Field(min_length=1, max_length=200)]]], Field(
    max_length=2000, description="your tool names, if you know them: skills that need tools you "
    "lack (their allowed-tools / requires) are left out and named in missing_tools")]
# Any name find_skills can return (not the spec's 64 for a new name: see MAX_SERVED_NAME).
SkillName = Annotated[str, Field(min_length=1, max_length=MAX_SERVED_NAME,
                                 description="skill name as returned by find_skills, e.g. 'write-a-skill'")]

UNTRUSTED_SKILL = ("this server does not accept skills from untrusted clients (a skill steers every "
                   "later task that routes to it); ask the user to save it with `skillbank skills "
                   "new`, or to restart the server with --trust")


def served_note(bank: Any) -> str:
    """What the root's owner (another process) does not serve of what this server asked for:
    its own skill folders, say, when two projects' servers share one root. Without it on the
    results, a model only saw its project's skills missing."""
    return str(getattr(bank, "note", None) or "")


def register(tool: Registrar, server: Any, *, trusted: bool) -> None:
    """Add the skill tools to `server` through `tool` (see annotations.Registrar)."""

    @tool("read")
    async def find_skills(task: Task, k: K = 5,
                          available_tools: AvailableTools = None) -> m.SkillSearch:
        def search(b: Any) -> tuple[list[Any], str, str]:
            from skillbank.errors import NotFoundError

            try:
                hits = b.skills.search(task, k=k, available_tools=available_tools)
            except NotFoundError:  # a skill was removed by a re-sync mid-search: ask again
                hits = b.skills.search(task, k=k, available_tools=available_tools)
            mode = mode_of(hits)
            return hits, mode, served_note(b), keyword_reason(b) if mode == "keyword" else ""

        # Before the bank is open, from the root's snapshot when it is current (loader.py).
        hits, mode, note, reason = await server.run_bank("skill_search", search)
        skills = [m.SkillMatch(name=h.name, description=h.record.description,
                               score=round(float(h.score), 6), why=h.why, uri=res.skill_uri(h.name),
                               trust=h.record.trust, notes=list(h.record.notes))
                  for h in hits]
        missing = dict(getattr(hits, "missing_tools", {}) or {})
        # What to do next, in the core's words the adapters' find_skills says too.
        hint = note_mode(skill_search_note(bool(skills), missing, getattr(hits, "reason", "")),
                         mode, reason)
        return m.SkillSearch(task=task, skills=skills, hint=hint, search_mode=mode, note=note,
                             missing_tools=missing)

    @tool("read")
    async def load_skill(name: SkillName) -> m.SkillDocument:
        def load(b: Any) -> Any:
            # The core names an unknown skill, and a SKILL.md that is there but is not served
            # (unreadable, too large, not UTF-8) with why; a check here first answered "no
            # skill named" for those too (hunt-mcpcorpus #1, session 38).
            return b.skills.load(name)

        skill = await server.run_bank("skills", load,
                                      hint="Call find_skills(task) to get the names of skills that exist")
        return m.SkillDocument(
            name=skill.name, description=skill.description, body=skill.body,
            frontmatter=res._jsonable({k: v for k, v in skill.frontmatter.items()
                                       if k not in ("name", "description")}),
            files=[m.SkillFileInfo(path=r.path, size=r.size, sha256=r.sha256,
                                   uri=res.skill_uri(skill.name, r.path)) for r in skill.resources],
            writable=skill.writable, uri=res.skill_uri(skill.name), trust=skill.trust,
            scan=skill.scan, findings=[f.model_dump() for f in skill.findings],
            notes=list(skill.notes))

    @tool("read")
    async def read_skill_resource(
        name: SkillName,
        path: Annotated[str, Field(min_length=1, max_length=512,
                                   description="file path relative to the skill folder, as listed "
                                               "in load_skill's files, e.g. 'references/guide.md'")],
    ) -> m.SkillFile:
        def read(b: Any) -> str:
            return b.skills.read_resource(name, path)  # the core's refusals, as load_skill

        text = await server.run_bank(
            "skills", read,
            hint="Call load_skill(name) to see the skill's files, or find_skills(task) for names")
        return m.SkillFile(name=name, path=path, text=text)

    @tool("overwrite")
    async def save_skill(
        name: Annotated[str, Field(min_length=1, max_length=64,
                                   description="lowercase letters, digits and hyphens, e.g. 'deploy-to-fly'")],
        description: Annotated[str, Field(min_length=1, max_length=1024,
                                          description="what the skill does and when to use it, in one or two sentences")],
        body: Annotated[str, Field(min_length=1, max_length=100_000,
                                   description="markdown instructions: steps, pitfalls, examples")],
    ) -> m.SavedSkill:
        def save(b: Any) -> tuple[Any, Any]:
            # Skills in git: an untrusted client's skill is a proposal a reviewer merges first
            # (skillbank/team/skills_repo.py), so only there is it accepted.
            if not trusted and b.skills.repo_status() is None:
                raise ToolError(UNTRUSTED_SKILL)
            # include_held: a user's own skill may take the name of a held third-party one
            before = b.skills.load(name, include_held=True) if name in b.skills else None
            from skillbank import scope as scopes

            with scopes.using(scopes.caller("default", trusted)):
                return before, b.skills.save(name, description, body), b.root

        from skillbank.mcp_server.identity import shown_path

        before, skill, root = await server.run_bank("skills", save)
        action = "updated" if before is not None and before.writable else "created"
        note = (f"takes precedence over the read-only copy in {shown_path(before.root, root)}"
                if before is not None and not before.writable else "")
        if skill.proposal is not None:  # skills in git: not served until a reviewer merges it
            action, note = "proposed", skill.proposal.note
        return m.SavedSkill(name=skill.name, action=action, description=skill.description,
                            uri=res.skill_uri(skill.name), note=note)
