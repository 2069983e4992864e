"""A fast path for the frontmatter most notes have: flat ``key: scalar`` lines and lists.

Indexing must read thousands of notes a second (docs/user-guide.md, "Benchmarks and the recall
evaluation"), and libyaml costs ~60 µs for a 14-key memory note. :func:`parse_simple` reads the
narrow subset vaultmem itself writes — ``key: value`` lines whose values are plain words, quoted
strings without escapes, decimal integers and floats, ``true``/``false``, ``YYYY-MM-DD[THH:MM:SS]``,
flow lists ``[a, "b"]`` and block lists ``- a`` of those — in ~20 µs, and returns exactly what the
YAML loader returns for it. For anything else (a comment, an escape, a multi-line or special scalar,
a tag, an anchor, nesting, a non-printable character, CRLF) it returns ``None`` and the caller uses
YAML. Any other one-line plain scalar (a URL, ``1st level+``, ``Wood Nymph (Dryad)``) is a string
when none of YAML 1.1's implicit types claims it: :func:`implicit_tag` is PyYAML's own resolver
table (``yaml/resolver.py``), copied so that reading a note never imports YAML. Tests check the two
paths agree on generated frontmatter and on every note of the real vaults, and the copied table
against PyYAML's resolver.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from typing import Any

from vaultmem.core.lazy_patterns import lazy_pattern

# The rarer expressions compile on first use (core/lazy_patterns): ~0.3 ms a cold index saves
# when no note has a flow list or a template placeholder. Keys, numbers, dates, quoted strings
# and block list items are checked with string methods: compiling their six expressions cost
# every process that reads a note about 0.5 ms, more than a cold index of 100 notes spends
# using them.
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_KEY_FIRSTS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")


def _is_key(text: str) -> bool:
    """``[A-Za-z_][A-Za-z0-9_-]*``: a key the fast path reads."""
    return text[:1] in _KEY_FIRSTS and _KEY_CHARS.issuperset(text)


def _is_int(text: str) -> bool:
    """``-?(?:0|[1-9][0-9]*)``: an integer YAML and the fast path read alike."""
    digits = text[1:] if text[:1] == "-" else text
    return digits.isascii() and digits.isdigit() and (digits[0] != "0" or len(digits) == 1)


def _is_float(text: str) -> bool:
    """``-?(?:0|[1-9][0-9]*)\\.[0-9]+``."""
    whole, dot, fraction = text.partition(".")
    return bool(dot) and _is_int(whole) and fraction.isascii() and fraction.isdigit()


_STAMP = lazy_pattern(
    globals(), "_STAMP", r"[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}:[0-9]{2})?\Z"
)


def _timestamp(text: str) -> dt.date | None:
    """The date of ``YYYY-MM-DD`` or the datetime of ``YYYY-MM-DDTHH:MM:SS``, else ``None``.
    Raises :class:`_NotSimple` for one of that shape that is no date (``2023-02-30``).

    ASCII digits only, not ``\\d``: YAML's timestamps are ASCII ("٢٠٢٦-١١-٢٠" is a string). The
    shape is checked by one expression (a third of the instructions of taking the text apart
    with string methods) and the value made by ``fromisoformat``: 0.65 µs for a datetime,
    against 1.25 µs for taking the six numbers apart; every memory has two of them."""
    shape = _STAMP.match(text)
    if shape is None:
        return None
    try:
        if shape.group(1) is None:
            return dt.date.fromisoformat(text)
        return dt.datetime.fromisoformat(text)
    except ValueError:  # month 13, February 30th, year 0
        raise _NotSimple from None


def _list_item(line: str) -> tuple[str, str] | None:
    """``([ ]*)-[ ]+(.*?)[ ]*``: the indent and the text of a block list item, else ``None``."""
    text = line.lstrip(" ")
    if not text.startswith("- "):
        return None
    return line[: len(line) - len(text)], text[2:].strip(" ")


def _unquoted(text: str) -> str | None:
    """The inside of ``"…"`` without ``"`` or ``\\``, or of ``'…'`` without ``'``; else ``None``
    (an escape or a doubled quote is left to YAML)."""
    quote = text[:1]
    if len(text) < 2 or text[-1] != quote or quote not in ("'", '"'):
        return None
    inner = text[1:-1]
    if quote == '"':
        return inner if '"' not in inner and "\\" not in inner else None
    return inner if "'" not in inner else None


_FLOW_ITEM = lazy_pattern(
    globals(), "_FLOW_ITEM", r'[ ]*("[^"\\]*"|\'[^\']*\'|[^,\[\]{}"\' ][^,\[\]{}]*?)[ ]*(,|\Z)'
)
STR_TAG = "tag:yaml.org,2002:str"
"""YAML's tag of text (what :func:`implicit_tag` answers for a plain string)."""


class _NotSimple(Exception):
    pass


