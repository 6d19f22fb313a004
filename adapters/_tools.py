"""The memory tools every framework adapter offers, defined once and framework-free.

Each tool is a name, a description written for a model, a pydantic schema for its arguments and
a function over the `Skillbank` facade. The LangChain and LlamaIndex adapters wrap these same
definitions, so a model sees the same tools, arguments and replies whichever framework runs it.
Nothing here imports a framework, and nothing here holds memory logic: every call goes straight
to `Skillbank` (`bank.skills`, `bank.experiences`, `bank.guidelines`, `bank.context_for`,
`bank.rate`).

Also here: how a search hit becomes a retriever document (`hit_document`), shared by the
LangChain and LlamaIndex retrievers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Literal, Sequence

from pydantic import BaseModel, Field, ValidationError

from skillbank.errors import InvalidInputError, SkillbankError
from skillbank.memories.skills.skill_file import MAX_SERVED_NAME
from skillbank.tool_text import (NO_MEMORY, TOOL_DESCRIPTIONS, memory_reply, search_note,
                                 skill_search_note)

if TYPE_CHECKING:
    from skillbank.bank import Skillbank

__all__ = [
    "TOOL_NAMES",
    "COMPACT_TOOLS",
    "MIDDLEWARE_TOOLS",
    "ToolDef",
    "tool_defs",
    "select_tools",
    "run_tool",
    "validation_message",
    "hit_document",
    "search_hits",
    "normalise_kind",
    "RETRIEVER_KINDS",
    "NO_MEMORY",
]

Outcome = Literal["success", "failure", "partial", "unknown"]

# --------------------------------------------------------------------------------------------
# Argument schemas (what the model fills in)
# --------------------------------------------------------------------------------------------

_TASK = "The task or question, in plain words (what you are trying to do)."


class FindSkillsArgs(BaseModel):
    task: str = Field(min_length=1, max_length=4000, description=_TASK)
    k: int = Field(default=5, ge=1, le=20, description="How many skills to return at most.")


class LoadSkillArgs(BaseModel):
    # Any name find_skills can return: 200 refused a served skill's longer name (MCP refused
    # one over 64: hunt-routing #7, session 28; see MAX_SERVED_NAME).
    name: str = Field(min_length=1, max_length=MAX_SERVED_NAME,
                      description="The skill's name, exactly as find_skills returned it.")


class ReadSkillResourceArgs(BaseModel):
    name: str = Field(min_length=1, max_length=MAX_SERVED_NAME, description="The skill's name.")
    path: str = Field(min_length=1, max_length=1000,
                      description="A file path relative to the skill folder, as listed by "
                                  "load_skill under resources, e.g. 'references/api.md'.")


class SaveSkillArgs(BaseModel):
    name: str = Field(min_length=1, max_length=64,
                      description="Lowercase letters, digits and hyphens, e.g. 'deploy-to-fly'.")
    description: str = Field(min_length=1, max_length=1024,
                             description="What the skill does and when to use it, in one or two "
                                         "sentences.")
    body: str = Field(min_length=1, max_length=100_000,
                      description="Markdown instructions: steps, pitfalls, examples (no "
                                  "frontmatter).")


class MemoryContextArgs(BaseModel):
    task: str = Field(min_length=1, max_length=4000, description=_TASK)
    budget_tokens: int = Field(default=1500, ge=50, le=8000,
                               description="Most tokens the returned memory may take.")
    topic: str | None = Field(
        default=None, min_length=1, max_length=100,
        description="The task's topic if known, e.g. 'python' (optional): only its guidelines.")


class StepArgs(BaseModel):
    action: str | None = Field(default=None,
                               description="What was done: a tool name or a short description.")
    action_input: str | None = Field(default=None,
                                     description="The input of the action, as short text or JSON.")
    observation: str | None = Field(default=None, description="What came back or was seen.")
    thought: str | None = Field(default=None, description="Why the action was taken.")


class RecordExperienceArgs(BaseModel):
    task: str = Field(min_length=1, max_length=20_000, description="The task that was attempted.")
    outcome: Outcome = Field(default="unknown", description="How it went.")
    steps: list[StepArgs] = Field(default_factory=list, max_length=200,
                                  description="The main steps taken, in order.")
    feedback: str | None = Field(default=None, max_length=20_000,
                                 description="Feedback received on the result, if any.")
    lessons: list[str] = Field(default_factory=list, max_length=20,
                               description="What to remember next time, as short sentences.")
    when_to_use: str = Field(default="", max_length=2000,
                             description="The kind of future task this experience helps with.")
    tags: list[str] = Field(default_factory=list, max_length=32, description="Short labels.")
    score: float | None = Field(default=None, ge=0, le=1, description="A graded result, 0..1.")


class RecallExperiencesArgs(BaseModel):
    task: str = Field(min_length=1, max_length=4000, description=_TASK)
    k: int = Field(default=5, ge=1, le=20, description="How many experiences to return at most.")
    outcome: Outcome | None = Field(default=None,
                                    description="Only experiences with this outcome (optional).")


class LearnFromCritiqueArgs(BaseModel):
    critique: str = Field(min_length=1, max_length=20_000,
                          description="The critique or feedback, verbatim.")
    task: str | None = Field(default=None, max_length=20_000,
                             description="The task the critique is about (optional).")
    response: str | None = Field(default=None, max_length=20_000,
                                 description="The response that was critiqued (optional).")
    score: float | None = Field(default=None, description="A score that came with it (optional).")


class AddGuidelineArgs(BaseModel):
    text: str = Field(min_length=1, max_length=2000,
                      description="The rule, as one short imperative sentence.")
    topic: str | None = Field(default=None, max_length=100,
                              description="A short lowercase topic slug, e.g. 'python' (optional).")
    when_to_use: str = Field(default="", max_length=2000,
                             description="The kind of task the rule applies to.")
    replaces: str | None = Field(
        default=None, max_length=64,
        description="Id of an existing guideline this rule replaces (from a learn result's "
                    "'nearest' or search_guidelines); that rule is superseded, not merged.")


class SearchGuidelinesArgs(BaseModel):
    task: str = Field(min_length=1, max_length=4000, description=_TASK)
    k: int = Field(default=5, ge=1, le=20, description="How many guidelines to return at most.")
    topic: str | None = Field(default=None, max_length=100, description="Only this topic (optional).")


class RateMemoryArgs(BaseModel):
    id: str = Field(min_length=1, max_length=300,
                    description="The id shown in memory, e.g. 'gl-…', 'exp-…', 'lsn-…' or "
                                "'skill:<name>'.")
    helpful: bool = Field(description="True if the item helped with the task, false if it misled.")


class ProposeSkillsArgs(BaseModel):
    min_support: int = Field(default=3, ge=1, le=1000, strict=True,
                             description="Fewest recorded experiences of one kind of task to "
                                         "draft a skill from.")


# --------------------------------------------------------------------------------------------
# Rendering records for a model (compact, JSON-serialisable)
# --------------------------------------------------------------------------------------------

def _round(score: Any) -> Any:
    return round(float(score), 4) if isinstance(score, (int, float)) else score


def _skill_hit(hit: Any) -> dict[str, Any]:
    out = {"name": hit.name, "description": hit.record.description,
           "score": _round(hit.score), "why": hit.why}
    if getattr(hit.record, "trust", "own") != "own":  # skills/trust.py: say whose it is
        out.update(trust=hit.record.trust, notes=list(hit.record.notes))
    return out


def _experience(record: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"id": record.id, "kind": record.kind, "task": record.task,
                           "outcome": record.outcome}
    if record.lessons:
        out["lessons"] = [lesson.text for lesson in record.lessons]
    if record.when_to_use:
        out["when_to_use"] = record.when_to_use
    if record.feedback:
        out["feedback"] = record.feedback
    actions = [s.action for s in record.steps if s.action][:8]
    if actions:
        out["steps"] = actions
    if record.tags:
        out["tags"] = list(record.tags)
    return out


def _guideline(record: Any) -> dict[str, Any]:
    out = {"id": record.id, "text": record.text, "topic": record.topic, "status": record.status}
    if record.when_to_use:
        out["when_to_use"] = record.when_to_use
    return out


def _entry(entry: Any) -> dict[str, Any]:
    out = {"action": entry.action, "guideline_id": entry.guideline_id, "text": entry.text}
    for key in ("superseded_id", "detail", "nearest"):  # nearest: rules to replace or leave
        value = getattr(entry, key, None)
        if value:
            out[key] = value
    return out


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


# --------------------------------------------------------------------------------------------
# The tools
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Options:
    namespace: str | None
    trusted: bool
    #: The conversation the agent calling the tool is in (a LangChain thread id, a LlamaIndex
    #: session), or None when the face cannot know it: its open episode is never recalled.
    thread: str | None = None
    #: What the searching tools (search_guidelines, recall_experiences, memory_context) read:
    #: `namespace`, or None when the call's scope writes `namespace` and reads others too (a
    #: team block beside the user's: `reads=`, the middleware's instances), i.e. every
    #: namespace that scope reads, as the core reads for a scoped caller. Searched with
    #: `namespace` alone, a team rule the block showed was "No guideline applies" to the tools
    #: (hunt-lxteam #5, session 37).
    searched: str | None = None


def _find_skills(bank: "Skillbank", a: FindSkillsArgs, o: _Options) -> Any:
    hits = bank.skills.search(a.task, k=a.k)
    # The skills the tool gate left out, named as MCP's find_skills names them: without them
    # the reply said "No skill fits" when one did (hunt-disclose #1, session 25).
    missing = dict(getattr(hits, "missing_tools", None) or {})
    gated = {"missing_tools": missing} if missing else {}
    if not hits:
        return {"skills": [], **gated,
                "note": skill_search_note(False, missing, getattr(hits, "reason", ""))}
    return {"skills": [_skill_hit(h) for h in hits], **gated,
            "next": skill_search_note(True, missing)}


def _load_skill(bank: "Skillbank", a: LoadSkillArgs, o: _Options) -> Any:
    skill = bank.skills.load(a.name)
    out = {"name": skill.name, "description": skill.description, "body": skill.body,
           "resources": [r.path for r in skill.resources]}
    if skill.trust != "own":  # a body from a folder not fully trusted is data (skills/trust.py)
        from skillbank.memories.skills.trust import DATA_LABEL

        out.update(trust=skill.trust, notice=f"{skill.trust} {DATA_LABEL}",
                   notes=list(skill.notes))
    return out


def _read_skill_resource(bank: "Skillbank", a: ReadSkillResourceArgs, o: _Options) -> Any:
    return bank.skills.read_resource(a.name, a.path)


def _save_skill(bank: "Skillbank", a: SaveSkillArgs, o: _Options) -> Any:
    existed = a.name in bank.skills and bank.skills.load(a.name).writable
    skill = bank.skills.save(a.name, a.description, a.body)
    return {"name": skill.name, "action": "updated" if existed else "created",
            "description": skill.description}


def _memory_context(bank: "Skillbank", a: MemoryContextArgs, o: _Options) -> Any:
    # The caller's own open conversation is no past experience (the memory block leaves it out
    # too): the tools gave a thread its unfinished record back (hunt-threads #2, session 32).
    extra = {"thread": o.thread} if o.thread else {}
    ctx = bank.context_for(a.task, budget_tokens=a.budget_tokens, namespace=o.searched,
                           topic=a.topic, **extra)
    # Items over the budget, or skills the tool gate left out, are said so, with the block or
    # instead of it (hunt-disclose #2, session 25), as the CLI and MCP's `omitted` do.
    reply = memory_reply(ctx.text, ctx.budget_tokens, ctx.omitted, ctx.missing_tools,
                         "call memory_context again with a larger budget_tokens", ctx.reason)
    # What the recall may have missed (records a full disk keeps waiting), as MCP says it.
    return "\n\n".join(part for part in (reply, ctx.note) if part)


#: Said with a pending record, as the MCP tool says it (mcp_server/tools_memory.py): the agent
#: should not expect to recall it, nor tell the user it is remembered, before a person approves it.
PENDING_EXPERIENCE = ("Stored as pending: this tool set does not trust its caller, so the "
                      "experience is not recalled in trusted sessions until a person approves it "
                      "(the Experiences page of `skillbank ui`, or review_memory in a trusted "
                      "MCP session).")


def _record_experience(bank: "Skillbank", a: RecordExperienceArgs, o: _Options) -> Any:
    eid = bank.experiences.record(
        task=a.task, outcome=a.outcome,
        steps=[s.model_dump(exclude_none=True) for s in a.steps],
        feedback=a.feedback, lessons=list(a.lessons), when_to_use=a.when_to_use,
        tags=list(a.tags), score=a.score, namespace=o.namespace)
    if eid.status == "pending":  # an untrusted caller's record (which `get` shows reviewers only)
        return {"id": eid, "recorded": True, "status": "pending", "note": PENDING_EXPERIENCE}
    folded = getattr(eid, "note", "")  # the core's word when the run repeats a stored one
    return {"id": eid, "recorded": True, "status": "active", **({"note": folded} if folded else {})}


def _recall_experiences(bank: "Skillbank", a: RecallExperiencesArgs, o: _Options) -> Any:
    extra = {"exclude_thread": o.thread} if o.thread else {}
    hits = bank.experiences.recall(a.task, k=a.k, outcome=a.outcome, namespace=o.searched,
                                   **extra)
    # Why the answer may be short (an index outage answered by keyword, records a full disk
    # keeps waiting), as MCP's recall says it: the adapters dropped it (session 33).
    note = search_note(hits, "experience")
    if not hits:
        said = None if getattr(hits, "reason", "") else "No similar past experience."
        return {"experiences": [], "note": " ".join(filter(None, (said, note)))}
    return {"experiences": [{**_experience(h.record), "score": _round(h.score)} for h in hits],
            **({"note": note} if note else {})}


def _learn_from_critique(bank: "Skillbank", a: LearnFromCritiqueArgs, o: _Options) -> Any:
    report = bank.guidelines.learn(a.critique, task=a.task, response=a.response, score=a.score,
                                   source="agent", trusted=o.trusted, namespace=o.namespace)
    return {"entries": [_entry(e) for e in report.entries]}


def _add_guideline(bank: "Skillbank", a: AddGuidelineArgs, o: _Options) -> Any:
    entry = bank.guidelines.add(a.text, topic=a.topic, when_to_use=a.when_to_use,
                                source="agent", trusted=o.trusted, namespace=o.namespace,
                                replaces=a.replaces)
    return _entry(entry)


def _search_guidelines(bank: "Skillbank", a: SearchGuidelinesArgs, o: _Options) -> Any:
    hits = bank.guidelines.search(a.task, k=a.k, namespace=o.searched, topic=a.topic)
    note = search_note(hits, "guideline")
    if not hits:
        said = None if getattr(hits, "reason", "") else "No guideline applies."
        return {"guidelines": [], "note": " ".join(filter(None, (said, note)))}
    return {"guidelines": [{**_guideline(h.record), "score": _round(h.score)} for h in hits],
            **({"note": note} if note else {})}


def _rate_memory(bank: "Skillbank", a: RateMemoryArgs, o: _Options) -> Any:
    return bank.rate(a.id, helpful=a.helpful)


def _propose_skills(bank: "Skillbank", a: ProposeSkillsArgs, o: _Options) -> Any:
    drafts = bank.skills.propose(namespace=o.namespace, min_support=a.min_support,
                                 trusted=o.trusted)  # the bank refuses an untrusted caller
    return {"drafts": [{"name": d.name, "description": d.description, "revises": d.revises,
                        "sources": list(d.sources)} for d in drafts],
            "note": ("Drafts wait for a person: `skillbank skills adopt NAME` or `skillbank "
                     "skills discard NAME`. Nothing is routed to a draft until it is adopted.")
            if drafts else "No kind of task has recurred often enough to draft a skill."}


@dataclass(frozen=True)
class ToolDef:
    """One memory tool: what a model is told about it and the facade call behind it."""

    name: str
    description: str
    args_schema: type[BaseModel]
    fn: Callable[["Skillbank", Any, _Options], Any]


_DEFS: tuple[ToolDef, ...] = tuple(
    ToolDef(name, TOOL_DESCRIPTIONS[name], schema, fn) for name, schema, fn in (
        ("find_skills", FindSkillsArgs, _find_skills),
        ("load_skill", LoadSkillArgs, _load_skill),
        ("read_skill_resource", ReadSkillResourceArgs, _read_skill_resource),
        ("save_skill", SaveSkillArgs, _save_skill),
        ("memory_context", MemoryContextArgs, _memory_context),
        ("record_experience", RecordExperienceArgs, _record_experience),
        ("recall_experiences", RecallExperiencesArgs, _recall_experiences),
        ("learn_from_critique", LearnFromCritiqueArgs, _learn_from_critique),
        ("add_guideline", AddGuidelineArgs, _add_guideline),
        ("search_guidelines", SearchGuidelinesArgs, _search_guidelines),
        ("rate_memory", RateMemoryArgs, _rate_memory),
        ("propose_skills", ProposeSkillsArgs, _propose_skills),
    )
)

TOOL_NAMES: tuple[str, ...] = tuple(d.name for d in _DEFS)
_BY_NAME = {d.name: d for d in _DEFS}

#: The default tool set of a toolkit or tool spec: every tool's schema is sent with every model
#: call (all twelve cost ~2,600 tokens), so by default four that cover the loop: read the
#: memory for a task, open a skill, turn a correction into rules, say what helped.
COMPACT_TOOLS: tuple[str, ...] = ("memory_context", "load_skill", "learn_from_critique",
                                  "rate_memory")
#: The default for `SkillbankMiddleware(tools=True)`: the middleware already puts the memory
#: for the task in the prompt, so `find_skills` (look beyond it) replaces `memory_context`.
MIDDLEWARE_TOOLS: tuple[str, ...] = ("find_skills", "load_skill", "learn_from_critique",
                                     "rate_memory")


def tool_defs(include: Sequence[str] | None = None) -> list[ToolDef]:
    """The tool definitions, all of them or the named ones (in the order given)."""
    if include is None:
        return list(_DEFS)
    if isinstance(include, str):
        include = [include]
    unknown = [n for n in include if n not in _BY_NAME]
    if unknown:
        raise InvalidInputError(
            f"unknown skillbank tool(s) {unknown}; choose from {list(TOOL_NAMES)}")
    return [_BY_NAME[n] for n in dict.fromkeys(include)]


def select_tools(include: Sequence[str] | str | None = None,
                 default: Sequence[str] = COMPACT_TOOLS) -> list[ToolDef]:
    """The tools a face offers: `default` when `include` is None, every tool for ``"all"``,
    else the named ones."""
    if include is None:
        return tool_defs(list(default))
    if include == "all":
        return tool_defs(None)
    return tool_defs(include)


def validation_message(name: str, error: ValidationError) -> str:
    """A pydantic error as one sentence a model can act on."""
    parts = []
    for err in error.errors():
        where = ".".join(str(p) for p in err.get("loc", ())) or "arguments"
        if err.get("type") == "extra_forbidden":  # worded as the MCP server words it
            parts.append(f"{where} is not an argument of this tool (got {err.get('input')!r})")
            continue
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return f"invalid arguments for {name}: " + "; ".join(parts)


def _bank_namespace(bank: "Skillbank") -> str:
    """The bank's own namespace (its settings; a client bank has them too)."""
    settings = getattr(bank, "settings", None)
    return getattr(settings, "namespace", None) or "default"


