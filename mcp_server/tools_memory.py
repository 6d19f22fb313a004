"""The experience and guideline tools of the MCP face, with the server's trust passed through.

Trust is the bank's to enforce: every writing call hands `trusted=` to the facade, which keeps
an untrusted client's votes from changing a status on their own, stores its experiences as
pending (never recalled in trusted sessions until approved) and its rules as pending. The face
only reports what happened. No `from __future__ import annotations` (the SDK reads these).
"""

import logging
import warnings
from typing import Annotated, Any, Awaitable, Callable

import mcp_types as types
from mcp.server.mcpserver import Context, Resolve, Sample
from mcp_types.version import is_version_at_least
from pydantic import Field

from skillbank.mcp_server import models as m
from skillbank.mcp_server.annotations import Registrar
from skillbank.mcp_server.modes import mode_of, skills_mode
from skillbank.mcp_server.tools_skills import AvailableTools, K, Task
from skillbank.tool_text import memory_note, search_note

log = logging.getLogger("skillbank.mcp")

ItemId = Annotated[str, Field(min_length=3, max_length=200,
                              description="an id from memory_context or a search: 'gl-…', "
                                          "'exp-…', 'lsn-…' or 'skill:<name>'")]
PENDING_EXPERIENCE = ("Stored as pending: this caller is not trusted (an untrusted token, or a "
                      "server without --trust), so the "
                      "experience is not recalled in trusted sessions until a person approves it "
                      "(review_memory in a trusted session, or the skillbank CLI).")
UNCOUNTED_VOTE = ("Recorded for review: votes from untrusted clients never change a ranking or a "
                  "rule's status on their own.")


def _modern(ctx: Context) -> bool:
    version = ctx.protocol_version
    return bool(version) and is_version_at_least(version, "2026-07-28")


def _client_samples(ctx: Context) -> bool:
    caps = ctx.client_capabilities
    return caps is not None and caps.sampling is not None


#: Seconds a legacy session's sampling request may take before the rules distil instead
#: (SKILLBANK_MCP_SAMPLING_TIMEOUT overrides it). A reply the HTTP guard refused (over its body
#: limit) never reached the waiting request: `learn_from_critique` hung for good.
SAMPLING_TIMEOUT = 120
SAMPLING_TIMEOUT_ENV = "SKILLBANK_MCP_SAMPLING_TIMEOUT"


def sampling_timeout() -> int:
    from skillbank.mcp_server.server import positive_setting

    return positive_setting(SAMPLING_TIMEOUT_ENV, SAMPLING_TIMEOUT)


async def ask_client_model(ctx: Context, prompt: str) -> str:
    """The client's model's answer to `prompt` (MCP sampling, sessions before 2026-07-28),
    within `sampling_timeout()` seconds; raises when there is none, so the caller's rules
    answer instead (as docs/mcp.md says)."""
    import anyio

    with anyio.fail_after(sampling_timeout()), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated in 2026-07-28, current before it
        result = await ctx.session.create_message(
            [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))],
            max_tokens=1500, temperature=0.0, related_request_id=ctx.request_id)
    text = _sample_text(result)
    if text is None:
        raise RuntimeError("the client's model returned no text")
    return text


def client_model(ctx: Context, sampled: Any) -> Callable[[str], Awaitable[str]] | None:
    """How to ask the client's model for rules, or None when it cannot be asked: the reply a
    2026-07-28 session already resolved (`sampled`), or a sampling request on an older session
    whose client declared sampling."""
    if sampled is not None:
        reply = _sample_text(sampled)

        async def resolved(prompt: str) -> str:
            if reply is None:
                raise RuntimeError("the client's model returned no text")
            return reply
        return resolved
    if not _modern(ctx) and _client_samples(ctx) and ctx.session.can_send_request:
        async def requested(prompt: str) -> str:
            return await ask_client_model(ctx, prompt)
        return requested
    return None


def _reason(error: str) -> str:
    """A sampling failure (`LLMDistiller.last_error`) in a few words for the caller: the
    sampling timeout's error has no message of its own."""
    text = error.strip().rstrip(":").strip()
    if text == "TimeoutError":
        return f"no reply within {sampling_timeout()} s"
    return text if len(text) <= 200 else text[:200] + "…"


