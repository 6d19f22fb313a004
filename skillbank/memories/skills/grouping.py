"""Group experiences that recur for one kind of task (the first step of drafting a skill).

Deterministic and explainable: each experience becomes a TF-IDF vector of its task (weight 1)
and its `when_to_use` and lessons' `when_to_use` (weight 0.5), and groups are formed by
average-linkage agglomerative clustering on cosine similarity, stopping when the two closest
groups are less similar than `threshold`. Average linkage (not single) keeps one bridging
experience from chaining two kinds of task together; TF-IDF (not raw counts) keeps the words
every task shares ("my", "all", "file") from deciding anything.

Numbers, quoted strings and e-mail addresses are dropped before weighting: variants of one
kind of task differ exactly there ("rate songs 5 stars" / "rate songs 4 stars").
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from skillbank.records import Experience

#: Cosine at which two groups still count as one kind of task. A round value set before any
#: measurement; checked afterwards on the AppWorld dev set (groups of 3+ experiences: purity
#: 0.92 / 0.97 / 0.99 and 37 / 46 / 53 groups at 0.2 / 0.3 / 0.4) and left as it was.
DEFAULT_THRESHOLD = 0.3
MAX_EXPERIENCES = 2000  # newest first; the similarity matrix is n x n

_WORD = re.compile(r"[a-z][a-z0-9_+#.-]*[a-z0-9+#]|[a-z]")
_NOISE = re.compile(r"\"[^\"]*\"|'[^']*'|`[^`]*`|\S+@\S+|\b\d[\d.,:/-]*\b")
STOPWORDS = frozenset("""
a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had
has have having he her here hers him his how i if in into is it its itself just me more most my
myself no nor not now of off on once only or other our ours out over own same she should so some
such than that the their them then there these they this those through to too under until up
very was we were what when where which while who whom why will with would you your yours
yourself use used using when whenever task tasks need needs want make sure please like
""".split())


def tokens(text: str) -> list[str]:
    """Content words of a text (lower-cased, noise and stop words removed, plural -s cut)."""
    text = _NOISE.sub(" ", text.lower())
    out = []
    for word in _WORD.findall(text):
        word = word.strip(".-")
        if len(word) < 3 or word in STOPWORDS:
            continue
        if len(word) > 4 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        out.append(word)
    return out


def experience_text(exp: Experience) -> tuple[list[str], list[str]]:
    """(task words, when-to-use words) of one experience."""
    whens = [exp.when_to_use] + [lesson.when_to_use for lesson in exp.lessons]
    return tokens(exp.task), tokens(" ".join(w for w in whens if w))


@dataclass
class Group:
    """Experiences judged to be one kind of task; `members` are indexes into the input."""

    members: list[int]
    cohesion: float = 1.0  # mean pairwise cosine inside the group
    keywords: list[str] = field(default_factory=list)  # most distinctive words, best first


def _vectors(experiences: Sequence[Experience]) -> tuple[np.ndarray, list[str], np.ndarray]:
    docs = [experience_text(e) for e in experiences]
    vocab: dict[str, int] = {}
    for task_words, when_words in docs:
        for word in sorted(set(task_words) | set(when_words)):  # sorted: names never depend on hash order
            vocab.setdefault(word, len(vocab))
    n = len(docs)
    df = np.zeros(len(vocab))
    rows = np.zeros((n, len(vocab)))
    for i, (task_words, when_words) in enumerate(docs):
        counts: Counter[str] = Counter()
        for word in task_words:
            counts[word] += 1.0
        for word in when_words:
            counts[word] += 0.5
        for word, count in counts.items():
            rows[i, vocab[word]] = 1.0 + math.log(count) if count >= 1 else count
        for word in counts:
            df[vocab[word]] += 1
    idf = np.log((1 + n) / (1 + df)) + 1.0
    rows *= idf
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    words = [""] * len(vocab)
    for word, column in vocab.items():
        words[column] = word
    return rows / norms, words, idf


def group_experiences(experiences: Sequence[Experience], *,
                      threshold: float = DEFAULT_THRESHOLD) -> list[Group]:
    """Average-linkage groups of `experiences`, largest first (ties by first member)."""
    n = len(experiences)
    if n == 0:
        return []
    vectors, words, idf = _vectors(experiences)
    sim = vectors @ vectors.T
    np.fill_diagonal(sim, -np.inf)
    sizes = np.ones(n)
    alive = np.ones(n, dtype=bool)
    members: list[list[int]] = [[i] for i in range(n)]
    while alive.sum() > 1:
        masked = np.where(alive[:, None] & alive[None, :], sim, -np.inf)
        flat = int(np.argmax(masked))
        a, b = divmod(flat, n)
        if masked[a, b] < threshold:
            break
        a, b = min(a, b), max(a, b)
        merged = (sizes[a] * sim[a] + sizes[b] * sim[b]) / (sizes[a] + sizes[b])
        sim[a, :] = merged
        sim[:, a] = merged
        sim[a, a] = -np.inf
        sizes[a] += sizes[b]
        alive[b] = False
        sim[b, :] = -np.inf
        sim[:, b] = -np.inf
        members[a].extend(members[b])
        members[b] = []
    plain = vectors @ vectors.T
    groups = []
    for i in range(n):
        if not alive[i]:
            continue
        ids = sorted(members[i])
        block = plain[np.ix_(ids, ids)]
        k = len(ids)
        cohesion = 1.0 if k == 1 else float((block.sum() - k) / (k * (k - 1)))
        centroid = vectors[ids].mean(axis=0)
        order = np.argsort(-centroid, kind="stable")
        keywords = [words[j] for j in order[:8] if centroid[j] > 0]
        groups.append(Group(members=ids, cohesion=round(cohesion, 4), keywords=keywords))
    groups.sort(key=lambda g: (-len(g.members), g.members[0]))
    return groups


def central_order(experiences: Sequence[Experience], members: Sequence[int]) -> list[int]:
    """Members ordered by closeness to their group's centre (the most typical task first)."""
    if len(members) <= 1:
        return list(members)
    vectors, _, _ = _vectors([experiences[i] for i in members])
    centroid = vectors.mean(axis=0)
    scores = vectors @ centroid
    order = sorted(range(len(members)), key=lambda j: (-round(float(scores[j]), 9), members[j]))
    return [members[j] for j in order]