def run_tool(bank: "Skillbank", name: str, arguments: dict[str, Any] | None = None, *,
             namespace: str | None = None, trusted: bool = True,
             reads: tuple[str, ...] = (), thread: str | None = None) -> str:
    """Validate `arguments`, call the facade, and return the reply as text for a model.

    Raises `skillbank.errors.SkillbankError` (bad arguments become `InvalidInputError`, storage
    that refused a write one naming its cause, `skillbank.storage_errors`); each adapter turns
    that into its framework's tool-error reply. `reads`: the namespaces the
    agent's other memory pieces show, read too (`skillbank.scope.narrowed`). `thread`: the
    conversation the calling agent is in, whose open episode memory_context and
    recall_experiences leave out (None: the face cannot know it).
    """
    definition = tool_defs([name])[0]
    try:
        args = definition.args_schema.model_validate(dict(arguments or {}))
    except ValidationError as exc:
        raise InvalidInputError(validation_message(name, exc)) from None
    from skillbank.scope import caller, narrowed, using

    # A tool set for one namespace (a fixed one, or a run's "{user_id}") acts as that
    # namespace's principal alone, unless a face already set the caller's scope. An untrusted
    # tool set without one runs every tool as the untrusted form of the caller's scope: not
    # only the tools that take `trusted=` (a save_skill or record_experience of a model-driven
    # agent would otherwise run as the bank's own trusted user).
    scope = narrowed(namespace, trusted=trusted, face="agent", reads=reads)
    if scope is None and not trusted:
        scope = caller(_bank_namespace(bank), False)
    try:
        with using(scope) as active:
            wide = (namespace is not None and active is not None
                    and active.namespace == namespace and bool(active.reads))
            result = definition.fn(bank, args, _Options(
                namespace=namespace, trusted=trusted, thread=thread or None,
                searched=None if wide else namespace))
    except ValidationError as exc:  # a record refused what the model sent
        raise InvalidInputError(validation_message(name, exc)) from None
    except SkillbankError as exc:
        # Written for the model that reads it: the Python calls the facade's messages name
        # ("find ids with bank.guidelines.search(task)") become tools or CLI commands.
        from skillbank.tool_text import tool_terms

        exc.args = (tool_terms(str(exc)), *exc.args[1:])
        raise
    except Exception as exc:  # a full disk, a read-only root, EFBIG, EACCES: the MCP's words
        from skillbank.storage_errors import tool_message

        refused = tool_message(exc, getattr(bank, "root", None))  # (hunt-disk #3, session 29:
        # a raw OSError left the tool)
        if refused is None:
            raise
        raise SkillbankError(refused) from exc
    return result if isinstance(result, str) else _json(result)


# Retriever documents are core (`skillbank.retrieved_documents`); re-exported for older imports.
from skillbank.retrieved_documents import (  # noqa: E402
    RETRIEVER_KINDS,
    hit_document,
    normalise_kind,
    retrieve,
    search_hits,
)
