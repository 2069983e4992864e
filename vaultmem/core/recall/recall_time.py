"""Time words in recall: a question that asks *when* is answered by a memory that says when.

Pure Python, no I/O. "When did Caroline go to the support group?" shares its content words with
every turn about the group; the turn that answers it says "I went to the support group
*yesterday*". When the query asks for a time (:func:`asks_when`: it starts with "when", "what
date/day/month/year/time", "how long ago" or "in which month/year"), candidates whose text
mentions one (:func:`mentions_time`: "yesterday", "last week", "ago", a month or weekday, a
year …) get :data:`TIME_LIFT` added to their fused score. English words only; other queries
are untouched.

Measured on LoCoMo's dev split (``benchmarks.locomo_eval``, default hybrid, 999 questions): a
lift of 0.05 / 0.1 / 0.2 / 0.3 raised R@5 by 0.2 / 0.3 / 0.4 / 0.5 points and R@10 by up to 0.4;
0.3 was chosen in four of five leave-one-conversation-out folds (held out: +0.4 R@5, +0.4 R@10,
+0.2 R@25).
"""

from __future__ import annotations

import re

TIME_LIFT = 0.3
"""Added to the fused score of a candidate mentioning a time when the query asks when (the
best keyword match's relevance alone is 1)."""

_ASKS_WHEN = re.compile(
    r"^\s*(when|what (?:date|day|month|year|time)|how long ago|in which (?:month|year))\b",
    re.IGNORECASE,
)
_MENTIONS_TIME = re.compile(
    r"\b(yesterday|today|tonight|tomorrow|ago|last|next|this (?:week|month|year|weekend|morning"
    r"|summer|spring|fall|winter)|weekend|week|month|year|years|january|february|march|april"
    r"|may|june|july|august|september|october|november|december|monday|tuesday|wednesday"
    r"|thursday|friday|saturday|sunday|\d{4}|recently|lately|since|just)\b",
    re.IGNORECASE,
)


def asks_when(query: str) -> bool:
    """Whether ``query`` asks for a time ("When did …", "What year …", "How long ago …")."""
    return _ASKS_WHEN.search(query) is not None


def mentions_time(text: str) -> bool:
    """Whether ``text`` mentions a time: a relative day or period ("yesterday", "last week",
    "ago"), a month or weekday name, or a four-digit number (a year)."""
    return _MENTIONS_TIME.search(text) is not None
