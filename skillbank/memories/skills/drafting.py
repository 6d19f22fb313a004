"""Write the text of a skill from a group of experiences: deterministic, or through a model.

`gather()` reads a group of experiences into `DraftMaterial`: its tasks (most typical first),
when-to-use phrases, the steps that worked (ranked by how many successful runs took them, then
success lessons), pitfalls (failure lessons and feedback) and checks (lesson sentences that
verify something). `RuleDrafter` turns that into a description and body sections with no model;
`LLMDrafter` asks any ``prompt -> text`` callable (a LangChain chat model, a LlamaIndex LLM, MCP
sampling) for the same JSON fields and falls back to the rules on any failure. The name and the
provenance section are always deterministic, so proposing twice names the same draft and every
claim in the body can be traced to an experience id.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence

from skillbank.memories.skills.grouping import central_order, tokens
from skillbank.memories.skills.skill_file import BIDI_CONTROL, MAX_DESCRIPTION, MAX_NAME, \
    validate_name
from skillbank.records import Experience
from skillbank.text_cut import cut_at_word

MAX_ITEMS = {"steps": 8, "pitfalls": 8, "checks": 5}
ITEM_CHARS = 300
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_CHECK = re.compile(r"\b(verify|verif\w+|check\w*|ensure|confirm\w*|validat\w+|make sure|"
                    r"double-check|test\w*|assert\w*)\b", re.I)
_FAIL = re.compile(r"\b(fail\w*|error\w*|wrong|incorrect\w*|forgot|missed|mistake\w*|avoid|"
                   r"never|don't|do not|instead of|invalid|non-existent|lower-scoring)\b", re.I)
_SUCCEED = re.compile(r"\b(succeed\w*|success\w*|worked|correct\w*|higher-scoring|properly)\b", re.I)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
log = logging.getLogger("skillbank.skills")
_warned: set[str] = set()  # kinds of model failure already logged (once per process)
_NAME_STOP = frozenset({"file", "all", "new", "given", "get", "one", "each", "every", "them",
                        "and", "list", "per", "via", "much", "since", "already", "went",
                        "involving", "respective", "maintaining", "day", "days", "year", "keep",
                        "enough", "least", "last", "today", "yesterday", "many", "any", "whose"})


@dataclass
class DraftMaterial:
    """What one group of experiences says, before any wording is chosen."""

    sources: list[str]
    tasks: list[str]
    when_to_use: list[str]
    steps: list[tuple[str, int]]  # (text, support)
    pitfalls: list[tuple[str, int]]
    checks: list[tuple[str, int]]
    successes: int
    failures: int
    keywords: list[str] = field(default_factory=list)
    outcomes: dict[str, str] = field(default_factory=dict)  # source id -> outcome


@dataclass
class DraftText:
    """The model-facing parts of a draft: description and the body's three lists."""

    description: str
    steps: list[str]
    pitfalls: list[str]
    checks: list[str]
    drafted_by: str = "rules"
    #: Why a model's text was not used (`LLMDrafter`'s fallback), None when it was or none
    #: was asked: the draft's `reason` says it.
    fallback_reason: str | None = None


class SkillDrafter(Protocol):
    def write(self, material: DraftMaterial) -> DraftText: ...


# ----------------------------------------------------------------------------- reading a group

def _clip(text: str, limit: int = ITEM_CHARS) -> str:
    text = re.sub(r"\s+", " ", _CONTROL.sub(" ", text)).strip()
    if len(text) <= limit:
        return text
    cut = text[:limit]
    stop = max(cut.rfind(". "), cut.rfind("; "))
    return (cut[:stop + 1] if stop > limit // 2 else cut_at_word(text, limit + 2, " …")).strip()


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(re.sub(r"\s+", " ", text or "")) if s.strip()]


def _step_text(step: Any) -> str:
    action = (step.action or "").strip()
    if action and step.action_input not in (None, "", {}, []):
        detail = step.action_input if isinstance(step.action_input, str) else str(step.action_input)
        action = f"{action} ({_clip(detail, 120)})"
    return action or (step.thought or "").strip()


class _Tally:
    """Items folded by word overlap (Jaccard >= 0.6), counted once per experience."""

    def __init__(self) -> None:
        self.items: list[tuple[str, set[str], set[int]]] = []

    def add(self, text: str, who: int) -> None:
        text = _clip(text)
        words = set(tokens(text))
        if not text or not words:
            return
        for i, (kept, kept_words, seen) in enumerate(self.items):
            if len(words & kept_words) / len(words | kept_words) >= 0.6:
                seen.add(who)
                if len(text) < len(kept):  # keep the tighter wording
                    self.items[i] = (text, kept_words | words, seen)
                return
        self.items.append((text, words, {who}))

    def ranked(self, limit: int) -> list[tuple[str, int]]:
        order = sorted(range(len(self.items)), key=lambda i: (-len(self.items[i][2]), i))
        return [(self.items[i][0], len(self.items[i][2])) for i in order[:limit]]


