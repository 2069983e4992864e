"""Words of a text: tokens for FTS5 queries and content tokens for overlap (Mnemon; "Recall").

Pure, no I/O. Two uses:

- **Recall queries** (docs/user-guide.md, "Recall"). A person's query is never handed to FTS5 as
  syntax: it is cut into word tokens here and each token becomes a quoted FTS5 string (``"foo"``),
  so quotes, hyphens, ``:``, ``*``, parentheses and ``AND``/``OR``/``NOT``/``NEAR`` are searched as
  text and can never raise. FTS5's ``porter unicode61 remove_diacritics 2`` tokenizer then stems and
  folds each quoted token exactly as it did the notes.
- **Semantic auto-links** (Mnemon's "token overlap > 0.10"): the Jaccard overlap of two
  texts' *content tokens* — lower-cased words with English stopwords and one-letter ASCII
  tokens removed.

A token is a run of letters and digits (Unicode categories L* and N*, like FTS5's unicode61);
everything else separates tokens. Scripts written without spaces (Chinese, Japanese) form one
token per run, which is also what unicode61 does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

_WORD = re.compile(r"[^\W_]+")

_STOPWORD_TEXT = """
    a about above after again against all also am an and any are aren as at be because been
    before being below between both but by can cannot could couldn did didn do does doesn doing
    don down during each either else ever every few for from further had hadn has hasn have
    haven having he her here hers herself him himself his how however i if in into is isn it
    its itself just let me more most much must mustn my myself neither no nor not now of off
    on once only or other ought our ours ourselves out over own same shan she should shouldn so
    some such than that the their theirs them themselves then there these they this those
    through to too under until up upon us very was wasn we were weren what when where which
    while who whom whose why will with within without won would wouldn yet you your yours
    yourself yourselves ll re ve
"""
STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())
"""English function words: left out of content tokens and, when other words remain, of queries."""

MAX_QUERY_TERMS = 8
"""At most this many distinct terms of a query are searched (the first ones, in query order)."""


def word_tokens(text: str) -> list[str]:
    """Lower-cased (``casefold``) word tokens of ``text``, in order, duplicates kept."""
    return [m.group(0) for m in _WORD.finditer(text.casefold())]


def content_tokens(text: str) -> frozenset[str]:
    """Content tokens of ``text`` as a set: words minus :data:`STOPWORDS` and single ASCII chars."""
    return frozenset(
        t for t in word_tokens(text) if t not in STOPWORDS and not (len(t) == 1 and t.isascii())
    )


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    """|A ∩ B| / |A ∪ B| of two token collections, 0.0 when both are empty (Mnemon's overlap)."""
    set_a, set_b = set(a), set(b)
    union = len(set_a | set_b)
    return len(set_a & set_b) / union if union else 0.0


def query_terms(query: str, *, max_terms: int = MAX_QUERY_TERMS) -> tuple[str, ...]:
    """Distinct word tokens of ``query`` to search for, in order, at most ``max_terms``.

    Stopwords are dropped unless nothing else is left ("to be or not to be" is still searched).
    An empty tuple means there is nothing to search for (empty, or punctuation only).
    """
    words = list(dict.fromkeys(word_tokens(query)))
    content = [w for w in words if w not in STOPWORDS]
    return tuple((content or words)[:max_terms])


def fts_string(term: str) -> str:
    """``term`` as an FTS5 string literal: ``"term"`` with inner quotes doubled (never syntax)."""
    return '"' + term.replace('"', '""') + '"'


def fts_any(terms: Sequence[str]) -> str:
    """FTS5 expression matching rows that hold at least one of ``terms`` (``"a" OR "b"``)."""
    return " OR ".join(fts_string(t) for t in terms)


def fts_all(terms: Sequence[str]) -> str:
    """FTS5 expression matching rows that hold every one of ``terms`` (``"a" AND "b"``)."""
    return " AND ".join(fts_string(t) for t in terms)


def fts_in_columns(columns: Sequence[str], expression: str) -> str:
    """Restrict an FTS5 ``expression`` to ``columns``: ``{title tags} : (expression)``."""
    return "{" + " ".join(columns) + "} : (" + expression + ")"