def _scalar(text: str, flow: bool = False) -> Any:
    """The value of the one-line scalar ``text`` (spaces around it removed); ``flow``: an item of
    a flow list. Raises :class:`_NotSimple` when YAML might read it as anything else."""
    first = text[:1]
    if text == "true":
        return True
    if text == "false":
        return False
    if (first.isdigit() or first == "-") and _NUMBER_CHARS.issuperset(text):
        # (a character no number or date holds, as in most ids, rules all four out at once)
        if text[4:5] == "-":  # the shape of a date (never of a number): most such scalars
            stamp = _timestamp(text)
            if stamp is not None:
                return stamp
        elif _is_int(text):
            return int(text)
        elif _is_float(text):
            return float(text)
    elif first in "\"'":
        inner = _unquoted(text)
        if inner is not None:
            return inner
        raise _NotSimple
    if _plain_text(text, flow) and implicit_tag(text) == STR_TAG:
        return text
    raise _NotSimple


PLAIN_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
"""Characters that cannot start a plain scalar (YAML 1.1, section 4.2; ``-``, ``?`` and ``:``
can when a non-space follows, which this path leaves to YAML)."""


def _plain_text(text: str, flow: bool) -> bool:
    """Is ``text`` one plain scalar that libyaml and PyYAML read alike?

    Not when it starts with an indicator, holds ``": "`` or ends in ``:`` (a mapping), or, in a
    flow list, holds ``?`` (PyYAML ends the scalar there, libyaml does not). The caller has
    ruled out ``#``, ``\\``, tabs, line breaks and non-printable characters for the whole block,
    and a flow item holds none of ``,[]{}``.
    """
    if not text or text[0] in PLAIN_INDICATORS or ": " in text or text[-1] == ":":
        return False
    return not (flow and "?" in text)


_Resolvers = dict[str, list[tuple[str, re.Pattern[str]]]]