def gather(experiences: Sequence[Experience], members: Sequence[int],
           keywords: Sequence[str] = ()) -> DraftMaterial:
    """Read a group: steps ranked by successful runs, pitfalls from failures, checks."""
    ordered = central_order(experiences, members)
    group = [experiences[i] for i in ordered]
    steps, pitfalls, checks = _Tally(), _Tally(), _Tally()
    tasks: list[str] = []
    whens: Counter[str] = Counter()
    for who, exp in enumerate(group):
        if exp.task not in tasks:
            tasks.append(exp.task)
        for when in [exp.when_to_use] + [lesson.when_to_use for lesson in exp.lessons]:
            if when and when.strip():
                whens[_clip(when, 200)] += 1
        if exp.outcome == "success":
            for step in exp.steps:
                label = _step_text(step)
                if label:
                    steps.add(label, who)
        for lesson in exp.lessons:
            for sentence in sentences(lesson.text):
                if _CHECK.search(sentence) and not _FAIL.search(sentence):
                    checks.add(sentence, who)
                    continue
                if lesson.kind == "failure_trigger" or (
                        exp.outcome == "failure" and lesson.kind != "success_pattern"):
                    pitfalls.add(sentence, who)
                elif lesson.kind == "success_pattern" or exp.outcome == "success":
                    steps.add(sentence, who)
                elif _FAIL.search(sentence) and not _SUCCEED.search(sentence):
                    pitfalls.add(sentence, who)
                else:
                    steps.add(sentence, who)
        if exp.outcome == "failure" and exp.feedback:
            for sentence in sentences(exp.feedback)[:3]:
                pitfalls.add(sentence, who)
    when_order = sorted(whens, key=lambda w: (-whens[w], list(whens).index(w)))
    return DraftMaterial(
        sources=[e.id for e in group], tasks=tasks, when_to_use=when_order[:5],
        steps=steps.ranked(MAX_ITEMS["steps"]), pitfalls=pitfalls.ranked(MAX_ITEMS["pitfalls"]),
        checks=checks.ranked(MAX_ITEMS["checks"]),
        successes=sum(e.outcome == "success" for e in group),
        failures=sum(e.outcome == "failure" for e in group), keywords=list(keywords),
        outcomes={e.id: e.outcome for e in group})


# ------------------------------------------------------------------------------------- naming

def draft_name(material: DraftMaterial, taken: Callable[[str], bool], *,
               max_length: int = 48) -> str:
    """A spec-valid name from the group's most distinctive words, unique against `taken`.

    The three best keywords of the group, written as they appear in its most typical task and
    in that task's word order ("spotify-song-libraries"), so the name reads like the task.
    `max_length` bounds the words (a `-2` may follow): a draft named apart from its skill
    (`namespaced_name`) keeps room for its namespace tag.
    """
    typical = material.tasks[0] if material.tasks else ""
    surface: dict[str, tuple[int, str]] = {}
    for position, word in enumerate(re.findall(r"[a-z0-9]+", typical.lower())):
        for stem in tokens(word):
            surface.setdefault(stem, (position, word))
    picked = [w for w in material.keywords if w not in _NAME_STOP and w in surface][:3]
    if len(picked) < 2:
        picked += [w for w in tokens(typical) if w in surface and w not in picked
                   and w not in _NAME_STOP][:3 - len(picked)]
    words = [surface[w][1] for w in sorted(picked, key=lambda w: surface[w][0])]
    base = "-".join(words)[:max_length].strip("-") or "recurring-task"
    if validate_name(base):
        base = "recurring-task"
    name, n = base, 2
    while taken(name):
        name = f"{base}-{n}"
        n += 1
    return name


def namespace_tag(namespaces: Sequence[str], own: str) -> str:
    """What a draft's name adds to its skill's name for the namespaces it was drawn from: ""
    for the bank's own namespace alone (one person's bank: drafts are named as their skills,
    as always); else `<namespace>-<6 hex>` (one short plain namespace) or `ns-<6 hex>`, the hex
    a hash of the sorted namespaces, so two namespace sets never share a tag.

    Drafts live in one flat folder, one per name. Named by the skill alone, a draft of another
    namespace set took the name: a team's revision of a shared skill was "Nothing new to
    propose" while a contributor's pending revision of it existed (hunt-untrusted #2, session
    27), and a new draft's `-2` told the caller that a draft it may not read held the name
    (#3). A name tagged by its own namespaces depends on nothing outside them."""
    spaces = sorted(set(namespaces)) or [own]
    if spaces == [own]:
        return ""
    digest = hashlib.sha256("\n".join(spaces).encode("utf-8")).hexdigest()[:6]
    plain = len(spaces) == 1 and len(spaces[0]) <= 12 and not validate_name(spaces[0])
    return f"{spaces[0] if plain else 'ns'}-{digest}"


