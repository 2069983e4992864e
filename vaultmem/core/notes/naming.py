"""Titles, file names and ids of new notes (docs/user-guide.md, "The memory note").

File name = title + ``.md``. Titles come from ``--title`` or the first words of the content with
the characters Obsidian forbids or that break links removed. Ids are ULIDs: sortable by creation
time, unique without coordination, never changed by moves or renames.
"""

from __future__ import annotations

import os
import re
import threading
import time
import unicodedata
from collections.abc import Sequence

FORBIDDEN_CHARS = '*"\\/<>:|?#^[]'
"""Characters Obsidian, Windows, Android and FAT refuse in file names, or that break links."""

MAX_TITLE_CHARS = 80
MAX_TITLE_BYTES = 180
"""UTF-8 bytes of a title: with a clash counter (`` 99999``), ``.md`` and the longest temporary or
set-aside name made from the note's name (≤ 60 bytes more), a file name stays within the 255
bytes every common file system allows."""

WINDOWS_RESERVED = frozenset(
    ["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"]
    + [f"{name}{n}" for name in ("COM", "LPT") for n in (*"123456789", "¹", "²", "³")]
)
"""Base names Windows refuses, whatever the extension (``CON.md``, ``com1.md``)."""

_FORBIDDEN = re.compile(r"%%|[" + re.escape(FORBIDDEN_CHARS) + r"]|[\x00-\x1f\x7f-\x9f]")
_SPACES = re.compile(r"\s+")
_SURROGATES = re.compile("[\ud800-\udfff]")
_OPENERS = {"(": ")", "[": "]", "{": "}", "«": "»", "“": "”", "‘": "’", "「": "」", "（": "）"}
_TRAILING = " ,;:-–—/&+.…!?'\"(「（{«“‘"


def new_id() -> str:
    """A new ULID string (26 Crockford base-32 characters), e.g. ``01JDGZ6Q4V7C2M9R0S8T5W3XYZ``.

    A ULID (the published format, github.com/ulid): 48 bits of Unix time in milliseconds, then
    80 random bits (``os.urandom``). Monotonic within a process, as the format's reference
    generator is: an id made in the same millisecond as the one before (or when the clock went
    back) is that one plus 1, so ids sort in the order they were made. A forked child starts
    afresh (it never continues its parent's sequence). Raises ``OverflowError`` past the year
    10889 or after 2^80 ids in one millisecond. About 2.5 µs (``str(ulid.ULID())``: 5)."""
    now = time.time_ns() // 1_000_000
    with _ID_LOCK:
        last_ms, last_random = _LAST_ID
        if now <= last_ms:
            now, randomness = last_ms, last_random + 1
        else:
            randomness = int.from_bytes(os.urandom(10), "big")
        if randomness >> 80 or now >> 48:
            raise OverflowError("no ULID is left for this millisecond")
        _LAST_ID[:] = [now, randomness]
    value = now << 80 | randomness  # 128 bits: 26 characters of 5 bits, 2 zero bits on top
    return "".join([_PAIRS[value >> shift & 1023] for shift in _SHIFTS])


_ID_LOCK = threading.Lock()
_LAST_ID = [0, 0]
"""The last id made in this process: [milliseconds, randomness]."""
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
"""Crockford's base-32 digits (no I, L, O, U)."""
_PAIRS = [a + b for a in _CROCKFORD for b in _CROCKFORD]
"""10 bits → their two base-32 digits."""
_SHIFTS = range(120, -1, -10)


def _forget_last_id() -> None:
    _LAST_ID[:] = [0, 0]


os.register_at_fork(after_in_child=_forget_last_id)


