"""`propose_skills` over MCP: draft skills from the memory's recorded experience.

Trusted callers only (stdio, HTTP with --trust, a trusted token; `skills.propose` refuses the
others): a drafted skill steers every later task that routes to it once adopted, and proposing
writes files. Even then the tool only writes drafts to `<root>/drafts/`, which nothing routes
to: a person adopts or discards each one (`skillbank skills drafts | adopt | discard`). Thin:
the logic is `bank.skills.propose`; in a legacy-protocol session whose client offers sampling,
the client's model writes the drafts.
No `from __future__ import annotations` (the SDK reads these annotations).
"""

from typing import Annotated, Any, Optional

import anyio
from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from skillbank.mcp_server import models as m
from skillbank.mcp_server.annotations import Registrar
from skillbank.mcp_server.tools_memory import client_model

PENDING_NOTE = ("Drafts wait for a person: show them to the user, who adopts or discards each "
                "with `skillbank skills adopt NAME` / `skillbank skills discard NAME`. Nothing is "
                "routed to a draft until it is adopted.")


class DraftedSkill(BaseModel):
    name: str
    skill: str = Field(description=(
        "the skill adopting it writes: its name, or the revised skill's; a draft drawn from "
        "namespaces other than the server's own is named `<skill>-<namespace tag>`"))
    description: str
    revises: Optional[str] = Field(None, description="the skill this draft would replace")
    sources: list[str] = Field(description="ids of the experiences it was drawn from")
    path: str
    diff: Optional[str] = Field(None, description="for a revision: unified diff against the skill")
    drafted_by: str = Field("rules", description="'model' when the client's LLM wrote the text")
    reason: str = Field("", description=(
        "why it was drafted (the runs it was drawn from, or a revised skill's failures) and, "
        "when drafted_by is 'rules' though the client's model was asked, why its text was not "
        "used"))


class ProposedSkills(BaseModel):
    drafts: list[DraftedSkill]
    pending_review: bool = Field(description="true when drafts wait for a person to adopt them")
    note: str = ""


def _sampling_drafter(ctx: Context) -> Any:
    """An `LLMDrafter` over the client's model (MCP sampling), when the session offers it.

    Drafting runs on a worker thread and asks once per group, so each prompt is sent back to
    the event loop with `anyio.from_thread.run`. Sessions of the 2026-07-28 protocol sample
    only through the input-required flow (one sample per call): they get the rule drafter.
    """
    ask = client_model(ctx, None)
    if ask is None:
        return None
    from skillbank.memories.skills.drafting import LLMDrafter

    return LLMDrafter(lambda prompt: anyio.from_thread.run(ask, prompt))


def register(tool: Registrar, server: Any, *, trusted: bool, sampling: bool = True) -> None:
    """Add `propose_skills` to `server`."""

    @tool("add")
    async def propose_skills(
        min_support: Annotated[int, Field(ge=1, le=1000, strict=True, description=(
            "fewest recorded experiences of one kind of task to draft a skill from")), m.WHOLE] = 3,
        namespace: Annotated[Optional[str], Field(max_length=64, description=(
            "experiences of this namespace ('*' for all); default: the memory's"))] = None,
        *,
        ctx: Context,
    ) -> ProposedSkills:
        drafter = _sampling_drafter(ctx) if sampling and trusted else None

        def propose(b: Any) -> tuple[list[Any], Any]:
            # The bank refuses an untrusted caller: this server's clients (HTTP without
            # --trust) or a token's principal (a tokens-file server is built trusted).
            return (b.skills.propose(namespace=namespace, min_support=min_support,
                                     drafter=drafter, trusted=trusted), b.root)

        from skillbank.mcp_server.identity import shown_path

        drafts, root = await server.run_bank("experiences", propose)
        return ProposedSkills(
            drafts=[DraftedSkill(name=d.name, skill=d.skill, description=d.description,
                                 revises=d.revises,
                                 sources=list(d.sources), path=shown_path(d.path, root),
                                 diff=server._shown_paths(d.diff),  # its header names files:
                                 # host paths hidden from HTTP clients (hunt-mcpauthor #3, s. 37)
                                 drafted_by=d.drafted_by, reason=d.reason) for d in drafts],
            pending_review=bool(drafts),
            note=PENDING_NOTE if drafts else "Nothing new to propose from the recorded experience.")
