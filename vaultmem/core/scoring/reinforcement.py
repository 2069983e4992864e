"""Reinforcement: what ``touch``, ``observe`` and ``gc --keep`` change (user guide "Scores").

Each function is pure: it takes the current :class:`MemoryFields` and returns the frontmatter
changes to write (a ``dict`` of key → new value), so the store can apply them surgically and the
diff of a ``touch`` is exactly two lines.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from vaultmem.core.notes.fields import MAX_COUNT, MemoryFields

STRENGTH_BOOST = 0.1
"""Strength added by ``touch --boost`` and by a cross-domain ``observe`` (Mnemex)."""
STRENGTH_CAP = 2.0
CROSS_DOMAIN_JACCARD = 0.3
"""Below this tag overlap a use counts as cross-domain (Mnemex, "Cross-Domain Usage")."""
KEEP_USE_BONUS = 3
"""``gc --keep`` adds this many uses (Mnemon adds 3 to access_count)."""


def _boosted(strength: float) -> float:
    return round(min(STRENGTH_CAP, strength + STRENGTH_BOOST), 4)


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    """|A ∩ B| / |A ∪ B| of two collections (case-insensitive); 0.0 when both are empty."""
    set_a = {x.lower() for x in a}
    set_b = {x.lower() for x in b}
    union = set_a | set_b
    return len(set_a & set_b) / len(union) if union else 0.0


def touch_changes(
    fields: MemoryFields, now: dt.datetime, *, boost: bool = False
) -> dict[str, object]:
    """``touch``: ``last_used = now``, ``use_count += 1``; ``boost`` adds 0.1 strength (cap 2.0).

    ``last_used`` never moves backwards: a ``now`` earlier than the recorded ``last_used`` (or
    ``created``) counts the use but keeps the later time. A use on a later UTC day than the last
    one also adds 1 to ``use_days`` (written only then, so a same-day touch is a two-line diff);
    promotion needs uses on several days (docs/user-guide.md, "Promotion").
    """
    latest = max((t for t in (fields.last_used, fields.created) if t is not None), default=None)
    when = now if latest is None or now >= latest else latest
    changes: dict[str, object] = {
        "last_used": when,
        "use_count": min(fields.use_count + 1, MAX_COUNT),
    }
    if latest is not None and when.date() > latest.date():
        changes["use_days"] = min(fields.use_days + 1, MAX_COUNT)
    if boost:
        changes["strength"] = _boosted(fields.strength)
    return changes


def is_cross_domain(memory_tags: Iterable[str], context_tags: Iterable[str]) -> bool:
    """Mnemex: a use is cross-domain when both tag sets are non-empty and overlap < 0.3."""
    memory = list(memory_tags)
    context = list(context_tags)
    if not memory or not context:
        return False
    return jaccard(memory, context) < CROSS_DOMAIN_JACCARD


def observe_changes(
    fields: MemoryFields, now: dt.datetime, context_tags: Iterable[str]
) -> dict[str, object]:
    """``observe`` (Mnemex's ``reinforce_memory``): a touch plus review bookkeeping.

    ``review_count += 1``, ``last_review_at = now``; when :func:`is_cross_domain`, also
    ``cross_domain_count += 1`` and ``strength += 0.1`` (cap 2.0).
    """
    changes = touch_changes(fields, now)
    changes["review_count"] = min(fields.review_count + 1, MAX_COUNT)
    changes["last_review_at"] = now
    if is_cross_domain(fields.tags, context_tags):
        changes["cross_domain_count"] = fields.cross_domain_count + 1
        changes["strength"] = _boosted(fields.strength)
    return changes


def keep_changes(fields: MemoryFields) -> dict[str, object]:
    """``gc --keep`` (Mnemon's ``gc --keep``): ``use_count += 3``."""
    return {"use_count": min(fields.use_count + KEEP_USE_BONUS, MAX_COUNT)}
