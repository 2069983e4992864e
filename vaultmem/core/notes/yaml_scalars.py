"""Python values as the one-line YAML scalars vaultmem writes in frontmatter, and how YAML reads
them back (docs/user-guide.md, "The memory note").

:func:`render_value` writes a value so that YAML 1.1 (PyYAML) and 1.2 (Obsidian) read back the
same value: a string plain only when that holds (:func:`plain_ok`), else double-quoted with
escapes; :func:`normalised` is what YAML reads back for a value written so, and
:func:`same_value` compares two values strictly (types must match, NaN equals NaN). The
surgical editor (:mod:`~vaultmem.core.notes.note_text`) checks every edit with them.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import numbers
import re
from typing import Final

from vaultmem.core.notes.frontmatter_fast_path import (
    PLAIN_INDICATORS,
    STR_TAG,
    implicit_tag,
    parse_simple_frontmatter,
)
from vaultmem.core.notes.timestamps import format_datetime, parse_datetime

__all__ = [
    "double_quoted", "normalised", "plain_ok", "render_float", "render_key", "render_value",
    "render_yaml", "same_value",
]  # fmt: skip

_NUMBER_1_2: Final = re.compile(  # YAML 1.2 core numbers (Obsidian); 1.1's are checked by loading
    r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:e[-+]?[0-9]+)?|0o[0-7]+|0x[0-9a-f]+|[-+]?\.inf|\.nan",
    re.IGNORECASE,
)
_WORD: Final = re.compile(r"[0-9A-Za-z]+")
_WORD_NOT_PLAIN: Final = re.compile(  # words YAML may read as a bool, null or number (or not)
    r"y|yes|n|no|true|false|on|off|null|[0-9]+|0b[01]*|0x[0-9a-f]*|0o?[0-7]*|[0-9]+e[0-9]+",
    re.IGNORECASE,
)
_ESCAPES: Final = {
    "\0": "\\0", "\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v", "\f": "\\f",
    "\r": "\\r", "\x1b": "\\e", '"': '\\"', "\\": "\\\\",
}  # fmt: skip


def render_value(value: object) -> str:
    """One-line YAML for ``value``, as written after ``key: `` ("The memory note" formats).

    ``str`` plain when unambiguous (YAML 1.1 and 1.2 read it back as the same string), else
    double-quoted with escapes (``"[[link]]"`` is always quoted, as Obsidian writes it);
    ``bool`` -> ``true``/``false``; integers; ``float`` -> shortest repr (``0.1``, ``1.0e+20``,
    ``.inf``, ``.nan``); ``datetime`` -> ``YYYY-MM-DDTHH:MM:SS`` UTC unquoted (YAML reads it back
    as a naive UTC datetime); ``date`` -> ``YYYY-MM-DD``; ``None`` -> ``""`` (an empty value);
    list/tuple -> flow sequence ``[a, "[[B]]"]`` (``[]`` when empty, ``null`` for a None item).
    Raises ``TypeError`` for any other type (dicts, sets, :data:`DELETE`).
    """
    return "" if value is None else render_yaml(value, flow=False)


def render_yaml(value: object, *, flow: bool) -> str:
    """YAML for ``value``; ``flow`` when it sits inside a flow sequence."""
    # the exact types a note's fields hold first: no ABC checks for them
    if type(value) is str:
        return value if plain_ok(value, flow=flow) else double_quoted(value)
    if type(value) is int:
        return int.__repr__(value)
    if type(value) is list:
        return "[" + ", ".join([render_yaml(item, flow=True) for item in value]) + "]"
    if type(value) is float:
        return render_float(value)
    if type(value) is bool:
        return "true" if value else "false"
    if type(value) is dt.datetime:
        return format_datetime(value)
    if isinstance(value, str):
        value = str.__str__(value)
        return value if plain_ok(value, flow=flow) else double_quoted(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return render_float(float(value))
    if isinstance(value, dt.datetime):
        return format_datetime(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if value is None:
        return "null"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(render_yaml(item, flow=True) for item in value) + "]"
    raise TypeError(f"vaultmem cannot write a {type(value).__name__} into frontmatter: {value!r}")


def render_float(number: float) -> str:
    """A float as YAML reads it back: shortest repr, ``.inf``/``-.inf``/``.nan``, and an
    exponent always with a ``.0`` mantissa (PyYAML reads ``1e+20`` as a string)."""
    if math.isnan(number) or math.isinf(number):
        return ".nan" if math.isnan(number) else ".inf" if number > 0 else "-.inf"
    text = float.__repr__(number)
    if "." not in text:
        mantissa, _, exponent = text.partition("e")
        text = f"{mantissa}.0e{exponent}"
    return text


@functools.lru_cache(maxsize=8192)  # keys and tag values repeat from note to note
def plain_ok(text: str, *, flow: bool = False, key: bool = False) -> bool:
    """Whether ``text`` may be written unquoted (as a value, in a ``[...]``, or as a key) and
    read back identical by YAML 1.1 (PyYAML) and 1.2 (Obsidian)."""
    if not text or text[0] in PLAIN_INDICATORS or text != text.strip() or not text.isprintable():
        return False
    if ": " in text or " #" in text or text.endswith(":") or _NUMBER_1_2.fullmatch(text):
        return False
    if flow and any(ch in text for ch in ",[]{}:?"):  # PyYAML ends a flow scalar at "?"
        return False
    if _WORD.fullmatch(text) and not _WORD_NOT_PLAIN.fullmatch(text):
        return True  # letters and digits only (ids), no bool, null or number: plain for sure
    # read back by the fast path (what YAML reads, without loading YAML), else by YAML itself
    value: object = [text] if flow else text
    source = f"{text}: k" if key else f"k: [{text}]" if flow else f"k: {text}"
    expected = {text: "k"} if key else {"k": value}
    loaded = parse_simple_frontmatter(source)
    if loaded is not None and key:  # the fast path keeps keys as text; YAML types them
        return implicit_tag(text) == STR_TAG and same_value(loaded, expected)
    if loaded is None:
        from vaultmem.core.notes.frontmatter_yaml import load_or_none

        loaded = load_or_none(source)
    return loaded is not None and same_value(loaded, expected)


def double_quoted(text: str) -> str:
    """``text`` as a YAML double-quoted scalar; unprintable characters escaped."""
    if text.isprintable() and '"' not in text and "\\" not in text:
        return '"' + text + '"'  # nothing to escape (every escaped character is unprintable)
    out = ['"']
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        else:
            code = ord(ch)
            width = 2 if code < 0x100 else 4 if code < 0x10000 else 8
            out.append(f"\\{'xuU'[width // 4]}{code:0{width}x}")
    out.append('"')
    return "".join(out)


def render_key(key: str) -> str:
    """A mapping key: plain when it reads back as the same string key, else double-quoted."""
    return key if plain_ok(key, key=True) else double_quoted(key)


def normalised(value: object) -> object:
    """``value`` as YAML reads back what :func:`render_value` writes for it."""
    kind = type(value)  # the exact types a note's fields hold: themselves, no ABC checks
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    if type(value) is list:
        return [normalised(item) for item in value]
    if isinstance(value, dt.datetime):
        return parse_datetime(value).replace(microsecond=0, tzinfo=None)
    if isinstance(value, list | tuple):
        return [normalised(item) for item in value]
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    return value


_COMPARED_BY_VALUE: Final = frozenset({str, int, bool, type(None), dt.datetime, dt.date})
"""Types :func:`same_value` compares with ``==`` once both sides have the type (no NaN, no
items)."""


def same_value(a: object, b: object) -> bool:
    """Strict equality: types must match (``True`` is not ``1``), NaN equals NaN."""
    kind = type(a)
    if kind is not type(b):
        return False
    if kind in _COMPARED_BY_VALUE:  # most values of a frontmatter: no recursion for them
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return False
        for key, value in a.items():  # a frontmatter's values: compared here, not recursed into
            other = b[key]
            kind = type(value)
            if kind is not type(other):
                return False
            if kind in _COMPARED_BY_VALUE:
                if value != other:
                    return False
            elif not same_value(value, other):
                return False
        return True
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return False
        for x, y in zip(a, b, strict=True):  # tags and links: compared here, not recursed into
            kind = type(x)
            if kind is not type(y):
                return False
            if not (x == y if kind in _COMPARED_BY_VALUE else same_value(x, y)):
                return False
        return True
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b
