"""Comments in frontmatter: where they are, and how a surgical edit keeps them.

docs/user-guide.md, "The memory note": an edit never removes a comment.
:func:`~vaultmem.core.notes.note_text.set_fields` keeps the comments of the lines it rewrites
with :func:`keep_comments`; the merge keeps the other side's with
:func:`~vaultmem.core.notes.note_merge.carry_comments`. A comment is what YAML calls one: a
``#`` at the start of a line or after a space or tab, outside every scalar (``title: "a # b"``,
``url: http://x#frag`` and ``'it''s # not'`` hold none; a block scalar's content lines are
text), running to the end of its line. Finding them scans the YAML tokens, so YAML is imported
only when a line holds a ``#`` where a comment may start (never for the fast path's subset).
"""

from __future__ import annotations

from typing import Any

__all__ = ["find_comments", "keep_comments", "may_comment", "one_line_comment"]

BREAKS = "\r\n\x85\u2028\u2029"
"""The characters YAML breaks a line at (``\\r\\n`` counts as one break)."""


def _starts(line: str) -> list[int]:
    """Columns of ``line`` where a comment may start: ``#`` first or after a space or tab."""
    columns: list[int] = []
    at = line.find("#")
    while at >= 0:
        if at == 0 or line[at - 1] in " \t":
            columns.append(at)
        at = line.find("#", at + 1)
    return columns


def may_comment(lines: list[str], first: int, last: int) -> bool:
    """Whether lines ``first``..``last`` (inclusive) hold a ``#`` where a comment may start:
    a quick test before :func:`find_comments` scans the YAML."""
    return any("#" in line and _starts(line) for line in lines[first : last + 1])


def one_line_comment(line: str) -> int | None:
    """The column where the comment of ``line`` (a property on one line) starts, when no quote
    comes before that ``#`` (then no scalar holds it: a plain scalar never holds `` #``);
    ``None`` when there is no such ``#`` or a quote comes first (:func:`find_comments` decides).
    About 1 µs, where scanning the YAML costs about 100."""
    columns = _starts(line)
    if not columns or "'" in line[: columns[0]] or '"' in line[: columns[0]]:
        return None
    return columns[0]


def find_comments(yaml_text: str, lines: list[str], *, path: str = "") -> dict[int, int]:
    """Where the comments of ``yaml_text`` (split into ``lines`` as YAML counts them) start:
    0-based line → column (in characters), for each line holding one.

    A block scalar's header line (``note: |  # about``) may hold one; its content lines never
    do. Raises :class:`~vaultmem.errors.FrontmatterError` when the text does not scan as YAML.
    """
    candidates = {n: c for n, line in enumerate(lines) if "#" in line and (c := _starts(line))}
    if not candidates:
        return {}
    import yaml

    from vaultmem.core.notes.frontmatter_yaml import FastLoader, yaml_error

    try:
        for token in yaml.scan(yaml_text, Loader=FastLoader):
            if token.__class__ is not yaml.ScalarToken:
                continue  # only a scalar holds a "#" after a space that is not a comment
            start: Any = token.start_mark
            end: Any = token.end_mark
            block = token.style in ("|", ">")  # its header line is outside its text
            first = (start.line + 1, 0) if block else (start.line, start.column)
            stop = (end.line, end.column)
            for number in range(first[0], stop[0] + 1):
                columns = candidates.get(number)
                if columns:
                    candidates[number] = [c for c in columns if not first <= (number, c) < stop]
    except (yaml.YAMLError, ValueError) as exc:
        raise yaml_error(exc, path, 2) from exc
    return {number: columns[0] for number, columns in candidates.items() if columns}


def keep_comments(
    line: str | None,
    lines: list[str],
    first: int,
    last: int,
    comments: dict[int, int],
    newline: str,
) -> str:
    """The text replacing lines ``first``..``last`` (one key's extent) when they hold comments.

    ``line`` is the new ``key: value`` line without its ending (``None``: the key is deleted);
    ``comments`` is :func:`find_comments`'s answer. The key line's comment stays at the end of
    the new line, the spaces before it kept (``key: new  # c``); a comment line of the extent
    stays as it is, after the new line; a comment after a value on another line (``  - a  # c``)
    becomes a line of its own at that line's indentation (``  # c``), as does the key line's
    when the key is deleted. The new line ends as the key's line does when comment lines
    follow it, else as the extent's last line (``newline`` for another YAML break); comment
    lines keep their own endings.
    """
    out: list[str] = []
    for number in range(first, last + 1):
        column = comments.get(number)
        whole = lines[number]
        if number == first and line is not None:
            if column is not None:  # "key: old  # c" -> "key: new  # c"
                line += whole[len(whole[:column].rstrip(" \t")) :].rstrip(BREAKS)
            follows = any(n in comments for n in range(first + 1, last + 1))
            out.append(line + ending(whole if follows else lines[last], newline))
        elif column is not None:
            if whole[:column].strip(" \t"):  # after a key or a value: a line of its own
                whole = whole[: len(whole) - len(whole.lstrip(" \t"))] + whole[column:]
            out.append(whole)
    return "".join(out)


def ending(line: str, newline: str) -> str:
    """``line``'s ending when CRLF or LF, else ``newline`` (another YAML break, or none)."""
    return "\r\n" if line.endswith("\r\n") else "\n" if line.endswith("\n") else newline
