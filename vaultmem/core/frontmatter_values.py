"""Frontmatter values as YAML: one value written on one line, and compared as YAML reads it.

A value is written plain when YAML 1.1 (PyYAML) and 1.2 (Obsidian) both read it back as the same
string, else double-quoted; numbers, booleans, datetimes, dates and flat lists have one spelling
each (docs/user-guide.md, "The memory note"). :func:`_normalise` and :func:`_same` compare a
value with what YAML reads back, for the safety check of every edit.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import numbers
import re
from typing import Final

import yaml

from vaultmem.core.timestamps import format_datetime, parse_datetime
from vaultmem.core.yaml_loader import _BASE_LOADER

_INDICATORS: Final = frozenset("-?:,[]{}#&*!|>'\"%@`")
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
    Raises ``TypeError`` for any other type (dicts, sets,
    :data:`~vaultmem.core.note_text.DELETE`).
    """
    return "" if value is None else _render(value, flow=False)


def _render(value: object, *, flow: bool) -> str:
    """YAML for ``value``; ``flow`` when it sits inside a flow sequence."""
    if isinstance(value, str):
        value = str.__str__(value)
        return value if _plain_ok(value, flow=flow) else _double_quoted(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        number = float(value)
        if math.isnan(number) or math.isinf(number):
            return ".nan" if math.isnan(number) else ".inf" if number > 0 else "-.inf"
        text = float.__repr__(number)
        if "." not in text:  # PyYAML reads 1e+20 as a string
            mantissa, _, exponent = text.partition("e")
            text = f"{mantissa}.0e{exponent}"
        return text
    if isinstance(value, dt.datetime):
        return format_datetime(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if value is None:
        return "null"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_render(item, flow=True) for item in value) + "]"
    raise TypeError(f"vaultmem cannot write a {type(value).__name__} into frontmatter: {value!r}")


@functools.lru_cache(maxsize=8192)  # keys and tag values repeat from note to note
def _plain_ok(text: str, *, flow: bool = False, key: bool = False) -> bool:
    """Whether ``text`` may be written unquoted (as a value, in a ``[...]``, or as a key) and
    read back identical by YAML 1.1 (PyYAML) and 1.2 (Obsidian)."""
    if not text or text[0] in _INDICATORS or text != text.strip() or not text.isprintable():
        return False
    if ": " in text or " #" in text or text.endswith(":") or _NUMBER_1_2.fullmatch(text):
        return False
    if flow and any(ch in text for ch in ",[]{}:?"):  # PyYAML ends a flow scalar at "?"
        return False
    if _WORD.fullmatch(text) and not _WORD_NOT_PLAIN.fullmatch(text):
        return True  # letters and digits only (ids), no bool, null or number: plain for sure
    source, expected = (f"{text}: k", {text: "k"}) if key else (f"k: {text}", {"k": text})
    try:
        loaded = yaml.load(f"[{text}]" if flow else source, Loader=_BASE_LOADER)
    except yaml.YAMLError:
        return False
    return _same(loaded, [text] if flow else expected)


def _double_quoted(text: str) -> str:
    """``text`` as a YAML double-quoted scalar; unprintable characters escaped."""
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


def _render_key(key: str) -> str:
    """A mapping key: plain when it reads back as the same string key, else double-quoted."""
    return key if _plain_ok(key, key=True) else _double_quoted(key)


def _normalise(value: object) -> object:
    """``value`` as YAML reads back what :func:`render_value` writes for it."""
    if isinstance(value, dt.datetime):
        return parse_datetime(value).replace(microsecond=0, tzinfo=None)
    if isinstance(value, list | tuple):
        return [_normalise(item) for item in value]
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    return value


def _same(a: object, b: object) -> bool:
    """Strict equality: types must match (``True`` is not ``1``), NaN equals NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


__all__ = ["render_value"]
