"""`propose_skills` over MCP: draft skills from the memory's recorded experience.

Trusted sessions only (stdio, or HTTP with --trust): a drafted skill steers every later task
that routes to it once adopted, and proposing writes files. Even then the tool only writes
drafts to `<root>/drafts/`, which nothing routes to: a person adopts or discards each one
(`skillbank skills drafts | adopt | discard`). Thin: the logic is `bank.skills.propose`.
No `from __future__ import annotations` (the SDK reads these annotations).
"""

from typing import Annotated, Any, Optional

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from skillbank.mcp_server.annotations import Registrar

UNTRUSTED_PROPOSE = ("propose_skills needs a trusted session: this server does not trust its "
                     "clients (HTTP without --trust). Ask the user to run `skillbank skills "
                     "propose`, or to restart the server with --trust.")
PENDING_NOTE = ("Drafts wait for a person: show them to the user, who adopts or discards each "
                "with `skillbank skills adopt NAME` / `skillbank skills discard NAME`. Nothing is "
                "routed to a draft until it is adopted.")


class DraftedSkill(BaseModel):
    name: str
    description: str
    revises: Optional[str] = Field(None, description="the skill this draft would replace")
    sources: list[str] = Field(description="ids of the experiences it was drawn from")
    path: str
    diff: Optional[str] = Field(None, description="for a revision: unified diff against the skill")


class ProposedSkills(BaseModel):
    drafts: list[DraftedSkill]
    pending_review: bool = Field(description="true when drafts wait for a person to adopt them")
    note: str = ""


def register(tool: Registrar, server: Any, *, trusted: bool) -> None:
    """Add `propose_skills` to `server`."""

    @tool("add")
    async def propose_skills(
        min_support: Annotated[int, Field(ge=1, le=1000, strict=True, description=(
            "fewest recorded experiences of one kind of task to draft a skill from"))] = 3,
        namespace: Annotated[Optional[str], Field(max_length=64, description=(
            "experiences of this namespace ('*' for all); default: the memory's"))] = None,
    ) -> ProposedSkills:
        if not trusted:
            raise ToolError(UNTRUSTED_PROPOSE)

        def propose(b: Any) -> list[Any]:
            return b.skills.propose(namespace=namespace, min_support=min_support)

        drafts = await server.run_bank("experiences", propose)
        return ProposedSkills(
            drafts=[DraftedSkill(name=d.name, description=d.description, revises=d.revises,
                                 sources=list(d.sources), path=d.path, diff=d.diff) for d in drafts],
            pending_review=bool(drafts),
            note=PENDING_NOTE if drafts else "Nothing new to propose from the recorded experience.")
