"""Frontmatter read through YAML: what the fast path leaves (docs/user-guide.md, "The memory note").

Imported only when a note's frontmatter falls outside
:mod:`~vaultmem.core.notes.frontmatter_fast_path`'s subset (a comment, a nested mapping, a block
scalar, an alias ...): loading PyYAML takes a few milliseconds, about as long as indexing a
hundred notes. YAML is read with python-frontmatter's ``YAMLHandler`` on a subclass of
``yaml.CSafeLoader`` (libyaml; the pure-Python ``SafeLoader`` when libyaml is missing).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any, Final

import yaml
from frontmatter.default_handlers import YAMLHandler

from vaultmem.errors import FrontmatterError

__all__ = [
    "FastLoader", "FrontmatterEntry", "load_frontmatter", "load_or_none", "yaml_entries",
    "yaml_error",
]  # fmt: skip

FrontmatterEntry = tuple[str | None, int, int, str | None]
"""One top-level property of a frontmatter block: its key as text, its first and last line
(0-based, inclusive), and the key as written with its indentation (``None``: not reusable)."""

_HANDLER: Final = YAMLHandler()
_BASE_LOADER: Final[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TAG: Final = "tag:yaml.org,2002:"
_SCALAR_TAGS: Final = frozenset(_TAG + t for t in ("int", "float", "bool", "null", "timestamp"))


def load_frontmatter(yaml_text: str, *, path: str = "", first_line: int = 2) -> Any:
    """``yaml_text`` as YAML reads it (``None`` for an empty document), through
    python-frontmatter's handler and :class:`FastLoader`.

    Raises :class:`~vaultmem.core.notes.note_reading.FrontmatterError` (see :func:`yaml_error`) when
    it does not parse or holds a value YAML cannot build.
    """
    try:
        return _HANDLER.load(yaml_text, Loader=FastLoader)
    except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError) as exc:
        raise yaml_error(exc, path, first_line) from exc


def load_or_none(source: str) -> Any:
    """``source`` as libyaml's (or PyYAML's) plain safe loader reads it; ``None`` when it does
    not parse (callers load documents that never read as ``None``: ``k: v``, ``[v]``)."""
    try:
        return yaml.load(source, Loader=_BASE_LOADER)
    except yaml.YAMLError:
        return None


class _Slow(Exception):
    """The fast constructor met something it leaves to PyYAML (alias, merge key, odd tag)."""


class FastLoader(_BASE_LOADER):  # type: ignore[misc]
    """``yaml.CSafeLoader`` giving the same values about 25 % faster (~60 vs ~80 µs, 14 keys).

    libyaml parses and composes; plain trees of str/int/float/bool/null/timestamp scalars, lists
    and maps are then built directly, skipping ``SafeConstructor``'s per-node generator state.
    Anything else (an alias of a collection, a ``<<`` merge, another tag, an unhashable key) goes
    to ``SafeConstructor`` unchanged. Scalar keys are kept as the text written, on both paths.
    """

    def construct_document(self, node: Any) -> Any:
        """Build the document's data, fast when possible (see the class docstring)."""
        try:
            return self._build(node, set())
        except _Slow:
            _keys_as_text(node, set())
            return super().construct_document(node)

    def _build(self, node: Any, seen: set[int]) -> Any:
        tag = node.tag
        if node.__class__ is yaml.ScalarNode:
            if tag == _TAG + "str":
                return node.value
            if tag in _SCALAR_TAGS:
                return self.yaml_constructors[tag](self, node)
            raise _Slow
        if id(node) in seen:
            raise _Slow
        seen.add(id(node))
        if tag == _TAG + "seq" and node.__class__ is yaml.SequenceNode:
            return [self._build(child, seen) for child in node.value]
        if tag != _TAG + "map" or node.__class__ is not yaml.MappingNode:
            raise _Slow
        result = {}
        for key_node, value_node in node.value:
            if key_node.tag == _TAG + "merge":
                raise _Slow
            if key_node.__class__ is yaml.ScalarNode and key_node.tag in _SCALAR_TAGS:
                key = key_node.value
            else:
                key = self._build(key_node, seen)
            if not isinstance(key, Hashable):
                raise _Slow
            result[key] = self._build(value_node, seen)
        return result


