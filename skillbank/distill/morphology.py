"""Morphology: just enough to turn participles and gerunds back into base verbs."""

from __future__ import annotations

import re

from skillbank.distill.vocabulary import _VERBS


_IRREGULAR = {
    "written": "write", "wrote": "write", "given": "give", "gave": "give", "taken": "take",
    "took": "take", "made": "make", "done": "do", "did": "do", "kept": "keep", "shown": "show",
    "chosen": "choose", "chose": "choose", "broken": "break", "broke": "break", "left": "leave",
    "sent": "send", "spent": "spend", "told": "tell", "said": "say", "read": "read",
    "run": "run", "ran": "run", "set": "set", "split": "split", "cut": "cut", "put": "put",
    "brought": "bring", "built": "build", "thought": "think", "found": "find", "held": "hold",
    "led": "lead", "caught": "catch", "taught": "teach", "meant": "mean", "begun": "begin",
    "began": "begin", "drawn": "draw", "known": "know", "seen": "see", "gone": "go",
    "went": "go", "got": "get", "gotten": "get", "hidden": "hide", "hid": "hide",
    "struck": "strike", "stuck": "stick", "shrunk": "shrink", "shrank": "shrink",
    "spelt": "spell", "stood": "stand", "rewritten": "rewrite", "rewrote": "rewrite",
    "redone": "redo", "undone": "undo", "understood": "understand", "forgotten": "forget",
}


_VERB_PREFIXES = frozenset("re pre co double cross auto de un over under hard soft fact spell".split())


def _is_base_verb(word: str) -> bool:
    """A known base-form verb, including prefixed ones: 're-run', 'hard-code', 'double-check'."""
    w = word.lower()
    if w in _VERBS or w == "hardcode":
        return True
    head, _, last = w.rpartition("-")
    return bool(head) and head in _VERB_PREFIXES and (last in _VERBS or last == "code")


def _lemma(word: str) -> str | None:
    """Base form of a verb form (used, adding, splits, written) when it is a known verb."""
    w = word.lower().strip(".,;:!?'\"")
    if w in _VERBS:
        return w
    if w in _IRREGULAR:
        return _IRREGULAR[w] if _IRREGULAR[w] in _VERBS else None
    candidates: list[str] = []
    if w.endswith("ing") and len(w) > 4:
        stem = w[:-3]
        candidates += [stem, stem + "e"]
        if len(stem) > 2 and stem[-1] == stem[-2]:
            candidates.append(stem[:-1])
        if stem.endswith("y"):
            candidates.append(stem[:-1] + "ie")
    elif w.endswith("ied") and len(w) > 4:
        candidates.append(w[:-3] + "y")
    elif w.endswith("ed") and len(w) > 3:
        stem = w[:-2]
        candidates += [stem, w[:-1]]
        if len(stem) > 2 and stem[-1] == stem[-2]:
            candidates.append(stem[:-1])
    elif w.endswith("ies") and len(w) > 4:
        candidates.append(w[:-3] + "y")
    elif w.endswith("es") and len(w) > 3:
        candidates += [w[:-2], w[:-1]]
    elif w.endswith("s") and not w.endswith("ss") and len(w) > 2:
        candidates.append(w[:-1])
    for c in candidates:
        if c in _VERBS:
            return c
    return None


#: Verbs of more than one syllable stressed on the last one, which double their final
#: consonant as one-syllable verbs do ("committing", "debugging"); the rule below saw only
#: one-syllable verbs, so lessons read "When debuging the OOM kills" (hunt-expscale #2,
#: session 37). "visit", "open", "target", "edit" (stress before the last) are not here.
_FINAL_STRESS = frozenset(
    "acquit admit begin commit compel confer control debug defer deter embed emit equip excel "
    "expel forget format incur infer occur omit outfit patrol permit prefer propel quit rebel "
    "rebut recur refer regret remit repel submit transfer transmit unzip upset".split())

#: Prefixes before a known one-syllable verb that keeps its doubling: "rerun", "unset",
#: "unwrap", "recap" (a known verb after them: "render" is no "re" + "nder").
_SYLLABLE_PREFIXES = ("re", "un", "out", "up", "mis")


def _doubles(v: str) -> bool:
    """A one-syllable verb ending consonant-vowel-consonant ("run", "wrap", "set")."""
    vowels = "aeiou"
    return (
        len(v) >= 3
        and len(re.findall(r"[aeiou]+", v)) == 1
        and v[-1] not in vowels + "wxy"
        and v[-2] in vowels
        and v[-3] not in vowels
    )


def _gerund(verb: str) -> str:
    v = verb.lower()
    head, dash, v = v.rpartition("-")  # "re-run": the last part takes the ending
    if v.endswith("ie"):
        return head + dash + v[:-2] + "ying"
    if v.endswith("e") and not v.endswith(("ee", "ye", "oe")) and len(v) > 2:
        return head + dash + v[:-1] + "ing"
    if v in _FINAL_STRESS or _doubles(v) or any(
            v.startswith(p) and v[len(p):] in _VERBS and _doubles(v[len(p):])
            for p in _SYLLABLE_PREFIXES):
        return head + dash + v + v[-1] + "ing"
    return head + dash + v + "ing"
