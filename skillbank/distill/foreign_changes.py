"""Corrections said in German or French: a change cue, a replacement, "never" against "always".

The supersession rules (``supersession.overrules``) read English: stances, verbs, "instead of",
"from now on". Users met "Bitte gib Zitate ab sofort immer im MLA-Format an." after "Bitte gib
Zitate immer im APA-Format an." merged into the APA rule ("a paraphrase ... sharing 'bitt', 'gib',
'imm', 'zitat'": German function words), "Désormais, écris toujours les messages de commit en
français." merged into "... en anglais.", and "Verwende niemals pytest für die Tests." kept
active beside "Verwende immer pytest für die Tests." (hunt-i18n #3). Here, by words alone, for
a rule written in German or French (``language``): a change cue ("ab sofort", "désormais" ...)
on the same matter, a "statt X" / "au lieu de X" naming what the older rule asks for, or the
opposite polarity on the same words, is a correction; the newer rule supersedes.
"""

from __future__ import annotations

import re

from skillbank.distill.language import _FOREIGN, not_english

#: Wording that announces a change: "from now on", "no longer", "no more". Not a bare "plus de":
#: in a written instruction it means "more" ("Écris plus de tests ...", write more tests), and
#: as a cue it retired a different trusted rule (review, session 22); "ne ... plus" says "no more".
CUE_RE = re.compile(
    r"\b(?:ab sofort|ab jetzt|von nun an|ab heute|künftig|zukünftig|nicht mehr|keine? \w+ mehr|"
    r"désormais|dorénavant|à partir de maintenant|à partir d['’]aujourd['’]hui|"
    r"ne \w+ plus|n['’]\w+ plus|plus jamais)\b", re.I)
#: "X statt Y", "X au lieu de Y": Y is what the rule no longer wants.
_INSTEAD_RE = re.compile(r"\b(?:statt|anstatt|anstelle von|au lieu d(?:e|u|es|['’])|"
                         r"plutôt que)\s*([^,;.!?]+)", re.I)
#: Negators and their opposites ("never" / "always").
_NEGATIONS = frozenset("nie niemals nicht kein keine keinen keinem keiner jamais ne pas aucun "
                       "aucune".split())
_ALWAYS = frozenset("immer stets toujours".split())
_CUE_WORDS = frozenset("ab sofort jetzt von nun an heute künftig zukünftig mehr désormais "
                       "dorénavant partir maintenant aujourd hui plus".split())
#: Not ``text_words``' word: a German or French compound keeps its hyphen ("MLA-Format" is one
#: matter, not "mla" and a "format" shared with "APA-Format"), and NFC has composed its accents.
_TOKEN = re.compile(r"[^\W\d_][\w-]*|\d+")


def _words(text: str) -> list[str]:
    return [w.lower() for w in _TOKEN.findall(text or "")]


def content(text: str) -> set[str]:
    """What a German or French rule is about: its words but function words, cue words,
    negators and "always"."""
    return {w for w in _words(text) if len(w) > 1 and w not in _FOREIGN
            and w not in _CUE_WORDS and w not in _NEGATIONS and w not in _ALWAYS}


def announces_change(text: str) -> str | None:
    """The German or French change cue in `text` ("ab sofort", "désormais" ...), or None."""
    found = CUE_RE.search(text or "")
    return found.group(0).lower() if found else None


def _polarity(text: str) -> int:
    words = set(_words(text))
    return -1 if words & _NEGATIONS else (1 if words & _ALWAYS else 0)


def foreign_overrule(new: str, old: str, said: str | None = None) -> str | None:
    """Why the German or French rule `new` (from sentence `said`) overrules `old`, or None."""
    if not (not_english(new) or announces_change(new)):
        return None
    mine, theirs = content(new), content(old)
    shared = mine & theirs
    for match in _INSTEAD_RE.finditer(new):
        replaced = content(match.group(1))
        if replaced and replaced <= theirs and not replaced <= content(new[:match.start()]):
            return (f"replacement: the newer rule takes something else instead of "
                    f"{', '.join(sorted(replaced))!r}, which the older one asks for")
    cue = announces_change(f"{said or ''} {new}")
    if cue and len(shared) >= 2 and 2 * len(shared) >= min(len(mine), len(theirs)):
        return f"a correction announced by {cue!r}, on {', '.join(sorted(shared))!r}"
    mine_pole, theirs_pole = _polarity(new), _polarity(old)
    if mine_pole * theirs_pole < 0 and shared and mine <= theirs and (
            len(shared) >= 2 or mine == theirs):
        return (f"opposite stance: the newer rule {'rejects' if mine_pole < 0 else 'asks for'} "
                f"{', '.join(sorted(shared))!r}, which the older one "
                f"{'asks for' if mine_pole < 0 else 'rejects'}")
    return None