def _keys_as_text(node: Any, seen: set[int]) -> None:
    """Retag scalar keys (``1``, ``true``, dates) as strings so they stay the text written."""
    if node.__class__ is yaml.ScalarNode or id(node) in seen:
        return
    seen.add(id(node))
    if node.__class__ is yaml.MappingNode:
        node.value = [
            (yaml.ScalarNode(_TAG + "str", k.value, k.start_mark, k.end_mark), v)
            if k.__class__ is yaml.ScalarNode and k.tag in _SCALAR_TAGS
            else (k, v)
            for k, v in node.value
        ]
    for child in node.value:
        for part in child if isinstance(child, tuple) else (child,):
            _keys_as_text(part, seen)


def yaml_error(exc: BaseException, path: str, first_line: int) -> FrontmatterError:
    """A person's message for an exception raised while reading YAML."""
    if isinstance(exc, yaml.MarkedYAMLError):
        problem = " ".join(filter(None, [exc.problem, exc.context and f"({exc.context})"]))
        mark: Any = exc.problem_mark or exc.context_mark
        return FrontmatterError(
            f"frontmatter is not valid YAML: {problem or 'unknown problem'}",
            path=path,
            line=None if mark is None else mark.line + first_line,
            column=None if mark is None else mark.column + 1,
        )
    if isinstance(exc, RecursionError):
        return FrontmatterError("frontmatter is nested too deeply", path=path)
    return FrontmatterError(f"frontmatter holds a value YAML cannot read: {exc}", path=path)


_DOCUMENT_EVENTS: Final = (
    yaml.StreamStartEvent, yaml.StreamEndEvent, yaml.DocumentStartEvent, yaml.DocumentEndEvent
)  # fmt: skip


def _end_line(mark: Any) -> int:
    """0-based line of the last character before ``mark`` (a YAML end mark)."""
    line: int = mark.line
    return line - 1 if mark.column == 0 and line > 0 else line


def yaml_entries(yaml_text: str, lines: list[str], path: str) -> tuple[str, list[FrontmatterEntry]]:
    """The top-level entries of a block mapping and the 0-based lines each spans (inclusive).

    Returns (the mapping's indentation, entries in order). An entry spans from its key's line to
    the last line holding its value (trailing blank lines trimmed); comment and blank lines
    between entries belong to none. ``prefix`` is the key as written with its indentation, or
    ``None`` when it cannot be reused (explicit ``? key``, a non-scalar or multi-line key).
    Raises :class:`FrontmatterError` when the top level is not a block mapping.
    """
    indent = ""
    entries: list[FrontmatterEntry] = []
    flow_stack: list[bool] = []  # per open collection: is it in flow style?
    is_key, key, prefix, first, last = True, None, None, 0, 0
    events: Iterable[Any] = yaml.parse(yaml_text, Loader=FastLoader)
    for event in events:
        if isinstance(event, _DOCUMENT_EVENTS):
            continue
        start: Any = event.start_mark
        end: Any = event.end_mark
        if not flow_stack:  # the root node
            if not isinstance(event, yaml.MappingStartEvent):
                raise FrontmatterError("frontmatter is not 'key: value' properties", path=path)
            if event.flow_style:
                raise FrontmatterError(
                    "frontmatter is one {...} flow mapping; vaultmem only edits frontmatter "
                    "with a 'key: value' line per property",
                    path=path,
                )
            indent = " " * start.column
            flow_stack.append(False)
            continue
        if len(flow_stack) == 1:
            if isinstance(event, yaml.MappingEndEvent):
                flow_stack.pop()
                continue
            if is_key:  # a key node starts an entry
                first = last = start.line
                key = prefix = None
                if isinstance(event, yaml.ScalarEvent):
                    key = event.value
                    if end.line == first and not lines[first][: start.column].strip(" "):
                        prefix = lines[first][: end.column]
        if isinstance(event, yaml.ScalarEvent | yaml.AliasEvent):
            if end.column or end.line != start.line or start.column:  # not an empty value
                last = max(last, _end_line(end))  # placed at the next token (``? key`` alone)
        elif isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent):
            last = max(last, start.line)
            flow_stack.append(bool(event.flow_style))
        elif flow_stack.pop():  # a collection ends: its end mark is exact only in flow style
            last = max(last, _end_line(end))
        if len(flow_stack) == 1:  # a node directly under the root mapping is complete
            if not is_key:
                while last > first and lines[last].isspace():
                    last -= 1
                entries.append((key, first, last, prefix))
            is_key = not is_key
    return indent, entries
