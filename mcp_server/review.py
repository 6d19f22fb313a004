"""Forgetting and reviewing over MCP, and the prompts that start a task, reflect and review.

Only trusted sessions (stdio, or HTTP with --trust) may forget or decide on pending items: an
untrusted client could otherwise delete the user's rules or approve its own poisoned entries.
Untrusted sessions get a tool error that says who can do it instead. No `from __future__ import
annotations` (the SDK reads these annotations).
"""

import json
from typing import Annotated, Any, Literal

import mcp_types as types
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from pydantic import Field

from skillbank.mcp_server import models as m
from skillbank.mcp_server.annotations import Registrar
from skillbank.mcp_server.tools_memory import ItemId
from skillbank.tool_text import folded_note

UNTRUSTED = ("{what} needs a trusted session: this caller is not trusted (an untrusted token, "
             "or HTTP without --trust). Ask the user to {how}, or to serve it with a trusted "
             "token or --trust.")
OUTCOMES = ("success", "failure", "partial", "unknown")


def _bad_prompt_argument(message: str) -> MCPError:
    """A prompts/get error that keeps its cause (the SDK would say only 'Error rendering')."""
    return MCPError(code=types.INVALID_PARAMS, message=message)


def _text(value: Any, limit: int | None = 300) -> str:
    """`value` on one line, cut to `limit` characters (None: whole)."""
    text = " ".join(str(value or "").split())
    return text if limit is None or len(text) <= limit else text[: limit - 1] + "…"


def _pending(bank: Any) -> list[m.PendingItem]:
    """The queue as `review_queue.pending_items` says it. A rule's text and detail are not cut
    here: a memory block serves a rule's first 400 characters and its playbook the whole rule
    and when-to-use, and this list cut the text at 300 — what followed was approved unseen
    (hunt-untrusted #1, session 27). The core bounds them (a rule's fields: 2,000 characters;
    an experience's detail says where it was cut and how to see it whole)."""
    from skillbank.records import MAX_SHORT
    from skillbank.review_queue import pending_items

    return [m.PendingItem(id=i.id, kind=i.kind, text=_text(i.text, MAX_SHORT),
                          detail=_text(i.detail, None),
                          supersedes=[_text(s) for s in i.supersedes], source=_text(i.source, 80),
                          created=i.created) for i in pending_items(bank)]


def _nothing_to_review(trusted: bool) -> str:
    """What an empty review queue says, in `list_pending` and the `review_pending` prompt: that
    nothing waits only to a session that may review. The queue is empty for every other caller
    (pending items are shown only to whoever may decide on them), and the prompt told an
    untrusted session's model "Nothing in the memory waits for review" while its own rule
    waited (hunt-mcp-longlived #4, session 31)."""
    from skillbank import scope as scopes

    if trusted and scopes.current().reviewable:
        return "Nothing waits for review."
    return ("Nothing this session may review: pending items are shown only to whoever may "
            "decide on them (a trusted session; `skillbank guidelines list --status "
            "pending`).")


