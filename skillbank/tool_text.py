"""What a model is told about each memory tool, written once for every face.

The MCP server (`skillbank.mcp_server`) and the LangChain and LlamaIndex adapters
(`skillbank.adapters`) offer the same eleven memory tools (the MCP server adds `forget`,
`list_pending` and `review_memory` for reviewing what untrusted clients sent). A model should
read the same description whichever face it meets them through, and a fix to the wording should
reach all of them, so the descriptions (and the MCP titles) live here and nowhere else. Argument descriptions stay with each face's schema.
So do the notes that say why an answer is empty (`skill_search_note`, `empty_memory_note`).
"""

from __future__ import annotations

from typing import Any

TOOL_DESCRIPTIONS: dict[str, str] = {
    "find_skills":
        "Find skills (reusable SKILL.md instructions) that fit a task, best first, with their "
        "descriptions and scores. Call it before unfamiliar work, then call load_skill with the "
        "name of the skill that fits. An empty list means no skill fits; do not force one.",
    "load_skill":
        "Read a skill's full instructions (its SKILL.md body) and the list of files it ships "
        "with. Use a name returned by find_skills; read a listed file with read_skill_resource "
        "when the instructions refer to it.",
    "read_skill_resource":
        "Read one supporting text file of a skill (a reference, script or template), when the "
        "skill's instructions point to it.",
    "save_skill":
        "Save reusable instructions as a skill: creates it, or updates the bank's own copy when "
        "it already has one. Use it after you worked out a procedure worth repeating. A skill of "
        "that name from a read-only folder is left as it is; the saved one takes precedence.",
    "memory_context":
        "Everything the memory holds that is relevant to a task (guidelines learned from "
        "feedback, skills that may apply, past experiences) as one markdown block within a token "
        "budget. Call it when starting a task. Ids in [brackets] can be rated with rate_memory "
        "after the task.",
    "record_experience":
        "Remember how a task went (the main steps, the outcome, any feedback and the lessons), "
        "so a later attempt at a similar task can reuse what worked and avoid what failed. Call "
        "it when a task ends, especially after a failure or feedback.",
    "recall_experiences":
        "Past attempts at similar tasks and the lessons drawn from them, best first: what was "
        "done and how it went. Use it before trying something; filter by outcome to see only "
        "failures or only successes.",
    "learn_from_critique":
        "Turn feedback on your work into durable guidelines (rules) for future tasks. Call it "
        "whenever the user corrects or criticises what you did, passing the critique verbatim. "
        "Duplicates are merged and contradicted rules superseded; the reply says what was added, "
        "merged, superseded, ignored or left pending review.",
    "add_guideline":
        "Store one rule to follow on future tasks, as a short imperative sentence, when the user "
        "states a lasting preference or rule (use learn_from_critique for raw feedback). A rule "
        "that repeats an existing one is merged into it.",
    "search_guidelines":
        "Find the active guidelines (rules learned from earlier feedback) that apply to a task, "
        "best first.",
    "rate_memory":
        "Say whether a remembered item (a guideline, experience, lesson or skill, by the id shown "
        "in memory) helped with the task. Helpful items rank higher later; ones that keep not "
        "helping fade out.",
    "forget":
        "Remove a remembered item for good, by its id: a guideline ('gl-…'), an experience "
        "('exp-…'), a lesson ('lsn-…') or one of the memory's own skills ('skill:<name>', with "
        "its files and earlier versions). Nothing is kept to restore it from, so tell the user "
        "it cannot be undone. Use it only when the user asks to delete something or an item is "
        "wrong or harmful; to say an item did not help, use rate_memory instead.",
    "list_pending":
        "List what waits for a person's review: rules and experiences that came from untrusted "
        "clients and are not used until approved. Show them to the user and act on their decision "
        "with review_memory.",
    "review_memory":
        "Approve or reject one pending item (an id from list_pending) on the user's decision: "
        "approved items are used from now on, rejected ones never are.",
    "propose_skills":
        "Draft skills from the memory's recorded experience: one draft per kind of task that "
        "recurs in at least min_support experiences (steps that worked, pitfalls from failures, "
        "checks, and the experience ids it came from), plus revisions of skills that keep "
        "failing. Drafts are not used until a person adopts them; show them to the user. Call "
        "it after several tasks of one kind were recorded.",
}

