"""Experience -> lesson helpers: outcome classes, key steps, what went wrong, and the contrast
between a successful and a failed attempt.
"""

from __future__ import annotations

import re
from typing import Sequence

from skillbank.distill.text import _clip, _finish
from skillbank.records import Experience, Step


def _outcome_class(exp: Experience) -> str:
    if exp.outcome == "success":
        return "success"
    if exp.outcome in ("failure", "partial"):
        return "failure"
    return "unknown"


def _step_label(step: Step, limit: int = 80) -> str:
    label = (step.action or "").strip() or (step.thought or "").strip()
    if not label:
        return ""
    arg = step.action_input
    if step.action and arg not in (None, "", {}, []):
        if isinstance(arg, dict):
            arg_text = ", ".join(f"{k}={v!r}" for k, v in list(arg.items())[:3])
        else:
            arg_text = str(arg)
        label = f"{label}({_clip(arg_text, 40)})"
    return _clip(label, limit)


#: The marker a long trajectory's cut leaves (transcript._fit_steps): no step of the method.
_OMITTED = re.compile(r"\[\d+ steps omitted\]")


def _user_turn(step: Step) -> bool:
    """A user's message in a conversation ("User: …", as transcript.py records it)."""
    return not step.action and (step.observation or "").startswith("User: ")


def _method_steps(steps: Sequence[Step]) -> list[Step]:
    """The steps that say how a run went, for a lesson to name as what worked.

    Not the answer (the adapters record it as the pseudo-action "final answer"), a reply the
    user answered in turn (an assistant text followed by the user's next message), the user's
    own messages or the marker of a cut: a chat run's success lesson read "When writing a
    migration for the users table, this worked: final answer.", said nothing, and was shown
    above the run itself (hunt-exp #2, session 27)."""
    out: list[Step] = []
    for number, step in enumerate(steps):
        if step.action == "final answer" or _user_turn(step):
            continue
        if not step.action:
            thought = (step.thought or "").strip()
            if _OMITTED.fullmatch(thought):
                continue
            if number + 1 < len(steps) and _user_turn(steps[number + 1]):
                continue  # a reply in a chat, not a step of the method
        out.append(step)
    return out


def _key_steps(steps: Sequence[Step], limit: int = 6) -> list[str]:
    out: list[str] = []
    for s in _method_steps(steps):
        label = _step_label(s)
        if label and (not out or out[-1] != label):
            out.append(label)
    if len(out) > limit:
        out = out[: limit - 2] + ["…"] + out[-1:]
    return out


_ERROR_RE = re.compile(
    r"error|exception|traceback|failed|failure|denied|not found|timed? ?out|invalid|refused|"
    r"cannot|can't|unable|forbidden|crash|panic",
    re.I,
)


def _what_went_wrong(exp: Experience) -> str:
    status = "it failed" if exp.outcome == "failure" else "it only partly worked"
    error = ""
    at = ""
    for step in reversed(exp.steps):
        if step.observation and _ERROR_RE.search(step.observation):
            error = step.observation
            at = step.action or ""
            break
    if not error and (exp.feedback or "").strip():
        # No step failed: the feedback says why. "it failed after final answer (OK, ship it)"
        # blamed the last step, which nothing said was wrong (learning-loop hunt #13).
        return status
    if not error:
        # Blame the last step of the method, never the answer itself: a failed chat run read
        # "it failed after final answer (Here is the migration…)" (review 1 #5, session 27).
        method = _method_steps(exp.steps)
        if not method:
            return status
        last = method[-1]
        error = last.observation or ""
        at = last.action or ""
    text = status
    if at:
        text += f" after {_clip(at, 60)}"
    if error:
        first_line = next((ln for ln in error.strip().splitlines() if _ERROR_RE.search(ln)), error.strip().splitlines()[0] if error.strip() else "")
        text += f" ({_clip(first_line, 200)})"
    return text


def _actions(exp: Experience) -> list[str]:
    out: list[str] = []
    for s in exp.steps:
        label = (s.action or "").strip()
        if label and label.lower() not in [o.lower() for o in out]:
            out.append(label)
    return out


