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
import re
from typing import Any

import yaml

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")
_ITEM_LINE = re.compile(r"([ ]*)-[ ]+(.*?)[ ]*\Z")
_PLAIN = re.compile(r"[\w.][\w./-]*(?: [\w./-]+)*\Z")
_INT = re.compile(r"-?(?:0|[1-9][0-9]*)\Z")
_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]*)\.[0-9]+\Z")
_DATETIME = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)\Z")
_DATE = re.compile(r"(\d{4})-(\d\d)-(\d\d)\Z")
_QUOTED = re.compile(r'"([^"\\]*)"\Z|\'([^\']*)\'\Z')
_FLOW_ITEM = re.compile(r'[ ]*("[^"\\]*"|\'[^\']*\'|[^,\[\]{}"\' ][^,\[\]{}"\']*?)[ ]*(,|\Z)')
_RESOLVER = yaml.resolver.Resolver()
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
    resolved = _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    if _PLAIN.match(text) and resolved == _STR:
        return text
    raise _NotSimple


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


def parse_simple_frontmatter(yaml_text: str) -> dict[str, Any] | None:
    """``yaml_text`` as the YAML loader reads it, or ``None`` when it is outside the subset."""
    if "#" in yaml_text or "\\" in yaml_text or not yaml_text.replace("\n", "").isprintable():
        return None
    result: dict[str, Any] = {}
    pending: str | None = None  # a "key:" whose block list is being read
    indent = ""
    try:
        for line in yaml_text.split("\n"):
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
            key, colon, value = line.partition(":")
            if not colon or not _KEY.match(key) or (value and value[0] != " "):
                return None
            value = value.strip(" ")
            if not value:
                result[key] = []
                pending = key
            elif value[0] == "[":
                if value[-1] != "]":
                    return None
                result[key] = _flow(value[1:-1])
            else:
                result[key] = _scalar(value)
        if pending is not None and not result[pending]:
            result[pending] = None
    except _NotSimple:
        return None
    return result
