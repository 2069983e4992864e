"""A fast path for the frontmatter most notes have: flat ``key: scalar`` lines and lists.

Indexing must read thousands of notes a second (docs/user-guide.md, "Benchmarks and the recall
evaluation"), and libyaml costs ~60 µs for a 14-key memory note. :func:`parse_simple` reads the
narrow subset vaultmem itself writes — ``key: value`` lines whose values are plain words, quoted
strings without escapes, decimal integers and floats, ``true``/``false``, ``YYYY-MM-DD[THH:MM:SS]``,
flow lists ``[a, "b"]`` and block lists ``- a`` of those — in ~20 µs, and returns exactly what the
YAML loader returns for it. For anything else (a comment, an escape, a multi-line or special scalar,
a tag, an anchor, nesting, a non-printable character, CRLF) it returns ``None`` and the caller uses
YAML. Whether a plain word is a string is decided by PyYAML's own resolver, never by a rule of ours;
a test checks the two paths agree on generated frontmatter and on every note of the real vaults.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from typing import Any

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")
_ITEM_LINE = re.compile(r"([ ]*)-[ ]+(.*?)[ ]*\Z")
_PLAIN = re.compile(r"[\w.][\w./-]*(?: [\w./-]+)*\Z")
_INT = re.compile(r"-?(?:0|[1-9][0-9]*)\Z")
_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]*)\.[0-9]+\Z")
# [0-9], not \d: YAML's timestamps are ASCII digits ("٢٠٢٦-١١-٢٠" is a string)
_DATETIME = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})\Z")
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})\Z")
_QUOTED = re.compile(r'"([^"\\]*)"\Z|\'([^\']*)\'\Z')
_FLOW_ITEM = re.compile(r'[ ]*("[^"\\]*"|\'[^\']*\'|[^,\[\]{}"\' ][^,\[\]{}"\']*?)[ ]*(,|\Z)')
_STR = "tag:yaml.org,2002:str"
# Plain scalars starting with a letter are strings unless YAML 1.1 reads them as bool or null.
_LETTER_SPECIAL = frozenset(("yes", "no", "true", "false", "on", "off", "null"))


class _NotSimple(Exception):
    pass


def _scalar(text: str) -> Any:
    first = text[:1]
    if first.isalpha():
        if text == "true":
            return True
        if text == "false":
            return False
        if _PLAIN.match(text) and text.lower() not in _LETTER_SPECIAL:
            return text
        raise _NotSimple
    if first.isdigit() or first == "-":
        if _INT.match(text):
            return int(text)
        if _FLOAT.match(text):
            return float(text)
        m = _DATETIME.match(text) or _DATE.match(text)
        if m:
            try:
                return (dt.datetime if m.re is _DATETIME else dt.date)(*map(int, m.groups()))
            except ValueError:
                raise _NotSimple from None
    if first in "\"'":
        m = _QUOTED.match(text)
        if m:
            return m.group(1) if m.group(1) is not None else m.group(2)
        raise _NotSimple
    if _PLAIN.match(text) and _resolve(text) == _STR:
        return text
    raise _NotSimple


@functools.cache
def _resolver() -> Any:
    import yaml  # only for a plain scalar that starts with neither a letter nor a digit

    return yaml.resolver.Resolver()


def _resolve(text: str) -> str:
    """PyYAML's implicit tag of the plain scalar ``text``."""
    import yaml

    return str(_resolver().resolve(yaml.ScalarNode, text, (True, False)))


def _flow(inner: str) -> list[Any]:
    if not inner.strip():
        return []
    items: list[Any] = []
    pos = 0
    while pos < len(inner):
        m = _FLOW_ITEM.match(inner, pos)
        if m is None:
            raise _NotSimple
        items.append(_scalar(m.group(1)))
        pos = m.end()
    return items


_LINE_CACHE: dict[str, tuple[str, Any]] = {}
"""``key: value`` line → (key, value) for lines already read; flow lists are stored as tuples
(each note gets its own list). The lines vaultmem writes repeat across notes (``type: memory``,
``status: active``, ``pinned: false``): a cold index reads most of them once."""
_LINE_CACHE_MAX = 4096


def _key_line(line: str) -> tuple[str, Any] | None:
    """(key, value) of a ``key: value`` line whose value is a scalar or a flow list, read once
    and cached; ``None`` when the line is not in the subset. ``key:`` alone is handled by the
    caller (it may open a block list)."""
    hit = _LINE_CACHE.get(line)
    if hit is not None:
        return hit
    key, colon, value = line.partition(":")
    if not colon or not _KEY.match(key) or value[0] != " ":
        return None
    value = value.strip(" ")
    if value[0] == "[":
        if value[-1] != "]":
            return None
        entry: tuple[str, Any] = (key, tuple(_flow(value[1:-1])))
    else:
        entry = (key, _scalar(value))
    if len(_LINE_CACHE) >= _LINE_CACHE_MAX:
        _LINE_CACHE.clear()
    _LINE_CACHE[line] = entry
    return entry


def parse_simple_frontmatter(yaml_text: str) -> dict[str, Any] | None:
    """``yaml_text`` as the YAML loader reads it, or ``None`` when it is outside the subset."""
    if "#" in yaml_text or "\\" in yaml_text or not yaml_text.replace("\n", "").isprintable():
        return None
    result: dict[str, Any] = {}
    pending: str | None = None  # a "key:" whose block list is being read
    indent = ""
    cached = _LINE_CACHE.get
    try:
        for line in yaml_text.split("\n"):
            hit = cached(line)
            if hit is not None:  # a "key: value" line read before (most lines of a memory)
                if pending is not None and not result[pending]:
                    result[pending] = None
                pending = None
                value = hit[1]
                result[hit[0]] = list(value) if value.__class__ is tuple else value
                continue
            if not line:
                continue
            if line[0] in " -":
                if not line.strip():
                    continue
                item = _ITEM_LINE.match(line)
                if item is None or pending is None:
                    return None
                items = result[pending]
                if items and item.group(1) != indent:
                    return None
                indent = item.group(1)
                items.append(_scalar(item.group(2)))
                continue
            if pending is not None and not result[pending]:
                result[pending] = None
            pending = None
            bare = line.rstrip(" ")
            if bare[-1] == ":" and ":" not in bare[:-1]:  # "key:" alone: a block list or null
                key = bare[:-1]
                if not _KEY.match(key):
                    return None
                result[key] = []
                pending = key
                continue
            entry = _key_line(line)
            if entry is None:
                return None
            key, value = entry
            result[key] = list(value) if value.__class__ is tuple else value
        if pending is not None and not result[pending]:
            result[pending] = None
    except _NotSimple:
        return None
    return result