_TASK_WORD = re.compile(r"[a-z0-9]+")
_TASK_FILLER = frozenset("a an the to of for in on at and or with from into this that my our "
                         "your their please".split())


def same_task(a: str, b: str) -> bool:
    """Whether two runs attempted the same task: three quarters of their content words shared,
    or one wording is the other plus one word ("Run the migrations" / "Run the database
    migrations").

    "import the refunds CSV" and "import the orders CSV" are not, so a comparison never tells
    of a success at a task that never succeeded. Nor is one wording inside a much longer one:
    "X on the staging server" failed for want of write access there, and compared with a
    success of plain "X" its lesson said the encoding fix made the staging import work. (A
    comparison names both wordings when they differ, so a one-word difference is said.)"""
    wa = {w for w in _TASK_WORD.findall((a or "").lower()) if w not in _TASK_FILLER}
    wb = {w for w in _TASK_WORD.findall((b or "").lower()) if w not in _TASK_FILLER}
    if not wa or not wb:
        return False
    if (wa <= wb or wb <= wa) and len(wa ^ wb) <= 1:
        return True
    return len(wa & wb) / len(wa | wb) >= 0.75


def compared(good: Experience, bad: Experience) -> str:
    """What a comparison compared, naming both tasks when their wordings differ."""
    if " ".join(good.task.split()).lower() == " ".join(bad.task.split()).lower():
        return f"compared a success and a failure of “{_clip(good.task, 120)}”"
    return (f"compared a success of “{_clip(good.task, 120)}” and a failure of "
            f"“{_clip(bad.task, 120)}”")


def opposite_run(exp: Experience, similar: Sequence[Experience]) -> Experience | None:
    """The first of `similar` that is a run of the same task with the opposite outcome (what a
    comparison lesson can compare `exp` with), if any."""
    mine = _outcome_class(exp)
    want = {"success": "failure", "failure": "success"}.get(mine)
    return next((o for o in similar if want and _outcome_class(o) == want
                 and same_task(exp.task, o.task) and o is not exp
                 and not (o.id and o.id == exp.id)), None)


def _contrast(kind: str, good: Experience, bad: Experience) -> str:
    """A comparison of a success and a failure of the same task, saying what it compared."""
    text = _contrast_steps(kind, good, bad)
    if text:
        text = f"{text.rstrip('.')} ({compared(good, bad)})."
    return text


def _contrast_steps(kind: str, good: Experience, bad: Experience) -> str:
    """The steps one run took and the other did not; nothing when either recorded no steps.

    A run recorded without steps (``record(task, outcome="success")``) says nothing of what it
    did: read as "did none", a success without steps made "the successful attempt skipped
    kubectl apply" — and an agent following it would skip the deployment."""
    good_actions, bad_actions = _actions(good), _actions(bad)
    if not good_actions or not bad_actions:
        return ""
    bad_set = {a.lower() for a in bad_actions}
    good_set = {a.lower() for a in good_actions}
    only_good = [a for a in good_actions if a.lower() not in bad_set][:4]
    only_bad = [a for a in bad_actions if a.lower() not in good_set][:4]
    if only_good or only_bad:
        text = f"When {kind}, the successful attempt"
        text += f" did {', '.join(only_good)}" if only_good else " skipped " + ", ".join(only_bad)
        if only_bad and only_good:
            text += f" where the failed attempt did {', '.join(only_bad)}"
        elif only_good:
            text += " which the failed attempt did not"
        if bad.feedback:
            text += f". The failure: {_clip(bad.feedback, 300)}"
        return _finish(text)
    if good.feedback or bad.feedback:
        text = f"When {kind}, the same steps both succeeded and failed"
        if bad.feedback:
            text += f"; the failure was: {_clip(bad.feedback, 300)}"
        if good.feedback:
            text += f"; the success: {_clip(good.feedback, 300)}"
        return _finish(text)
    return ""