def namespaced_name(skill: str, tag: str) -> str:
    """The name of a draft of `skill` with namespace tag `tag` (`namespace_tag`); within the
    spec's 64 characters, so a long skill's name is cut to make room for the tag."""
    if not tag:
        return skill
    room = MAX_NAME - len(tag) - 1
    if len(skill) <= room:
        return f"{skill}-{tag}"
    # Cut, it keeps a hash of the whole name: two long skills sharing their first characters
    # got one revision name, the second written over the first (review2 #3, session 27).
    digest = hashlib.sha256(skill.encode("utf-8")).hexdigest()[:6]
    return f"{skill[:room - 7].rstrip('-')}-{digest}-{tag}"


# ------------------------------------------------------------------------------------ drafters

def _describe(material: DraftMaterial) -> str:
    example = _clip(material.tasks[0], 180) if material.tasks else "this kind of task"
    when = material.when_to_use[0] if material.when_to_use else ""
    what = (f"Steps that worked and pitfalls to avoid, learned from {len(material.sources)} "
            f"recorded runs of tasks like: {example.rstrip('.!?')}.")
    use = f" Use {when[0].lower() + when[1:]}" if when.lower().startswith("when") else (
        f" Use when {when[0].lower() + when[1:]}" if when else " Use for tasks of this kind")
    return _clip(what + use.rstrip(".") + ".", MAX_DESCRIPTION)


class RuleDrafter:
    """No model: the description from the most typical task and when-to-use, lists as ranked."""

    def write(self, material: DraftMaterial) -> DraftText:
        steps = [t for t, _ in material.steps]
        pitfalls = [t for t, _ in material.pitfalls]
        checks = [t for t, _ in material.checks]
        if not checks:
            checks = ["Before reporting success, re-read the task and confirm every part of it "
                      f"is done ({material.failures} of {len(material.sources)} recorded runs "
                      "of this kind failed)."]
        return DraftText(_describe(material), steps, pitfalls, checks)


DRAFT_PROMPT = """You write an Agent Skill (a SKILL.md) from an agent's recorded runs of one kind of task.

Tasks (most typical first):
{tasks}

When these tasks come up: {when}

Steps seen in successful runs (support = runs):
{steps}

Lessons from failures (support = runs):
{pitfalls}

Checks mentioned:
{checks}

Reply with JSON only:
{{"description": "what the skill does and when to use it, one or two sentences, at most 900 characters",
 "steps": ["imperative step", ...], "pitfalls": ["what to avoid and why", ...],
 "checks": ["how to verify the result", ...]}}
Use only what the runs above show; do not invent tools or facts."""


def _listing(items: Sequence[tuple[str, int]]) -> str:
    return "\n".join(f"- ({n}) {t}" for t, n in items) or "(none)"


def draft_prompt(material: DraftMaterial) -> str:
    return DRAFT_PROMPT.format(
        tasks="\n".join(f"- {_clip(t, 300)}" for t in material.tasks[:6]),
        when="; ".join(material.when_to_use[:3]) or "(not recorded)",
        steps=_listing(material.steps), pitfalls=_listing(material.pitfalls),
        checks=_listing(material.checks))


def _strings(value: Any, limit: int) -> list[str] | None:
    if not isinstance(value, list):
        return None
    out = [_clip(v) for v in value if isinstance(v, str) and v.strip()]
    return out[:limit]


