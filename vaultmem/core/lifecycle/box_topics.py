"""The topics of a memory, which decide where a box seals (Engram's Memory Boxes; user guide,
"Boxes are episodes"): its tags, or else its link targets and its most distinctive title words.

Pure functions of the memory's title, tags and link targets (:class:`TopicSource`: a
:class:`~vaultmem.core.lifecycle.boxes.StmMemory` is one); :mod:`vaultmem.core.lifecycle.boxes`
compares them as memories arrive.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Protocol

__all__ = [
    "STOPWORDS", "TITLE_WORDS", "TitleWordCounts", "TopicSource", "content_words", "link_topic",
    "memory_topics", "tag_topic", "title_word_counts",
]  # fmt: skip

TITLE_WORDS = 3
"""Title words that stand in for tags when a memory has none."""
_STOPWORD_TEXT = """
a about above after again against all also am an and any are as at be been before being below
between both but by can could did do does doing down during each few for from further had has
have having he her here hers him his how i if in into is it its itself just me more most my no nor
not now of off on once only or other our ours out over own same she should so some such than that
the their theirs them then there these they this those through to too under until up very was we
were what when where which while who whom why will with would you your yours
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
"""Words never taken as a title word topic (a word list reads better as text)."""
_WORD = re.compile(r"[^\W_]+")


class TopicSource(Protocol):
    """What the topics of a memory are made from."""

    @property
    def title(self) -> str: ...
    @property
    def tags(self) -> tuple[str, ...]: ...
    @property
    def link_targets(self) -> tuple[str, ...]: ...


def content_words(title: str) -> list[str]:
    """Lower-cased words of ``title`` worth a topic, in order, without repeats.

    Words are runs of letters and digits; stopwords, one-letter words and pure numbers are left out.
    """
    out: list[str] = []
    for word in _WORD.findall(title.lower()):
        if len(word) > 1 and not word.isdigit() and word not in STOPWORDS and word not in out:
            out.append(word)
    return out


def title_word_counts(memories: Iterable[TopicSource]) -> dict[str, int]:
    """Document frequency of title words: word → number of ``memories`` whose title has it."""
    counts: Counter[str] = Counter()
    for memory in memories:
        counts.update(content_words(memory.title))
    return dict(counts)


class TitleWordCounts(Mapping[str, int]):
    """:func:`title_word_counts` of ``memories``, counted when first asked: only a memory
    without tags asks (a replay of tagged memories never reads a title)."""

    def __init__(self, memories: Sequence[TopicSource]) -> None:
        self._memories = memories
        self._counts: dict[str, int] | None = None

    def _all(self) -> dict[str, int]:
        if self._counts is None:
            self._counts = title_word_counts(self._memories)
        return self._counts

    def __getitem__(self, word: str) -> int:
        return self._all()[word]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


def link_topic(target: str) -> str:
    """A link target as a topic: ``"Folder/Editor setup.md#UI|x"`` → ``"editor setup"``."""
    name = target.split("|", 1)[0].split("#", 1)[0].strip().rsplit("/", 1)[-1]
    if name.lower().endswith(".md"):
        name = name[:-3]
    return " ".join(name.split()).lower()


def tag_topic(tag: str) -> str:
    """A tag as a topic: ``"#Project/Alpha "`` → ``"project/alpha"``."""
    return tag.strip().lstrip("#").strip().lower()


def memory_topics(
    memory: TopicSource,
    document_frequency: Mapping[str, int] | None = None,
    *,
    title_words: int = TITLE_WORDS,
) -> frozenset[str]:
    """The topics of one memory (user guide "Lifecycle"): its tags, lower-cased, without ``#``.

    A memory without tags gets its link targets (:func:`link_topic`) and its ``title_words``
    most distinctive title words (:func:`content_words`): fewest titles holding them in
    ``document_frequency`` first (a word missing from it counts 0; ``None`` counts every word
    the same), then alphabetically. May be empty.
    """
    tags = {t for t in map(tag_topic, memory.tags) if t}
    if tags:
        return frozenset(tags)
    links = {t for t in map(link_topic, memory.link_targets) if t}
    df = {} if document_frequency is None else document_frequency
    words = sorted(content_words(memory.title), key=lambda w: (df.get(w, 0), w))
    return frozenset(links | set(words[: max(0, title_words)]))