def _cut(text: str, max_chars: int, max_bytes: int) -> str:
    """``text`` cut to ``max_chars`` characters and ``max_bytes`` UTF-8 bytes, on a word boundary
    when one lies in the second half, never inside a character."""
    cut = text[:max_chars]
    encoded = cut.encode("utf-8")
    if len(encoded) > max_bytes:
        cut = encoded[:max_bytes].decode("utf-8", errors="ignore")
    if len(cut) < len(text) and " " in cut[len(cut) // 2 :]:
        cut = cut[: cut.rfind(" ")]
    # no dangling joiner, variation selector or combining mark at the cut
    while cut and unicodedata.category(cut[-1]) in ("Mn", "Me", "Cf"):
        cut = cut[:-1]
    return cut


def _trim_ends(text: str) -> str:
    """No leading dots or spaces (hidden files), no trailing dots or spaces (Windows)."""
    text = text.strip()
    while text.startswith(".") or text.endswith((".", " ")):
        text = text.lstrip(". ").rstrip(". ")
    return text


def safe_title(
    text: str, *, max_chars: int = MAX_TITLE_CHARS, max_bytes: int = MAX_TITLE_BYTES
) -> str:
    """``text`` as a title that is a safe file name and link target on every synced device.

    Removes ``* " \\ / < > : | ? # ^ [ ] %%``, control characters and lone surrogates, collapses
    whitespace, strips leading dots (hidden files) and trailing dots/spaces (Windows),
    NFC-normalises, cuts at ``max_chars`` characters and ``max_bytes`` UTF-8 bytes on a word
    boundary, and adds ``_`` to a name Windows reserves (``CON`` → ``CON_``, ``nul.txt`` →
    ``nul_.txt``). Returns ``""``
    when nothing is left; callers fall back.
    """
    if (  # printable ASCII, short, single spaces, nothing to remove: every step keeps it
        text.isascii()
        and len(text) <= min(max_chars, max_bytes)
        and text[:1] not in ". "
        and text[-1:] not in ". "
        and "  " not in text
        and text.isprintable()
        and _FORBIDDEN.search(text) is None
    ):
        stem = text.partition(".")[0]
        return text if stem.strip().upper() not in WINDOWS_RESERVED else _reserved(text)
    return _cleaned_title(text, max_chars, max_bytes)


def _cleaned_title(text: str, max_chars: int, max_bytes: int) -> str:
    """:func:`safe_title` step by step (what its shortcut for plain ASCII titles must equal)."""
    text = _SURROGATES.sub("", text)
    cleaned = _FORBIDDEN.sub(" ", unicodedata.normalize("NFC", text))
    cleaned = _trim_ends(_SPACES.sub(" ", cleaned))
    cleaned = _trim_ends(_cut(cleaned, max_chars, max_bytes))
    stem = cleaned.partition(".")[0]
    if stem.strip().upper() in WINDOWS_RESERVED:  # Windows ignores what follows the first dot
        return _reserved(cleaned)
    return cleaned


def _reserved(title: str) -> str:
    """``title``, whose part before the first dot Windows reserves, with a ``_`` added there."""
    stem, dot, rest = title.partition(".")
    return stem.rstrip() + "_" + dot + rest


def _outside_brackets(text: str) -> str:
    """``text`` up to its first bracket that is not closed in it (a cut must not end inside)."""
    if not any(opener in text for opener in _OPENERS):  # (most titles: no walk)
        return text
    stack: list[tuple[str, int]] = []
    for i, ch in enumerate(text):
        if ch in _OPENERS:
            stack.append((_OPENERS[ch], i))
        elif stack and ch == stack[-1][0]:
            stack.pop()
    return text[: stack[0][1]] if stack else text


_CLAUSE_END = tuple(",;:.!?…")
_DASHES = frozenset({"-", "–", "—", "--"})
_PHRASE_STARTS = frozenset(
    {
    "and", "or", "but", "nor", "so", "yet", "because", "although", "though", "while", "whereas",
    "unless", "until", "since", "that", "which", "who", "whom", "whose", "where", "when", "if",
    "than", "then", "as", "with", "without", "of", "to", "for", "from", "by", "at", "in", "on",
    "into", "onto", "about", "after", "before", "over", "under", "between", "during", "through",
    "via", "per", "the", "a", "an", "we", "i", "you", "he", "she", "they", "it",
    }
)
"""Words a phrase starts with (English conjunctions, prepositions, articles, pronouns): a
default title cut short ends before one of these rather than just after it."""
MIN_TITLE_WORDS = 3
"""A default title cut at a phrase boundary keeps at least this many words."""


def _phrase_end(words: Sequence[str], max_words: int) -> int:
    """How many of ``words`` (more than ``max_words``) a default title keeps: up to the last
    clause end (``,`` ``;`` ``:`` ``.`` ``!`` ``?`` or a dash) within ``max_words``, else up to
    the last word that starts a phrase ("and", "with", "the" …), else ``max_words`` — never
    fewer than :data:`MIN_TITLE_WORDS`."""
    window = list(words[: max_words + 1])
    for end in range(max_words, MIN_TITLE_WORDS - 1, -1):
        if window[end - 1].endswith(_CLAUSE_END) or window[end] in _DASHES:
            return end
    for end in range(max_words, MIN_TITLE_WORDS - 1, -1):
        if _starts_phrase(window[end]):
            while end > MIN_TITLE_WORDS and _starts_phrase(window[end - 1]):
                end -= 1  # "… today and | we talked": not "… today and"
            return end
    return max_words


def _starts_phrase(word: str) -> bool:
    return word.lower().strip(",;:.!?\"'()[]") in _PHRASE_STARTS


def _keeps(word: str) -> bool:
    """Whether a default title keeps ``word``: a dash, or a word with something left once made
    safe. A word starting with an ASCII letter or digit always keeps it (no step of
    :func:`safe_title` removes it), so most words skip the full clean-up."""
    first = word[0]
    return (first.isascii() and first.isalnum()) or bool(safe_title(word)) or word in _DASHES


def _first_words(line: str, enough: int) -> list[str]:
    """The words of ``line`` (its first 2,000 characters, list and heading marks dropped) a
    default title keeps (:func:`_keeps`), stopping once there are ``enough`` of them and one is
    not a dash: a title made from more of them would be the same (it is cut at a phrase end
    within the first ``enough - 1``)."""
    words: list[str] = []
    word_seen = False
    for word in line[:2000].lstrip("#>-*+ \t").split():
        first = word[0]
        if (first.isascii() and first.isalnum()) or _keeps(word):  # (the first test inlined)
            words.append(word)
            word_seen = word_seen or word not in _DASHES
            if word_seen and len(words) >= enough:
                break
    return words


def title_from_content(content: str, *, max_words: int = 8) -> str:
    """A title from the first words of the first non-empty line of ``content``.

    A line of more than ``max_words`` words is cut at a phrase boundary: after the last clause
    punctuation, else before the last word that starts a phrase ("and", "with", "the" …),
    keeping at least three words. The title never ends inside brackets or parentheses, nor on a
    dangling comma, dash or opening bracket: "Promised to send Bob the tart recipe (the one
    with pears)" gives "Promised to send Bob the tart recipe"; "Allergic to peanuts: avoid
    satay and pesto made with pine nuts" gives "Allergic to peanuts".
    """
    for line in content.splitlines():
        words = _first_words(line, max_words + 2)
        if not any(w not in _DASHES for w in words):
            continue
        cut = len(words) > max_words
        text = " ".join(words[: _phrase_end(words, max_words)] if cut else words)
        title = safe_title(text)
        if not title:
            continue
        if cut or len(title) < len(safe_title(text, max_chars=2000, max_bytes=8000)):
            trimmed = _outside_brackets(title).rstrip(_TRAILING)
            title = safe_title(trimmed) if trimmed else title
        return title
    return ""


def numbered(title: str, n: int) -> str:
    """``title`` with a counter for the n-th clash: ``Foo`` → ``Foo 2``."""
    return title if n <= 1 else f"{title} {n}"


def close_titles(ref: str, titles: Sequence[str], limit: int = 3) -> list[str]:
    """Up to ``limit`` titles close to ``ref`` for a "did you mean": titles holding ``ref`` as a
    word or prefix (case-insensitive) first, shortest first, then difflib's close matches."""
    key = ref.strip().removesuffix(".md").lower()
    if not key:
        return []
    unique = sorted(set(titles), key=lambda t: (len(t), t))
    holding = [
        t
        for t in unique
        if any(w.startswith(key) for w in t.lower().split()) or t.lower().startswith(key)
    ]
    folded = {t.lower(): t for t in unique}
    import difflib  # only for a note that was not found

    close = [folded[m] for m in difflib.get_close_matches(key, list(folded), n=limit, cutoff=0.6)]
    return list(dict.fromkeys([*holding, *close]))[:limit]