#: Short human-readable names (the MCP `title` of each tool).
TOOL_TITLES: dict[str, str] = {
    "find_skills": "Find skills for a task",
    "load_skill": "Read a skill's instructions",
    "read_skill_resource": "Read a file of a skill",
    "save_skill": "Save (create or overwrite) a skill",
    "memory_context": "Recall memory for a task",
    "record_experience": "Record how a task went",
    "recall_experiences": "Recall past attempts at a task",
    "learn_from_critique": "Learn rules from feedback",
    "add_guideline": "Add a rule",
    "search_guidelines": "Search the rules",
    "rate_memory": "Rate a remembered item",
    "forget": "Forget a remembered item",
    "list_pending": "List items awaiting review",
    "review_memory": "Approve or reject a pending item",
    "propose_skills": "Draft skills from experience",
}


#: (pattern, replacement): the facade's Python-call hints in tool terms (tools, or the CLI for
#: what only a person should do). Applied to every error a tool passes on to a model, on every
#: face: a model cannot call `bank.guidelines.search(...)`.
_HINTS: tuple[tuple[Any, str], ...] = ()


def _hints() -> tuple[tuple[Any, str], ...]:
    global _HINTS
    if not _HINTS:
        import re

        _HINTS = tuple((re.compile(p), r) for p, r in (
            # Every face has search_guidelines and the ids of its memory block; only MCP has
            # list_pending (a LangChain model was told to call it).
            (r"find ids with bank\.guidelines\.list\([^)]*\) or search\(\)",
             "find ids with search_guidelines(task) or in the memory block"),
            (r"find ids with bank\.guidelines\.search\(task\) or list\(\)",
             "find ids with search_guidelines(task) or in the memory block"),
            (r"with search\(\) or in a learn entry's 'nearest'",
             "with search_guidelines(task) or in a learn result's 'nearest'"),
            (r",? or run sync\(\) if the file was just added by hand", ""),
            (r"run sync\(\)", "ask the user to run `skillbank reindex`"),
            (r"use retire\(\) for an active one",
             "an active rule is retired by rating it unhelpful (rate_memory) or with "
             "`skillbank guidelines retire ID`"),
            (r"waits for approve\(\) or reject\(\)",
             "waits for review_memory(id, 'approve' or 'reject') in a trusted session"),
            (r"(skill '[^']+' already exists); update it instead",
             r"\1; save_skill with the same name updates the bank's own copy"),
            (r"; drafts\(\) lists them", "; `skillbank skills drafts` lists them"),
            (r"; history\(\) lists them", "; `skillbank skills history NAME` lists them"),
            (r"as listed by history\(\)", "as listed by `skillbank skills history NAME`"),
        ))
    return _HINTS


def tool_terms(message: str) -> str:
    """`message` with the Python calls the facade names replaced by tools or CLI commands."""
    if "(" not in message:
        return message
    for pattern, replacement in _hints():
        message = pattern.sub(replacement, message)
    return message


def search_note(hits: object, what: str) -> str:
    """What a face says beside a memory search's `hits`: the search's own note (what it may
    miss) or, when nothing was looked for, why (`Hits.reason`: a request with no letters or
    digits), worded for every face alike (the adapters and MCP's search_guidelines said
    nothing, session 34). `what`: "experience" or "guideline"."""
    note = str(getattr(hits, "note", "") or "")
    reason = str(getattr(hits, "reason", "") or "")
    if note or not reason:
        return note
    return f"No {what} was looked for: {reason}. Restate the task in words."