def _sample_text(result: Any) -> str | None:
    content = getattr(result, "content", None)
    if isinstance(content, list):  # a result with tool-use content: take the text blocks
        texts = [getattr(c, "text", None) for c in content]
        return "\n".join(t for t in texts if t) or None
    return getattr(content, "text", None)


def experience_match(hit: Any) -> m.ExperienceMatch:
    record = hit.record
    lessons = [getattr(lesson, "text", str(lesson)) for lesson in getattr(record, "lessons", []) or []]
    steps = [s.action for s in getattr(record, "steps", []) or [] if getattr(s, "action", None)]
    return m.ExperienceMatch(
        id=hit.id, score=round(float(hit.score), 6), kind=getattr(record, "kind", "experience"),
        task=record.task, outcome=str(record.outcome), feedback=record.feedback,
        lessons=lessons, when_to_use=getattr(record, "when_to_use", "") or "",
        steps=steps[:20], tags=list(getattr(record, "tags", []) or []))


def guideline_match(hit: Any) -> m.GuidelineMatch:
    g = hit.record
    return m.GuidelineMatch(id=g.id, text=g.text, topic=g.topic, when_to_use=g.when_to_use or "",
                            score=round(float(hit.score), 6), helpful=g.helpful, harmful=g.harmful)


def change(entry: Any) -> m.GuidelineChange:
    return m.GuidelineChange(
        action=str(getattr(entry, "action", "")), guideline_id=getattr(entry, "guideline_id", None),
        text=getattr(entry, "text", "") or "", superseded_id=getattr(entry, "superseded_id", None),
        detail=getattr(entry, "detail", "") or "",
        nearest=list(getattr(entry, "nearest", None) or []))


