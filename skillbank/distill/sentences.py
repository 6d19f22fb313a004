"""Sentence splitting and protection of code, quotes and parentheses."""

from __future__ import annotations

import re


_ABBREVIATIONS = frozenset(
    "e.g i.e etc vs cf approx fig no mr mrs ms dr prof st jr sr inc ltd co eg ie al incl "
    "min max esp resp dept est ca ref sec".split()
)
_BULLET_RE = re.compile(r"^\s*(?:[-*•‣◦·+]|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)](?=\s))\s+")
_CODE_RE = re.compile(r"```.*?```|`[^`\n]*`", re.S)
_PH = "\u27e6{}\u27e7"  # ⟦n⟧
_PH_RE = re.compile("\u27e6(\\d+)\u27e7")


def _protect(text: str, *, quotes: bool = False) -> tuple[str, list[str]]:
    """Replace inline code (and optionally quotes and parentheses) by placeholders."""
    spans: list[str] = []

    def keep(m: re.Match[str]) -> str:
        spans.append(m.group(0))
        return _PH.format(len(spans) - 1)

    text = _CODE_RE.sub(keep, text)
    if quotes:
        text = re.sub(r"(?<![\w])'(?:[^'\n]|'(?=\w)){1,200}?'(?![\w])", keep, text)
        text = re.sub(r'"[^"\n]{1,200}?"|“[^”\n]{1,200}?”|‘[^’\n]{1,200}?’', keep, text)
        text = re.sub(r"\([^()\n]{1,200}\)", keep, text)
    return text, spans


def _restore(text: str, spans: list[str]) -> str:
    for _ in range(3):  # spans may nest (a quote inside parentheses)
        new = _PH_RE.sub(lambda m: spans[int(m.group(1))], text)
        if new == text:
            break
        text = new
    return text


#: A sentence end: its terminator, closing quotes or brackets, and what stands before the next
#: sentence. After ".", "!" or "?" a space, then any emoji or pictographic symbols ("SQL. 👍
#: Never log passwords." came out as one rule), then a sentence start (see `_starts`); after a
#: CJK "。！？" no space is needed ("...SQL。Never log passwords。" was one rule, hunt-i18n #6).
#: Invisible format characters (soft hyphen, zero-width space and joiners but the emoji one,
#: bidi marks, word joiner, BOM): passed over where a space is looked for, as control
#: characters are read as spaces (`_CONTROL_RE`); "main.\u200b Always…" was one sentence
#: (hunt-untrusted #6, session 27). Kept in the text: they belong to words and scripts.
_INVISIBLE = "\u00ad\u200b\u200c\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
_TERMINATOR_RE = re.compile(
    r"(?<=[^\s.])([.!?]+|[。！？]+)(['\"’”)\]」』]*)"
    rf"((?:\s|[{_INVISIBLE}])*"
    rf"(?:[\u2600-\u27bf\u2b00-\u2bff\U0001f000-\U0001faff\ufe0f\u200d]+(?:\s|[{_INVISIBLE}])*)*)"
    r"(?=(?:[\"'‘“(\[`\u27e6¿¡]|«\s?)?(\w))")


_LEADING_INVISIBLE = re.compile(f"[{_INVISIBLE}]*")


def _starts(m: re.Match[str]) -> bool:
    """Whether the terminator match `m` ends a sentence: a space after an ASCII terminator
    (invisible format characters before it aside), and a next sentence opening with a capital
    of any script ("Überprüfe", "Évite"), a digit, or a letter of a script without case
    (Chinese, Arabic ...)."""
    after = m.group(3)[_LEADING_INVISIBLE.match(m.group(3)).end():]
    if m.group(1)[0] in ".!?" and not after[:1].isspace():
        return False
    first = m.group(4)
    return first.isupper() or first.isdigit() or (first.isalpha() and not first.islower())


#: Control characters that are neither whitespace nor a line break (C0 but tab, line breaks and
#: separators; DEL; C1 but NEL). Read as a space before splitting: "Never force-push to
#: main.\x00 Always open a pull request." was one sentence (no space right after the "."), the
#: store then turned the NUL into a space, and the joined rule merged into "Never force-push to
#: main.", losing the second instruction (hunt-untrusted #6, session 27). A space is what the
#: store makes of them anyway (`guidelines.files._one_line`).
_CONTROL_RE = re.compile("[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f]")


def split_sentences(text: str) -> list[str]:
    """Split text into sentences; bullet and numbered lines are sentences of their own.

    Abbreviations ("e.g.", "i.e.", "vs."), decimals ("3.5%") and inline code are not split.
    Control characters count as spaces (see `_CONTROL_RE`).
    """
    if not text or not text.strip():
        return []
    protected, spans = _protect(_CONTROL_RE.sub(" ", text))
    # Group lines into blocks: every bullet starts a block, blank lines end one.
    blocks: list[str] = []
    current: list[str] = []
    for line in protected.splitlines():
        if not line.strip():
            if current:
                blocks.append(" ".join(current))
                current = []
            continue
        m = _BULLET_RE.match(line)
        if m:
            if current:
                blocks.append(" ".join(current))
            current = [line[m.end():].strip()]
        elif current and current[0].rstrip().endswith(":") and len(current) == 1:
            blocks.append(" ".join(current))  # a heading line like "Issues:" stands alone
            current = [line.strip()]
        else:
            current.append(line.strip())
    if current:
        blocks.append(" ".join(current))

    out: list[str] = []
    for block in blocks:
        start = 0
        for m in _TERMINATOR_RE.finditer(block):
            if not _starts(m):
                continue
            before = block[start:m.start(1)]
            last = re.findall(r"[\w.]+$", before)
            token = last[0].lower().rstrip(".") if last else ""
            if m.group(1) == "." and (
                token in _ABBREVIATIONS
                or (bool(last) and len(last[0]) == 1 and last[0].isupper())  # initials: "J. Smith"
            ):
                continue
            piece = block[start:m.end(2)].strip()
            if piece:
                out.append(piece)
            start = m.end()
        tail = block[start:].strip()
        if tail:
            out.append(tail)
    return [_restore(s, spans) for s in out if re.search(r"\w", _restore(s, spans))]