def skill_search_note(found: bool, missing_tools: dict[str, list[str]] | None,
                      reason: str = "") -> str:
    """What to do after a skill search, said alike by every face that answers one for a model.

    "No skill fits" was said when one fitted but needs tools the agent lacks (missing_tools named
    it): that is a different answer. The MCP face said so; the adapters' find_skills still said
    "No skill fits this task" (hunt-disclose #1, session 25), so the wording lives here.
    `reason` is the search's own (`Hits.reason`: an emoji-only request has nothing to route
    on); every face said "No skill fits" instead (hunt-routing #11, session 28).
    """
    if found:
        return "Call load_skill with the best name to read its instructions."
    if reason:
        return f"No skill was looked for: {reason}. Restate the task in words to find one."
    if missing_tools:
        return ("No skill you can use fits this task: the skills in missing_tools need tools "
                "you lack; proceed without one.")
    return "No skill fits this task; proceed without one."


NO_MEMORY = "No relevant memory for this task."


def folded_note(rule_id: str) -> str:
    """What approving an untrusted restatement of an active rule did: the approval reinforced
    that rule and retired the proposal (two active rules of one wording were served before;
    a paraphrase is folded too, review 1 #4, session 32). The CLI and MCP `review_memory` each
    wrote this wording (session 26); said once here."""
    return f"folded into {rule_id}, an active rule that says the same (reinforced)"


def empty_memory_note(budget_tokens: int, omitted: int,
                      missing_tools: dict[str, list[str]] | None, larger_budget: str,
                      reason: str = "") -> str:
    """Why a memory block for a task came out empty: nothing relevant, or relevant items left
    out for the budget (`larger_budget` says how to ask for more on this face), or skills that
    fit but need tools the agent lacks. The adapters' memory_context answered "No relevant
    memory" for the last two, so a model never retried with a larger budget (hunt-disclose #2,
    session 25); the CLI said "raise --budget" on its own. `reason`: why nothing was looked
    for (`MemoryContext.reason`), said as `skill_search_note` says it.
    """
    if reason:
        return f"No memory was looked for: {reason}. Restate the task in words."
    parts = []
    if omitted:
        parts.append(f"Nothing fits in {budget_tokens} tokens: {_left_out(omitted)} left out "
                     f"for the budget; {larger_budget}.")
    if missing_tools:
        parts.append(f"Skills that fit this task need tools you lack ({_needs(missing_tools)}); "
                     "proceed without them.")
    return " ".join(parts) or NO_MEMORY


def memory_reply(text: str, budget_tokens: int, omitted: int,
                 missing_tools: dict[str, list[str]] | None, larger_budget: str,
                 reason: str = "") -> str:
    """A memory block as a tool answers it for a model: the block, then what it left out.

    A block with some items and others dropped for the budget (or gated skills) was answered
    with its text alone by the adapters, so a model never knew to ask for more; MCP says so in
    `omitted` beside the text (left from hunt-disclose #2, session 25). The note is outside the
    block's budget (a line or two)."""
    return "\n\n".join(part for part in (text, memory_note(text, budget_tokens, omitted,
                                                            missing_tools, larger_budget,
                                                            reason)) if part)


def memory_note(text: str, budget_tokens: int, omitted: int,
                missing_tools: dict[str, list[str]] | None, larger_budget: str,
                reason: str = "") -> str:
    """What a memory block left out, said apart from it ('' when nothing): why it is empty
    (`empty_memory_note`), else the items the budget or the tool gate dropped. The MCP face
    answers the block and this note in separate fields; it answered an empty block with
    `note: ""`, no reason, where the adapters said why (hunt-badinput #5, session 26)."""
    if not text:
        return empty_memory_note(budget_tokens, omitted, missing_tools, larger_budget, reason)
    notes = []
    if omitted:
        notes.append(f"({_left_out(omitted)} left out for the budget of {budget_tokens} tokens; "
                     f"{larger_budget}.)")
    if missing_tools:
        notes.append(f"(Skills that fit but need tools you lack: {_needs(missing_tools)}.)")
    return "\n\n".join(notes)


def _left_out(omitted: int) -> str:
    return "1 relevant item was" if omitted == 1 else f"{omitted} relevant items were"


def _needs(missing_tools: dict[str, list[str]]) -> str:
    return "; ".join(f"{name} needs {', '.join(lacks)}" for name, lacks in missing_tools.items())