@functools.cache
def _implicit_resolvers() -> _Resolvers:
    """PyYAML's implicit resolvers (``yaml/resolver.py``: the YAML 1.1 types) by first character,
    in PyYAML's order; compiled on first use (most notes never need them)."""
    table = [
        ("bool", r"""^(?:yes|Yes|YES|no|No|NO
                    |true|True|TRUE|false|False|FALSE
                    |on|On|ON|off|Off|OFF)$""", "yYnNtTfFoO"),
        ("float", r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
                    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
                    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
                    |[-+]?\.(?:inf|Inf|INF)
                    |\.(?:nan|NaN|NAN))$""", "-+0123456789."),
        ("int", r"""^(?:[-+]?0b[0-1_]+
                    |[-+]?0[0-7_]+
                    |[-+]?(?:0|[1-9][0-9_]*)
                    |[-+]?0x[0-9a-fA-F_]+
                    |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$""", "-+0123456789"),
        ("merge", r"^(?:<<)$", "<"),
        ("null", r"""^(?: ~
                    |null|Null|NULL
                    | )$""", "~nN"),
        ("timestamp", r"""^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]
                    |[0-9][0-9][0-9][0-9] -[0-9][0-9]? -[0-9][0-9]?
                     (?:[Tt]|[ \t]+)[0-9][0-9]?
                     :[0-9][0-9] :[0-9][0-9] (?:\.[0-9]*)?
                     (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$""", "0123456789"),
        ("value", r"^(?:=)$", "="),
        ("yaml", r"^(?:!|&|\*)$", "!&*"),  # never a plain scalar: kept so the table is whole
    ]  # fmt: skip
    resolvers: _Resolvers = {}
    for name, pattern, firsts in table:
        compiled = re.compile(pattern, re.X)
        for first in firsts:
            resolvers.setdefault(first, []).append((f"tag:yaml.org,2002:{name}", compiled))
    return resolvers


def implicit_tag(text: str) -> str:
    """The tag YAML 1.1 gives the non-empty plain scalar ``text``: ``tag:yaml.org,2002:str``
    unless one of PyYAML's implicit resolvers claims it, exactly as
    ``yaml.resolver.Resolver().resolve(ScalarNode, text, (True, False))`` answers."""
    if text[-1] != "\n":  # (the patterns end in "$", which also matches before a final "\n")
        word = _WORD_TAGS.get(text)
        if word is not None:
            return word
        if text[0] not in _TABLE_FIRSTS:  # a letter, "(", "/" ...: only words are bool or null
            return STR_TAG
        if text[0] in _NUMBER_FIRSTS and not _NUMBER_CHARS.issuperset(text):
            return STR_TAG  # "1st level+": a letter no number or timestamp pattern holds
    for tag, pattern in _implicit_resolvers().get(text[0], ()):
        if pattern.match(text):
            return tag
    return STR_TAG


_WORD_TAGS = {
    **dict.fromkeys(
        ["yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE",
         "on", "On", "ON", "off", "Off", "OFF"],
        "tag:yaml.org,2002:bool",
    ),
    **dict.fromkeys(["null", "Null", "NULL"], "tag:yaml.org,2002:null"),
}  # fmt: skip
"""The words the bool and null resolvers match: every scalar they claim that starts with a
letter (so most plain scalars need none of the compiled patterns)."""
_TABLE_FIRSTS = frozenset("-+0123456789.<~=!&*")
"""First characters of the other resolvers' patterns."""
_NUMBER_FIRSTS = frozenset("-+0123456789.")
_NUMBER_CHARS = frozenset("0123456789+-._: \txabcdefABCDEFTtZinfINFN")
"""Every character the float, int and timestamp patterns can match (hex digits, ``0b``/``0x``,
exponents, ``.inf``/``.nan``, ``T``/``Z`` and blanks of timestamps)."""


def _flow(inner: str) -> list[Any]:
    if not inner.strip():
        return []
    items: list[Any] = []
    pos = 0
    while pos < len(inner):
        m = _FLOW_ITEM.match(inner, pos)
        if m is None:
            raise _NotSimple
        items.append(_scalar(m.group(1), flow=True))
        pos = m.end()
    return items


_LINE_CACHE: dict[str, tuple[str, Any]] = {}
"""``key: value`` line → (key, value) for lines read more than once; flow lists are stored as
tuples (each note gets its own list). The lines vaultmem writes repeat across notes
(``type: memory``, ``status: active``, ``pinned: false``): a cold index reads most of them
once."""
_LINE_CACHE_MAX = 4096
_READ_ONCE: dict[str, tuple[str, Any]] = {}
"""The same for lines read once so far. Most notes have lines no other note has (an ``id``,
``created``, ``last_used``): kept apart, they never push the repeated lines out of
:data:`_LINE_CACHE` (when both shared one table, those lines filled it every 1,400 memories
and it was emptied, and a cold index of 11,000 memories read every line afresh)."""
_READ_ONCE_MAX = 4096


def _key_line(line: str) -> tuple[str, Any] | None:
    """(key, value) of a ``key: value`` line (not in :data:`_LINE_CACHE`) whose value is a scalar
    or a flow list, read once and cached; ``None`` when the line is not in the subset.
    ``key:`` alone is handled by the caller (it may open a block list)."""
    hit = _READ_ONCE.get(line)
    if hit is not None:  # a second time: a line that repeats
        if len(_LINE_CACHE) >= _LINE_CACHE_MAX:
            _LINE_CACHE.clear()
        _LINE_CACHE[line] = hit
        return hit
    key, colon, value = line.partition(":")
    if not colon or not _is_key(key) or value[0] != " ":
        return None
    value = value.strip(" ")
    if value[0] == "[":
        if value[-1] != "]":
            return None
        entry: tuple[str, Any] = (key, tuple(_flow(value[1:-1])))
    else:
        entry = (key, _scalar(value))
    if len(_READ_ONCE) >= _READ_ONCE_MAX:
        _READ_ONCE.clear()
    _READ_ONCE[line] = entry
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
                item = _list_item(line)
                if item is None or pending is None:
                    return None
                items = result[pending]
                if items and item[0] != indent:
                    return None
                indent = item[0]
                items.append(_scalar(item[1]))
                continue
            if pending is not None and not result[pending]:
                result[pending] = None
            pending = None
            bare = line.rstrip(" ")
            if bare[-1] == ":" and ":" not in bare[:-1]:  # "key:" alone: a block list or null
                key = bare[:-1]
                if not _is_key(key):
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


_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def placeholder_key(line: str) -> str | None:
    """The key of a ``key: {{name}}`` line, else ``None``: ``key`` as :func:`_is_key` takes it,
    one or more spaces after the colon, ``name`` an identifier (``[A-Za-z_][A-Za-z0-9_]*``), and
    spaces allowed around it and at the end of the line."""
    key, colon, value = line.partition(":")
    if not colon or value[:1] != " " or not _is_key(key):
        return None
    value = value.strip(" ")
    if not (value.startswith("{{") and value.endswith("}}")):
        return None
    name = value[2:-2].strip(" ")
    return key if name[:1] in _KEY_FIRSTS and _NAME_CHARS.issuperset(name) else None


PLACEHOLDER_PROBLEM = "found unhashable key (while constructing a mapping)"
"""What YAML says of a ``key: {{date}}`` line: ``{{date}}`` is a flow mapping whose key is the
mapping ``{date}``, which cannot be a key."""


def template_placeholder(yaml_text: str) -> tuple[int, int] | None:
    """Where YAML fails on frontmatter that is in the subset but for Obsidian template
    placeholders (``created: {{date}}``, ``title: {{ title }}``), else ``None``.

    Returns the 0-based line and column of the inner ``{`` of the first placeholder: YAML
    composes such a document, then fails there with :data:`PLACEHOLDER_PROBLEM` (libyaml and
    PyYAML alike). Every other line must be one :func:`parse_simple_frontmatter` takes, so no
    other error can come first; a test compares the answer with both loaders.
    """
    if "{{" not in yaml_text:
        return None
    lines = yaml_text.split("\n")
    first: tuple[int, int] | None = None
    for number, line in enumerate(lines):
        key = placeholder_key(line)
        if key is not None:
            if first is None:
                first = (number, line.index("{") + 1)
            lines[number] = f"{key}: placeholder"  # same shape, in the subset
    if first is None or parse_simple_frontmatter("\n".join(lines)) is None:
        return None
    return first