def register(tool: Registrar, server: Any, *, trusted: bool, sampling: bool) -> None:
    """Add the whole-memory, experience and guideline tools to `server`."""

    @tool("read")
    async def memory_context(
        task: Task,
        budget_tokens: Annotated[int, Field(ge=50, le=20_000, strict=True,
                                            description="most tokens the returned text may use"),
                                 m.WHOLE] = 1500,
        available_tools: AvailableTools = None,
        topic: Annotated[str | None, Field(
            min_length=1, max_length=100,
            description="the task's topic, if you know it (the slug its rules are filed under, "
                        "e.g. 'python', 'customer-support'): only that topic's guidelines "
                        "are shown")] = None,
    ) -> m.MemoryContextResult:
        def context(b: Any) -> tuple[Any, str, str]:
            from skillbank.mcp_server.tools_skills import served_note
            from skillbank.memories.skills.dependencies import agent_tools

            with agent_tools(available_tools):  # skills needing tools it lacks stay out (#26)
                return (b.context_for(task, budget_tokens=budget_tokens, topic=topic),
                        skills_mode(b), served_note(b))

        ctx, mode, served = await server.run_bank("experiences", context)
        missing_tools = dict(getattr(ctx, "missing_tools", {}) or {})
        # Why the block is empty, or what it left out, in the adapters' words (an empty answer
        # said `note: ""`; hunt-badinput #5, session 26).
        left_out = memory_note(ctx.text, ctx.budget_tokens, ctx.omitted, missing_tools,
                               "call memory_context again with a larger budget_tokens",
                               getattr(ctx, "reason", ""))
        return m.MemoryContextResult(text=ctx.text, ids=list(ctx.ids), tokens=ctx.tokens,
                                     budget_tokens=ctx.budget_tokens, omitted=ctx.omitted,
                                     search_mode=mode, missing_tools=missing_tools,
                                     note=" ".join(part for part in (
                                         left_out, getattr(ctx, "note", ""), served) if part))

    @tool("vote")
    async def rate_memory(
        id: ItemId,
        helpful: Annotated[bool, Field(strict=True,
                                       description="true if it helped, false if it misled you")],
    ) -> m.Rating:
        def rate(b: Any) -> dict[str, Any]:
            # `counted` is the caller's own trust (a tokens-file or JWT principal's), not only
            # the server's: an untrusted vote on any kind is kept apart for review.
            return b.rate(id, helpful=helpful, trusted=trusted)

        result = await server.run_bank("experiences", rate,
                                       hint="Rate only ids shown by memory_context or a search")
        counted = bool(result.get("counted", trusted))
        return m.Rating(id=result.get("id", id), kind=result.get("kind", ""),
                        helpful=bool(result.get("helpful", helpful)), status=result.get("status"),
                        counted=counted, note="" if counted else UNCOUNTED_VOTE)

    @tool("add")
    async def record_experience(
        task: Task,
        outcome: Annotated[m.Outcome, Field(description="how it went: success, failure, partial or unknown")],
        steps: Annotated[list[m.StepInput | str] | None,
                         Field(max_length=200, description="key steps in order: objects with "
                               "action/observation/thought, or plain strings")] = None,
        score: Annotated[float | None, Field(ge=0, le=1, strict=True,
                                            description="graded result, 0..1")] = None,
        feedback: Annotated[str | None, Field(max_length=20_000,
                                              description="what the user or a check said about the result")] = None,
        tags: Annotated[list[Annotated[str, Field(max_length=64)]] | None,
                        Field(max_length=32, description="short labels, e.g. ['python', 'deploy']")] = None,
        when_to_use: Annotated[str | None, Field(max_length=2_000,
                                                 description="the kind of future task this applies to")] = None,
    ) -> m.RecordedExperience:
        step_dicts = [({"action": s} if isinstance(s, str) else s.model_dump(exclude_none=True))
                      for s in (steps or [])]

        def record(b: Any) -> Any:
            eid = b.experiences.record(task=task, outcome=outcome, steps=step_dicts, score=score,
                                       feedback=feedback, tags=list(tags or []),
                                       when_to_use=when_to_use or "", trusted=trusted)
            # A pending run is shown to its reviewers only, not read back by its untrusted
            # writer: the id says its status (and this tool gives it no lessons).
            return eid, None if eid.status == "pending" else b.experiences.get(eid)

        eid, exp = await server.run_bank("experiences", record)
        lessons = [getattr(lesson, "text", str(lesson)) for lesson in getattr(exp, "lessons", []) or []]
        pending = eid.status == "pending"
        return m.RecordedExperience(id=eid, task=task, outcome=outcome, lessons=lessons,
                                    status="pending" if pending else "active",
                                    note=PENDING_EXPERIENCE if pending else getattr(eid, "note", ""))

    @tool("read")
    async def recall_experiences(
        task: Task,
        k: K = 5,
        outcome: Annotated[m.Outcome | None, Field(description="only experiences with this outcome")] = None,
    ) -> m.ExperienceSearch:
        def recall(b: Any) -> tuple[list[Any], str]:
            hits = b.experiences.recall(task, k=k, outcome=outcome)
            return hits, mode_of(hits)

        hits, mode = await server.run_bank("experiences", recall)
        # What the recall may miss (records its catch-up could not index: a full disk), as
        # Python's `Hits.note` says; the tool answered past it without a word (session 33).
        # Why nothing was looked for (`Hits.reason`: emoji alone), as find_skills says it.
        return m.ExperienceSearch(task=task, experiences=[experience_match(h) for h in hits],
                                  search_mode=mode, note=search_note(hits, "experience"))

    async def _sample_rules(critique: str, task: str | None, response: str | None,
                            score: float | None, use_client_model: bool,
                            ctx: Context) -> Sample | None:
        """Ask the client's LLM to extract rules (2026-07-28+: through the input-required flow).

        A client that declines this request, whose handler fails, or whose reply the HTTP guard
        refuses never sends the retry: the SDK's client driver raises at home
        (`mcp.client._input_required._dispatch_all`), so the server never learns of it and
        cannot fall back. `use_client_model: false` lets such a client learn with the rules
        (hunt-sampling #3, session 36)."""
        if not sampling or not use_client_model or not _modern(ctx) or not _client_samples(ctx):
            return None
        from skillbank.distill import LLMDistiller

        prompt = LLMDistiller._rules_prompt(critique, task, response, score)
        return Sample([types.SamplingMessage(role="user",
                                             content=types.TextContent(type="text", text=prompt))],
                      max_tokens=1500, temperature=0.0)

    @tool("vote")
    async def learn_from_critique(
        critique: Annotated[str, Field(min_length=1, max_length=20_000,
                                       description="the feedback, verbatim")],
        task: Annotated[str | None, Field(max_length=20_000, description="the task it was about")] = None,
        response: Annotated[str | None, Field(max_length=20_000,
                                              description="excerpt of the work that was criticised")] = None,
        score: Annotated[float | None, Field(strict=True, allow_inf_nan=False,
                                            description="grade given, if any")] = None,
        use_client_model: Annotated[bool, Field(
            strict=True, description="false: extract the rules with the built-in distiller "
                                     "instead of asking your client's LLM (MCP sampling); use "
                                     "it when that request is declined or fails")] = True,
        *,
        sampled: Annotated[Any, Resolve(_sample_rules)],
        ctx: Context,
    ) -> m.LearnResult:
        from skillbank.distill import LLMDistiller

        acomplete = (client_model(ctx, sampled)
                     if sampled is not None or (sampling and use_client_model) else None)
        candidates = None
        distilled_by = "rules"
        why = ""  # why the rules distilled though the client's model was asked (hunt #4)
        if acomplete is not None:
            def no_sync(prompt: str) -> str:
                raise RuntimeError("sampling is asynchronous")

            # timeout=0: the sampling request has its own (SKILLBANK_MCP_SAMPLING_TIMEOUT)
            distiller = LLMDistiller(no_sync, acomplete=acomplete, timeout=0)
            candidates = await distiller.arules_from_critique(critique, task=task, response=response,
                                                              score=score)
            if distiller.last_error is None:
                distilled_by = "client_model"
            else:
                log.info("sampling did not give rules (%s); used the rule-based distiller",
                         distiller.last_error)
                why = (f"Your client's model gave no usable rules ({_reason(distiller.last_error)});"
                       " the built-in rule-based distiller extracted them.")

        def learn(b: Any) -> Any:
            return b.guidelines.learn(critique, task=task, response=response, score=score,
                                      source="mcp", trusted=trusted, candidates=candidates)

        report = await server.run_bank("guidelines", learn)
        pending = report.pending_review
        note = ("New rules are pending: a person must approve them before they apply "
                "(review_memory in a trusted session, or `skillbank guidelines approve <id>`)."
                if pending else "")
        return m.LearnResult(entries=[change(e) for e in report.entries],
                             distilled_by=distilled_by, pending_review=pending,
                             note=" ".join(part for part in (why, note) if part))

    @tool("add")
    async def add_guideline(
        text: Annotated[str, Field(min_length=3, max_length=2_000,
                                   description="one rule as a short imperative sentence")],
        topic: Annotated[str | None, Field(max_length=64,
                                           description="short lowercase slug, e.g. 'python', 'sql', 'writing'")] = None,
        when_to_use: Annotated[str | None, Field(max_length=2_000,
                                                 description="the kind of task the rule applies to")] = None,
        replaces: Annotated[str | None, Field(
            max_length=64, description="id of an existing guideline this rule replaces (from a "
                                       "result's 'nearest' or search_guidelines); that one is "
                                       "superseded, not merged")] = None,
    ) -> m.GuidelineChange:
        def add(b: Any) -> Any:
            return b.guidelines.add(text, topic=topic, when_to_use=when_to_use or "",
                                    source="mcp", trusted=trusted, replaces=replaces)

        return change(await server.run_bank("guidelines", add))

    @tool("read")
    async def search_guidelines(task: Task, k: K = 5) -> m.GuidelineSearch:
        def search(b: Any) -> tuple[list[Any], str]:
            hits = b.guidelines.search(task, k=k)
            return hits, mode_of(hits)

        hits, mode = await server.run_bank("guidelines", search)
        return m.GuidelineSearch(task=task, guidelines=[guideline_match(h) for h in hits],
                                 search_mode=mode, note=search_note(hits, "guideline"))