def register(tool: Registrar, server: Any, *, trusted: bool) -> None:
    """Add forget, list_pending and review_memory, and the prompts, to `server`."""

    @tool("destroy")
    async def forget(id: ItemId) -> m.Forgotten:
        if not trusted:
            raise ToolError(UNTRUSTED.format(what="forget", how=f"remove {id} with the skillbank "
                                             "CLI"))

        def drop(b: Any) -> Any:
            return b.forget(id, trusted=trusted)

        result = await server.run_bank("experiences", drop,
                                       hint="Forget only ids shown by memory_context, a search or "
                                            "list_pending")
        result = result if isinstance(result, dict) else {"id": id}
        detail = result.get("detail") or result.get("trash") or result.get("path") or ""
        return m.Forgotten(id=str(result.get("id", id)), kind=str(result.get("kind", "")),
                           detail=str(detail))

    @tool("read")
    async def list_pending() -> m.PendingList:
        items = await server.run_bank("experiences", _pending)
        note = ("Show these to the user; act on their decision with review_memory(id, "
                "decision)." if items and trusted else
                "Only a trusted session can approve or reject these." if items else
                _nothing_to_review(trusted))
        return m.PendingList(items=items, note=note)

    @tool("destroy")
    async def review_memory(
        id: Annotated[str, Field(min_length=3, max_length=200,
                                 description="a pending id from list_pending: 'gl-…' or 'exp-…'")],
        decision: Annotated[Literal["approve", "reject"],
                            Field(description="approve: use it from now on; reject: never use it")],
    ) -> m.Reviewed:
        if not trusted:
            memory = "guidelines" if id.startswith("gl-") else "experiences"
            raise ToolError(UNTRUSTED.format(
                what="review_memory", how=f"approve or reject it with `skillbank {memory} "
                "approve|reject <id>`"))

        def decide(b: Any) -> tuple[str, Any, list[str]]:
            from skillbank.errors import InvalidInputError
            from skillbank.review_queue import superseded_on_approval

            if id.startswith("gl-"):
                replaced = superseded_on_approval(b, b.guidelines.get(id)) \
                    if decision == "approve" else []
                return "guideline", getattr(b.guidelines, decision)(id), \
                    [f"{old.id}: {old.text}" for old in replaced]
            if id.startswith(("exp-", "lsn-")):
                return "experience", getattr(b.experiences, decision)(id), []
            raise InvalidInputError(f"{id!r} is not a pending item id; call list_pending to see "
                                    "the ids ('gl-…' guidelines, 'exp-…' experiences)")

        kind, record, replaced = await server.run_bank(
            "experiences", decide, hint="Call list_pending to see what waits for review")
        status = (record.get("status") if isinstance(record, dict)
                  else getattr(record, "status", "")) or ("active" if decision == "approve"
                                                          else "rejected")
        folded = getattr(record, "id", id)
        if kind == "guideline" and folded != id:  # worded as an active rule: reinforced it
            status = folded_note(folded)
        return m.Reviewed(id=id, kind=kind, decision=decision, status=str(status),
                          superseded=[_text(r) for r in replaced])

    # Prompts ------------------------------------------------------------------------------------
    @server.prompt(title="Start a task with memory")
    async def start_task(task: str, topic: str | None = None) -> str:
        """Fetch what the memory holds for a task (a topic: only its guidelines); apply it."""
        if not task.strip():
            raise _bad_prompt_argument("start_task: the task argument is empty; pass the task "
                                       "in plain words, e.g. task='fix the failing CI build'")

        def context(b: Any) -> Any:
            return b.context_for(task, topic=topic or None)

        try:
            ctx = await server.run_bank("experiences", context)
        except ToolError as exc:
            raise MCPError(code=types.INTERNAL_ERROR, message=f"start_task: {exc}") from None
        memory = ctx.text or "(The memory has nothing relevant to this task yet.)"
        return (
            f"Task: {task}\n\n{memory}\n\n"
            "Before you start, apply what fits: follow the guidelines that apply, and if a skill "
            "matches, call load_skill(name) and follow its instructions. Avoid approaches that "
            "failed before. When you finish, call rate_memory(id, helpful) for each [id] above that "
            "you used, and record_experience(task, outcome, steps, feedback) with how it went.")

    @server.prompt(title="Reflect on a finished task")
    def reflect(task: str, outcome: str, feedback: str = "") -> str:
        """Turn a finished task into record_experience and learn_from_critique calls."""
        outcome_value = outcome.strip().lower()
        if outcome_value not in OUTCOMES:
            raise _bad_prompt_argument(
                f"reflect: outcome {outcome!r} is not one of {', '.join(OUTCOMES)}; e.g. "
                "outcome='failure'")
        lines = [
            f"The task \"{task}\" ended with outcome: {outcome_value}.",
            f"Feedback received: {feedback}" if feedback.strip() else "No feedback was given.",
            "",
            "Save what this attempt teaches:",
            f"1. Call record_experience with task={json.dumps(task)}, outcome=\"{outcome_value}\", "
            "steps = the key actions you took in order (with what each returned), "
            + (f"feedback={json.dumps(feedback)}, " if feedback.strip() else "")
            + "and when_to_use = one line naming the kind of task this applies to.",
        ]
        if feedback.strip():
            lines.append(f"2. Call learn_from_critique with critique={json.dumps(feedback)} and "
                         f"task={json.dumps(task)}, so the feedback becomes guidelines.")
        lines.append(f"{3 if feedback.strip() else 2}. Call rate_memory(id, helpful) for each "
                     "remembered item you used during the task.")
        lines.append(f"{4 if feedback.strip() else 3}. If tasks of this kind keep coming up, "
                     "call propose_skills to draft a skill from the recorded experience (the "
                     "drafts wait for the user to adopt them).")
        return "\n".join(lines)

    @server.prompt(title="Review what waits for approval")
    async def review_pending() -> str:
        """Walk the user through the pending rules and experiences, one decision each."""
        try:
            items = await server.run_bank("experiences", _pending)
        except ToolError as exc:
            raise MCPError(code=types.INTERNAL_ERROR, message=f"review_pending: {exc}") from None
        if not items:
            return f"{_nothing_to_review(trusted)} Tell the user so."
        listing = "\n".join(
            f"- [{i.id}] ({i.kind}) {i.text}" + (f"\n  {i.detail}" if i.detail else "")
            + "".join(f"\n  Approving it stops serving [{s}]" for s in i.supersedes)
            for i in items)
        return (
            "These items came from untrusted clients and are not used until a person approves "
            f"them:\n\n{listing}\n\nShow them to the user one by one. For each, ask whether to "
            "approve or reject it and call review_memory(id, decision) with their answer. Never "
            "decide yourself; if the user wants an item gone entirely, call forget(id).")

    @server.prompt(title="Clean up the memory")
    async def clean_up(topic: str = "") -> str:
        """Find rules and experiences on a topic that may be wrong, and ask before forgetting."""
        subject = topic.strip() or "everything the user works on"
        return (
            f"Help the user clean up the memory about {subject}. Call search_guidelines and "
            "recall_experiences with that subject, list what you find with its [id], and point "
            "out items that look wrong, outdated or contradictory. Ask the user before changing "
            "anything: call forget(id) only for items they want deleted, and rate_memory(id, "
            "false) for items that merely did not help.")
