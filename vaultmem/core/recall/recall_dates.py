"""Dates named in a recall query: "What did Maria donate in December 2023?", "Who did she have
dinner with on May 3, 2023?".

Pure Python, no I/O. A question that names a date asks about what was said then: a memory's
``created`` moment (the session date of an imported conversation turn, the day a memory was
saved) inside the date names it. :func:`dates_asked` turns the dates a query names into
half-open windows of POSIX timestamps; recall adds the memories created inside them to its
candidates and lifts them by :data:`DATE_LIFT` (docs/user-guide.md, "Recall").

What is read (English month names, case-insensitive, or their first three letters — "sept"
too — except "mar", which is a word; a bare month name needs "in", "during", "of", "since",
"early", "late" or "mid" before it, so "may" the verb is not a date):

- a day: ``7 July, 2023``, ``May 23, 2023``, ``3rd of June 2023``, ``2023-07-07``; without a year
  (``July 7``) the latest such day not after ``now``;
- a month: ``December 2023``; ``in June`` / ``during June`` / ``of June`` without a year: the
  latest June that began before ``now``;
- a year: ``in 2023``, ``during 2022``, ``since 2020`` (a year from 1900 to 2099).

A day's window is the day widened by :data:`DAY_PAD` on each side (a conversation on the 7th
about "yesterday" or "tomorrow"); a month's and a year's are exactly that month or year.
Relative words ("yesterday", "last week") are not dates here:
:mod:`vaultmem.core.recall.recall_time` lifts memories that mention a time.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from typing import NamedTuple

DATE_LIFT = 1.0
"""Added to the fused score of a candidate created inside a date the query names (the best
keyword match's relevance alone is 1)."""
DATE_CANDIDATES = 40
"""At most this many notes created inside the dates join the candidates (words first)."""
DAY_PAD = dt.timedelta(days=1)
"""A day's window reaches this far before and after the day."""

_MONTHS = {name: n for n, name in enumerate(
    ("january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"), 1)}
_MONTH = (r"(?P<m>january|february|march|april|may|june|july|august|september|october|november"
          r"|december|jan|feb|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?")
_DAY = r"(?P<d>[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?P<y>(?:19|20)\d\d)"
_MAY_NAME_A_DATE = re.compile(
    r"\d|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec", re.IGNORECASE
)
"""What every pattern of :func:`_patterns` needs (a digit, or a month's first letters), under
the same case rules: a query without it names no date, and the patterns are not compiled."""


@functools.cache
def _patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """The date patterns, most precise first, compiled when a query first may name a date
    (2 ms: most recalls name none, and a command's start-up does not pay for them)."""
    return tuple(
        (kind, re.compile(pattern, re.IGNORECASE)) for kind, pattern in (
            ("day", rf"\b{_YEAR}-(?P<mo>0[1-9]|1[0-2])-(?P<d>0[1-9]|[12]\d|3[01])\b"),
            ("day", rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b"),
            ("day", rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b"),
            ("month", rf"\b{_MONTH},?\s+{_YEAR}\b"),
            ("day", rf"\b{_DAY}\s+of\s+{_MONTH}(?!\w)"),
            ("day", rf"\b{_DAY}\s+{_MONTH}(?!\w)"),
            ("day", rf"\b{_MONTH}\s+{_DAY}\b(?!:)"),
            ("month", rf"\b(?:in|during|of|since|early|late|mid)[\s-]+{_MONTH}(?!\w)"),
            ("year", rf"\b(?:in|during|since)\s+{_YEAR}\b"),
        )
    )


class Window(NamedTuple):
    """A half-open span of POSIX timestamps (seconds, UTC): ``start ≤ t < end``."""

    start: float
    end: float

    def holds(self, moment: float | None) -> bool:
        return moment is not None and self.start <= moment < self.end


def _month_number(text: str) -> int | None:
    word = text.lower().rstrip(".")
    for name, number in _MONTHS.items():
        if name == word or (len(word) >= 3 and name.startswith(word)):
            return number
    return None


def _latest_year(month: int, day: int, now: dt.datetime) -> int:
    """The year of the latest ``month``/``day`` not after ``now`` (day 1 for a month)."""
    try:
        this_year = dt.datetime(now.year, month, day, tzinfo=dt.UTC)
    except ValueError:  # 29 February of a common year
        return now.year - 1
    return now.year if this_year <= now.astimezone(dt.UTC) else now.year - 1


def _window(kind: str, match: re.Match[str], now: dt.datetime) -> Window | None:
    parts = match.groupdict()
    month = int(parts["mo"]) if parts.get("mo") else _month_number(parts.get("m") or "")
    if kind != "year" and month is None:
        return None
    year = int(parts["y"]) if parts.get("y") else None
    try:
        if kind == "day":
            day = int(parts["d"])
            assert month is not None
            year = year if year is not None else _latest_year(month, day, now)
            start = dt.datetime(year, month, day, tzinfo=dt.UTC)
            return _span(start - DAY_PAD, start + dt.timedelta(days=1) + DAY_PAD)
        if kind == "month":
            assert month is not None
            year = year if year is not None else _latest_year(month, 1, now)
            start = dt.datetime(year, month, 1, tzinfo=dt.UTC)
            end = dt.datetime(year + month // 12, month % 12 + 1, 1, tzinfo=dt.UTC)
            return _span(start, end)
        assert year is not None
        start = dt.datetime(year, 1, 1, tzinfo=dt.UTC)
        return _span(start, dt.datetime(year + 1, 1, 1, tzinfo=dt.UTC))
    except (ValueError, OverflowError):  # "31 February 2023"; a day past year 9999
        return None


def _span(start: dt.datetime, end: dt.datetime) -> Window:
    return Window(start.timestamp(), end.timestamp())


def dates_asked(query: str, now: dt.datetime) -> tuple[Window, ...]:
    """The windows of the dates ``query`` names (see the module docstring), in query order.

    ``now`` (timezone-aware) places a date named without its year. Each stretch of the query
    counts once, the most precise reading first ("7 July, 2023" is a day, not also July 2023);
    an impossible day ("31 February 2023") is read as its month, or left out. ``()`` when the
    query names no date.
    """
    if _MAY_NAME_A_DATE.search(query) is None:
        return ()
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, Window]] = []
    for kind, pattern in _patterns():
        for match in pattern.finditer(query):
            lo, hi = match.span()
            if any(lo < b and a < hi for a, b in taken):
                continue
            window = _window(kind, match, now)
            if window is not None:
                taken.append((lo, hi))
                found.append((lo, window))
    return tuple(window for _, window in sorted(found))


def created_within(created: float | None, windows: tuple[Window, ...]) -> bool:
    """Whether the timestamp ``created`` falls inside one of ``windows``."""
    return any(w.holds(created) for w in windows)