class LLMDrafter:
    """Draft text through any ``prompt -> text`` callable; the rules on any failure.

    Build one from a model with `from_chat_model` (LangChain), `from_llamaindex` (LlamaIndex),
    or pass a sampling function (`complete`) directly. Each reply is checked: the description
    must be a non-empty string within the spec's 1024 characters, and the lists strings; a
    list that fails is taken from the rule drafter. A reply with no usable description (or a
    model that failed) is no model draft: the rules' draft is used whole, ``drafted_by
    "rules"``, and why is in the draft's `reason`, in `last_error` and, once per kind of
    failure, in a warning, as the LLM distiller says it. Any JSON object was labelled
    "model" before, every field of it the rules' (hunt-llama #5, session 35).
    """

    def __init__(self, complete: Callable[[str], Any], *, fallback: SkillDrafter | None = None) -> None:
        self.complete = complete
        self.fallback = fallback or RuleDrafter()
        self.last_error: str | None = None

    @classmethod
    def from_chat_model(cls, chat_model: Any, **kw: Any) -> "LLMDrafter":
        """Through a LangChain chat model: the reply's text, whatever its content's shape (a
        string, or content blocks as Anthropic and OpenAI's Responses API answer; those were
        read as no reply, every draft the rules', hunt-llm #5), by the adapters' `text_of`,
        as `ChatModelDistiller` reads it."""
        from skillbank.adapters._lc_common import text_of  # LangChain: a chat model brings it

        return cls(lambda prompt: text_of(chat_model.invoke(prompt)), **kw)

    @classmethod
    def from_llamaindex(cls, llm: Any, **kw: Any) -> "LLMDrafter":
        return cls(lambda prompt: llm.complete(prompt).text, **kw)

    @classmethod
    def from_distiller(cls, distiller: Any) -> "LLMDrafter | None":
        """The model behind an `LLMDistiller` (chat model, LlamaIndex, sampling), if any."""
        complete = getattr(distiller, "complete", None)
        return cls(complete) if callable(complete) else None

    def write(self, material: DraftMaterial) -> DraftText:
        # Imported here: `skillbank.distill` (the rule distiller, ~0.2 CPU-s) is not needed to
        # import the skill library, which every search imports (#27 cold start).
        from skillbank.distill.json_reply import extract_json

        self.last_error = None
        rules = self.fallback.write(material)
        try:
            reply = self.complete(draft_prompt(material))
            if not isinstance(reply, str):
                reply = getattr(reply, "content", None) or getattr(reply, "text", None)
            data = extract_json(reply) if isinstance(reply, str) else None
        except Exception as exc:  # noqa: BLE001 - any model failure means: use the rules
            return self._rules(rules, f"{type(exc).__name__}: {exc}")
        if not isinstance(data, dict):
            return self._rules(rules, "unparseable reply")
        description = data.get("description")
        if (not isinstance(description, str) or not description.strip()
                or len(description) > MAX_DESCRIPTION or _CONTROL.search(description)
                or BIDI_CONTROL.search(description)):  # refused on save (hunt-mcphttp #4b)
            return self._rules(rules, "no usable description in the reply")
        lists = {}
        for key in ("steps", "pitfalls", "checks"):
            got = _strings(data.get(key), MAX_ITEMS[key])
            lists[key] = got if got else getattr(rules, key)
        return DraftText(re.sub(r"\s+", " ", description).strip(), lists["steps"],
                         lists["pitfalls"], lists["checks"], drafted_by="model")

    def _rules(self, rules: DraftText, reason: str) -> DraftText:
        """The rules' draft, saying why the model's was not used (`last_error`, the draft's
        `fallback_reason`, a warning once per kind of failure)."""
        self.last_error = reason
        kind = reason.split(":", 1)[0]
        if kind not in _warned:
            _warned.add(kind)
            log.warning("skillbank: the model drafter failed: %s; the rules drafted the skill "
                        "(said once per kind of failure; each draft's drafted_by and reason "
                        "say who drafted it)", reason[:300])
        return dataclasses.replace(rules, drafted_by="rules", fallback_reason=reason[:300])


# ------------------------------------------------------------------------------------ rendering

def render_body(title: str, text: DraftText, material: DraftMaterial,
                outcomes: dict[str, str] | None = None) -> str:
    """The SKILL.md body: steps, pitfalls, checks, then provenance (always deterministic)."""
    outcomes = outcomes or {}
    lines = [f"# {title}", "",
             f"Drawn from {len(material.sources)} recorded runs ({material.successes} succeeded, "
             f"{material.failures} failed) of tasks such as:", ""]
    lines += [f"- {_clip(t, 200)}" for t in material.tasks[:3]]
    lines += ["", "## Steps that worked", ""]
    lines += [f"{i}. {s}" for i, s in enumerate(text.steps, 1)] or ["(no successful run recorded steps)"]
    lines += ["", "## Pitfalls", ""]
    lines += [f"- {p}" for p in text.pitfalls] or ["- (no failure recorded a lesson)"]
    lines += ["", "## Checks", ""]
    lines += [f"- {c}" for c in text.checks]
    lines += ["", "## Provenance", "",
              f"Drafted by skillbank ({text.drafted_by}) from these experiences:", ""]
    lines += [f"- {eid}" + (f" ({outcomes[eid]})" if eid in outcomes else "")
              for eid in material.sources]
    return "\n".join(lines) + "\n"
