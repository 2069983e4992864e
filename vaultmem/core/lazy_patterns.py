"""Regular expressions compiled on first use, for the note parser's rarer expressions.

Compiling an expression costs 20–300 µs, and a cold index imports the parser's modules on its
way: compiled at import, the expressions for code, nested lists and template placeholders cost a
100-note vault that holds none of them about a millisecond. A module declares such an
expression as ``NAME = lazy_pattern(globals(), "NAME", source)``; the first call of one of its
methods compiles it and binds the compiled :class:`re.Pattern` to ``NAME`` in the stand-in's
place, so every later use reads the compiled pattern directly, at no extra cost.
"""

from __future__ import annotations

import re
from collections.abc import MutableMapping
from typing import Any, cast

__all__ = ["LazyPattern", "lazy_pattern"]


class LazyPattern:
    """Stands in for the compiled expression ``source`` bound to the global ``name`` of a
    module (whose ``globals()`` are ``namespace``) until it is first used."""

    __slots__ = ("_flags", "name", "namespace", "source")

    def __init__(
        self, namespace: MutableMapping[str, Any], name: str, source: str, flags: int
    ) -> None:
        self.namespace, self.name, self.source, self._flags = namespace, name, source, flags

    def compiled(self) -> re.Pattern[str]:
        """The compiled expression, bound to :attr:`name` in this stand-in's place from now on.

        Raises ``RuntimeError`` when :attr:`name` holds neither this stand-in nor its compiled
        expression (a misspelt declaration would otherwise compile on every use).
        """
        current = self.namespace.get(self.name)
        if isinstance(current, re.Pattern) and current.pattern == self.source:
            return current  # compiled already: this stand-in was kept elsewhere
        if current is not self:
            raise RuntimeError(f"lazy_pattern {self.name!r} is bound to another name")
        pattern = re.compile(self.source, self._flags)
        self.namespace[self.name] = pattern
        return pattern

    def __getattr__(self, attribute: str) -> Any:  # match, search, finditer, sub ...
        return getattr(self.compiled(), attribute)

    def __repr__(self) -> str:
        return f"lazy_pattern({self.name!r}, {self.source!r})"


def lazy_pattern(
    namespace: MutableMapping[str, Any], name: str, source: str, flags: int = 0
) -> re.Pattern[str]:
    """``re.compile(source, flags)`` for the module global ``name`` (``namespace``: the
    module's ``globals()``), compiled when one of its methods is first called (see
    :class:`LazyPattern`). An invalid ``source`` raises :class:`re.error` at that first use."""
    return cast("re.Pattern[str]", LazyPattern(namespace, name, source, flags))
