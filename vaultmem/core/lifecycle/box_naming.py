"""Names and ids of box and trace notes, derived from their members (docs/user-guide.md,
"Passes on two machines"): two machines sealing the same memories write the same names.

Pure functions of :mod:`vaultmem.core.lifecycle.boxes`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections import Counter
from collections.abc import Iterable

from vaultmem.core.links.link_resolution import fold_path
from vaultmem.core.notes.naming import safe_title

SLUG_TOPICS = 3
"""Topics named in a box or trace title."""
MAX_SLUG_CHARS = 60
_DASHES = re.compile(r"-{2,}")


def topic_slug(topics: Iterable[str]) -> str:
    """Up to 3 topics joined by ``-``: safe characters only (:func:`safe_title`), spaces as
    ``-``, at most 60 characters (a first topic longer than that is cut)."""
    slug, parts = "", 0
    for topic in topics:
        part = _DASHES.sub("-", safe_title(topic).replace(" ", "-")).strip("-")
        if not part:
            continue
        longer = f"{slug}-{part}" if slug else part
        if len(longer) > MAX_SLUG_CHARS:
            slug = slug or part[:MAX_SLUG_CHARS].rstrip("-")
            break
        slug, parts = longer, parts + 1
        if parts == SLUG_TOPICS:
            break
    return slug


def ranked_topics(topic_sets: Iterable[Iterable[str]]) -> list[str]:
    """Topics held by the most sets first, then alphabetically."""
    counts: Counter[str] = Counter()
    for topics in topic_sets:
        counts.update(set(topics))
    return sorted(counts, key=lambda t: (-counts[t], t))


_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
HASH_CHARS = 6
"""Characters of :func:`derived_id` that end a box or trace name (lower-cased)."""


def derived_id(kind: str, keys: Iterable[str]) -> str:
    """A 26-character Crockford base-32 id (a ULID's shape) from ``kind`` and the sorted ``keys``.

    SHA-256 of ``kind`` and the keys, so it depends on the set of keys only: two machines that
    seal the same members (keys = the members' ids) derive the same id and name.
    """
    digest = hashlib.sha256("\0".join([kind, *sorted(keys)]).encode("utf-8")).digest()
    number = int.from_bytes(digest[:17], "big")
    return "".join(_CROCKFORD[(number >> (5 * i)) & 31] for i in range(25, -1, -1))


def unique_name(base: str, taken: set[str]) -> str:
    """``base``, or ``base-2``, ``base-3``… : the first not in ``taken`` (folded); records it."""
    name, n = base, 1
    while fold_path(name) in taken:
        n += 1
        name = f"{base}-{n}"
    taken.add(fold_path(name))
    return name


def stem(name: str) -> str:
    return name[:-3] if name.lower().endswith(".md") else name


def utc_date(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, tz=dt.UTC).strftime("%Y-%m-%d")
