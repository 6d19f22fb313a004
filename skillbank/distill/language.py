"""Critique sentences the model-free distiller cannot read: not English.

"Bitte gib Zitate immer im APA-Format an.", "Ajoute toujours un attribut aria-label aux
boutons ...", "No incluyas cláusulas de arbitraje sin consultar al cliente." were each
reported as "praise" and learnt as nothing (learning-loop hunt, session 20, defect 5). Without
a model the distiller cannot rewrite them, but the agent that reads the memory block can read
them: such a sentence is kept verbatim as a rule when it reads as an instruction (a modal,
"always"/"never", "please" or a common imperative of its language) and holds no praise word. Only German, French, Spanish, Italian, Portuguese and Dutch are recognised, by their
common function words (a sentence needs two of them, and more than it has English ones).

One is enough beside an instruction marker of its language or a change cue (hunt-i18n #5):
"Schreibe Funktionen mit höchstens 40 Zeilen.", "Ab sofort verwenden wir pytest statt
unittest." and "Désormais, utilise pytest." were reported as praise, with one function word
each. Text in a script the distiller does not read at all (Chinese, Cyrillic, Arabic ...) is
not taken for praise either: the memory says it was not read (``not_read``).
"""

from __future__ import annotations

import re

#: Frequent function words of six languages; none is an English word a critique would use.
_FOREIGN = frozenset("""
    der die das den dem des und nicht immer bitte ein eine einen keine kein mit für auf ist sind
    oder auch noch nur wenn dass sie wir ihr zu im vom zum zur beim aus bei nie niemals
    le la les des et pas toujours jamais un une du au aux avec pour sur est sont ou qui que ne
    dans ce cette ces vous nous leur sans
    el los las y siempre nunca por favor con para sin una uno del al es o que en su sus
    lo le se más
    il gli di che sempre mai con senza sono della delle degli nel nella nei non
    um uma sempre nunca não com sem para pelo pela dos das
    het een en niet altijd nooit met voor zonder van ook geen de
    ab sofort jetzt mehr statt anstatt sondern stets künftig désormais dorénavant maintenant
""".split())
_ENGLISH = frozenset("""
    the a an and or not never always to of in on for with without is are be it this that these
    those your you we our please use do don't make keep add by from at as if when than then
""".split())
#: Praise words that are praise at any length (review of session 20: "Das ist eine schöne
#: Arbeit, das gefällt mir." and "Me encanta el resumen, está muy claro y conciso." were kept
#: as rules, since praise was only looked for in sentences of eight words or fewer).
_PRAISE = frozenset("""
    danke dank merci gracias grazie obrigado obrigada bedankt super parfait parfaite perfecto
    perfecta perfekt perfetto perfetta bravo génial genial toll prima bello bella ótimo ótima
    excellent excellente excelente hervorragend schön schöne schönen gefällt gefallen encanta
    encantó complimenti belle beau magnifique gostei gostou adoro adoré mooi geweldig
    fantastisch fantastique fantástico fantastico prachtig felicidades parabéns
""".split())
#: Words that praise only in a short remark ("Muy bien!"); in a long one they qualify a rule.
_SHORT_PRAISE = frozenset("bien bueno buena gut gute sehr très muy molto goed".split())
#: Instruction markers: modal verbs, "always"/"never", "please", and common imperatives. A
#: sentence without one is a statement ("Wir sind letztes Jahr nach Berlin gezogen."), not a
#: rule (review of session 20).
_INSTRUCTION = frozenset("""
    bitte immer nie niemals muss müssen musst sollte sollten solltest darf dürft verwende
    verwenden vermeide vermeiden nutze schreib schreibe gib nenne achte
    toujours jamais faut doit doivent devez évite évitez utilise utilisez ajoute ajoutez mets
    mettez écris écrivez
    siempre nunca debe deben debes debemos evita evite usa usad utiliza utilice incluye
    sempre mai deve devono devi bisogna evitare usare utilizza aggiungi scrivi nunca devem
    use utilize inclua escreva
    nooit altijd moet moeten gebruik vermijd zorg schrijf voeg
    nutze benutze verwendet schreibt halte füge prüfe überprüfe teste lösche benenne
    écrire utiliser évitez garde gardez vérifie vérifiez
""".split())
#: Imperative openings: "Verwenden Sie ...", "N'utilise ...", "No incluyas ...", "Non usare
#: ...", "Não use ...", a French "-ez" form ("Ajoutez ...").
_IMPERATIVE_RE = re.compile(r"^(?:\w+en sie\b|n['’]|ne\b|no\s+\w+(?:as|es)\b|non\b|não\b|"
                            r"\w+ez\b|hay que\b|il faut\b)", re.I)
_WORD_RE = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?", re.UNICODE)


def not_english(sentence: str) -> bool:
    """Whether `sentence` reads as one of the languages above rather than English."""
    words = [w.lower() for w in _WORD_RE.findall(sentence)]
    foreign = sum(w in _FOREIGN for w in words)
    english = sum(w in _ENGLISH for w in words)
    if foreign > english and foreign >= 1 and len(words) >= 3 and _instruction(sentence, words):
        return True  # one function word, and an instruction of its language
    return len(words) >= 4 and foreign >= 2 and foreign > english


def _instruction(sentence: str, words: list[str]) -> bool:
    """An instruction marker of another language that is no English word ("use" is
    Portuguese too), a German or French change cue, or an imperative opening."""
    from skillbank.distill.foreign_changes import announces_change

    return bool((_INSTRUCTION - _ENGLISH) & set(words) or announces_change(sentence)
                or _IMPERATIVE_RE.match(sentence.strip()))


def not_read(text: str) -> bool:
    """Whether `text` is mostly in a script this distiller does not read at all (Chinese,
    Cyrillic, Arabic ...: ``skillbank.unread``), so nothing can be said of it but that."""
    from skillbank.unread import mostly_unread

    return mostly_unread(text)


def kept_verbatim(sentence: str) -> str | None:
    """A non-English sentence kept as its own rule, or None (English, praise, too short)."""
    from skillbank.distill.foreign_changes import announces_change

    text = re.sub(r"\s+", " ", sentence).strip()
    if not not_english(text):
        return None
    words = [w.lower() for w in _WORD_RE.findall(text)]
    if any(w in _PRAISE for w in words) or (
            any(w in _SHORT_PRAISE for w in words) and len(words) <= 8):
        return None  # "Super, danke, genau so!" is praise in any language, at any length
    if not (_INSTRUCTION & set(words) or _IMPERATIVE_RE.match(text)
            or announces_change(text)):
        return None  # a statement or a report, not an instruction
    return text if text.endswith((".", "!", "?")) else text + "."
