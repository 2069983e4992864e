"""A person's comments survive every edit vaultmem makes (user guide, "The memory note":
"comments ... stay byte for byte"; "Syncing with git": "a side is never dropped without a
mark"), and a new property's line ends as the line above it.

- ``set_fields`` keeps a comment at the end of a rewritten line at the end of the new line,
  its spacing kept; comment lines inside a rewritten extent stay; a comment after another line
  of the extent gets a line of its own; a deleted property leaves its comments;
- ``merge_note`` and ``doctor --fix`` carry theirs' frontmatter comments into the result;
- the common note (no ``#``) never looks for comments.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vaultmem import Vault
from vaultmem.cli import main
from vaultmem.core.notes import note_text
from vaultmem.core.notes.frontmatter_comments import find_comments
from vaultmem.core.notes.note_merge import carry_comments, merge_note
from vaultmem.core.notes.note_text import (
    DELETE,
    frontmatter_layout,
    parse_frontmatter,
    set_fields,
    split_note,
)
from vaultmem.services.sync.merge_driver import git_merge_lines

T0 = dt.datetime(2026, 11, 20, 9, 0, tzinfo=dt.UTC)


def frontmatter_of(text: str) -> dict[str, Any]:
    note = split_note(text)
    assert note.has_frontmatter
    return parse_frontmatter(note.yaml)


def changed_lines(before: str, after: str) -> list[tuple[str, str]]:
    """(old line, new line) pairs of two texts with the same number of lines."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    assert len(old) == len(new)
    return [(a, b) for a, b in zip(old, new, strict=True) if a != b]


# --- finding 1: a comment at the end of an edited line -----------------------------------------


def test_a_comment_at_the_end_of_an_edited_line_stays_with_its_spacing() -> None:
    text = (
        "---\nuse_count: 2  # count\nlast_used: 2026-11-21T09:00:00 # last\n"
        "pinned: false\t# pin?\nbox:  # none yet\n---\nbody\n"
    )
    changes = {
        "use_count": 3,
        "last_used": dt.datetime(2026, 11, 25, 10, tzinfo=dt.UTC),
        "pinned": True,
        "box": "[[Boxes/b]]",
    }
    result = set_fields(text, changes)
    assert changed_lines(text, result) == [
        ("use_count: 2  # count\n", "use_count: 3  # count\n"),
        ("last_used: 2026-11-21T09:00:00 # last\n", "last_used: 2026-11-25T10:00:00 # last\n"),
        ("pinned: false\t# pin?\n", "pinned: true\t# pin?\n"),
        ("box:  # none yet\n", 'box: "[[Boxes/b]]"  # none yet\n'),
    ]
    assert set_fields(result, {"box": None}) == result.replace('box: "[[Boxes/b]]"', "box:")
    assert set_fields(text.replace("\n", "\r\n"), changes) == result.replace("\n", "\r\n")


@pytest.mark.parametrize(
    "line",
    [
        'title: "a # b"',
        "url: http://x#frag",
        "q: 'it''s # not'",
        'e: "a\\" # b"',
        "tag: '#x'",
        "f: [a#b, 'c # d']",
    ],
)
def test_a_hash_inside_a_value_is_no_comment(line: str) -> None:
    key = line.split(":")[0]
    text = f"---\n{line}\nz: 1 # z\n---\n"
    assert set_fields(text, {key: "new", "z": 2}) == f"---\n{key}: new\nz: 2 # z\n---\n"


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        ('title: "a # b" # real', " # real"),
        ("url: http://x#frag  #real", "  #real"),
        ("q: 'it''s # not' # yes", " # yes"),
        ("f: [a, 'b # c']   # list", "   # list"),
    ],
)
def test_a_comment_after_a_value_holding_a_hash_stays(line: str, kept: str) -> None:
    key = line.split(":")[0]
    text = f"---\n{line}\n---\n"
    assert set_fields(text, {key: 7}) == f"---\n{key}: 7{kept}\n---\n"


def test_comments_of_a_value_on_several_lines_stay() -> None:
    text = (
        "---\n"
        "tags:  # my tags\n"
        "  - a  # first\n"
        "  # between\n"
        "  - b\n"
        "note: |  # about the note\n"
        "  line\n"
        "  # content, not a comment\n"
        "m:\n"
        "  # about m\n"
        "  value\n"
        "related: [a,  # one\n"
        "  b]\n"
        "z: 1\n"
        "---\n"
    )
    result = set_fields(text, {"tags": ["x"], "note": "short", "m": "n", "related": []})
    assert result == (
        "---\n"
        "tags: [x]  # my tags\n"
        "  # first\n"
        "  # between\n"
        "note: short  # about the note\n"
        "m: n\n"
        "  # about m\n"
        "related: []  # one\n"
        "z: 1\n"
        "---\n"
    )
    assert frontmatter_of(result) == {"tags": ["x"], "note": "short", "m": "n", "related": [],
                                      "z": 1}  # fmt: skip


def test_a_deleted_property_leaves_its_comments() -> None:
    text = "---\na: 1  # about a\nt:\n  - x # one\n  # two\nb: 2\n---\n"
    result = set_fields(text, {"a": DELETE, "t": DELETE})
    assert result == "---\n# about a\n  # one\n  # two\nb: 2\n---\n"
    assert set_fields("---\na: 1\r\nb: 2 # b\r\n---\r\n", {"b": DELETE}) == (
        "---\na: 1\r\n# b\r\n---\r\n"
    )


def test_find_comments_reads_them_as_yaml_does() -> None:
    yaml_text = (
        "a: 'x # y' # c1\n"
        "#c2\n"
        "b: |\n"
        "  # text\n"
        "  more # text\n"
        "c: x#y\n"
        'd: "p\n'
        '  # q" # c3\n'
        "e: plain\n"
        "  continued # c4\n"
    )
    _, _, comments = frontmatter_layout(yaml_text)
    lines = yaml_text.splitlines()
    assert {lines[n][c:] for n, c in comments.items()} == {"# c1", "#c2", "# c3", "# c4"}
    assert find_comments("a: 1\n", ["a: 1\n"]) == {}


# --- a hypothesis round trip -------------------------------------------------------------------

KEYS = ["id", "tags", "my key", "ключ", "use_count", "pinned", "last_used", "x.y"]
NEW_KEYS = ["use_days", "review_count", "box", "new key"]
SPACING = ["  ", " ", "\t", "   "]
ONE_LINE = [
    "plain words",
    "42",
    "'it''s # fake'",
    '"a # fake"',
    '"esc\\" # fake"',
    "http://x#fake",
    "[a, 'b # fake', c#fake]",
    "{k: v}",
    "",
    "2026-11-21T09:00:00",
]


@st.composite
def entry(draw: st.DrawFn, key: str, counter: list[int]) -> tuple[list[str], list[str]]:
    """(lines of one ``key: value`` entry, the texts of its real comments)."""

    def comment() -> str:
        counter[0] += 1
        return f"# cmt{counter[0]}"

    comments: list[str] = []

    def trailing() -> str:
        if not draw(st.booleans()):
            return ""
        text = comment()
        comments.append(text)
        return draw(st.sampled_from(SPACING)) + text

    style = draw(st.sampled_from(["one", "one", "one", "block", "literal", "flow"]))
    if style == "one":
        value = draw(st.sampled_from(ONE_LINE))
        return [f"{key}:{' ' + value if value else ''}{trailing()}"], comments
    if style == "literal":
        head = f"{key}: |{trailing()}"
        return [head, "  text", "  # fake inside the text"], comments
    if style == "flow":
        head = f"{key}: [a,{trailing()}"
        return [head, f"  b]{trailing()}"], comments
    lines = [f"{key}:{trailing()}"]
    for item in draw(st.lists(st.sampled_from(["a", "'b # fake'", "c"]), min_size=1, max_size=3)):
        if draw(st.booleans()):
            text = comment()
            comments.append(text)
            lines.append(f"  {text}")
        lines.append(f"  - {item}{trailing()}")
    return lines, comments


@st.composite
def commented_notes(
    draw: st.DrawFn,
) -> tuple[str, list[tuple[str | None, list[str], list[str]]], str]:
    """(note text, segments (key or None, lines, real comment texts), newline)."""
    counter = [0]
    segments: list[tuple[str | None, list[str], list[str]]] = []
    for key in draw(st.lists(st.sampled_from(KEYS), unique=True, min_size=1, max_size=6)):
        if draw(st.booleans()):
            counter[0] += 1
            segments.append((None, [f"# cmt{counter[0]}"], [f"# cmt{counter[0]}"]))
        lines, comments = draw(entry(key, counter))
        segments.append((key, lines, comments))
    nl = draw(st.sampled_from(["\n", "\r\n"]))
    yaml_part = "".join(line + nl for _, lines, _ in segments for line in lines)
    return "---" + nl + yaml_part + "---" + nl + "body" + nl, segments, nl


values = st.one_of(
    st.integers(0, 99),
    st.booleans(),
    st.none(),
    st.sampled_from(["new", "a # not a comment", "#x", "[[Link]]"]),
    st.lists(st.sampled_from(["a", "b c", "[[L]]"]), max_size=3),
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), generated=commented_notes())
def test_set_fields_keeps_every_comment_and_every_other_line(
    data: st.DataObject, generated: Any
) -> None:
    text, segments, nl = generated
    original = frontmatter_of(text)
    present = [key for key, _, _ in segments if key is not None]
    changes: dict[str, object] = {
        key: data.draw(values | st.just(DELETE))
        for key in data.draw(st.lists(st.sampled_from(present), unique=True))
    }
    changes.update(
        (key, data.draw(values))
        for key in data.draw(st.lists(st.sampled_from(NEW_KEYS), unique=True, max_size=2))
    )

    result = set_fields(text, changes)

    # the values read are the new ones
    expected = dict(original)
    for key, value in changes.items():
        if value is DELETE:
            expected.pop(key, None)
        else:
            expected[key] = value
    assert frontmatter_of(result) == expected
    # every comment's text is still there, as often as before (no "fake" one is invented)
    kept = re.findall(r"# cmt\d+", split_note(result).yaml)
    assert sorted(kept) == sorted(c for _, _, comments in segments for c in comments)
    # every line of a key left alone (and every comment line between keys) is byte-identical
    # and in order; the body too; each line ends in the note's newline
    got = split_note(result).yaml.splitlines(keepends=True)
    assert all(line.endswith(nl) and not line[: -len(nl)].endswith("\r") for line in got)
    untouched = [
        line + nl
        for key, lines, _ in segments
        if key is None or key not in changes
        for line in lines
    ]
    position = 0
    for line in untouched:
        position = got.index(line, position) + 1
    assert split_note(result).body == "body" + nl


# --- finding 2: a new property's line ending ---------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("---\r\na: 1\nb: 2\n---\n", "---\r\na: 1\nb: 2\nuse_days: 3\n---\n"),
        ("---\na: 1\r\nb: 2\r\n---\r\n", "---\na: 1\r\nb: 2\r\nuse_days: 3\r\n---\r\n"),
        ("---\r\n---\r\nbody\n", "---\r\nuse_days: 3\r\n---\r\nbody\n"),
        ("---\n# c\r\n---\n", "---\n# c\r\nuse_days: 3\r\n---\n"),
    ],
)
def test_a_new_line_ends_as_the_line_above_it(text: str, expected: str) -> None:
    assert set_fields(text, {"use_days": 3}) == expected


def test_a_new_line_after_a_deleted_last_line_ends_as_the_line_left_above() -> None:
    text = "---\na: 1\r\nb: 2\n---\n"
    assert set_fields(text, {"b": DELETE, "c": 3}) == "---\na: 1\r\nc: 3\r\n---\n"


@given(endings=st.lists(st.sampled_from(["\n", "\r\n"]), min_size=1, max_size=6))
def test_new_lines_end_as_the_last_line_of_the_frontmatter(endings: list[str]) -> None:
    first, *rest = endings
    text = "---" + first + "".join(f"k{n}: {n}{e}" for n, e in enumerate(rest)) + "---\n"
    result = set_fields(text, {"use_days": 3, "review_count": 1})
    assert result.endswith(f"use_days: 3{endings[-1]}review_count: 1{endings[-1]}---\n")


# --- finding 3: merges keep theirs' comments ---------------------------------------------------

CONFLICTED = (
    "---\nid: 01TESTMEMORY0000000000000X\ntype: memory\n<<<<<<< HEAD\nuse_count: 2\n=======\n"
    "# bumped on laptop\nuse_count: 4\n>>>>>>> other\n---\nbody\n"
)


def test_doctor_fix_keeps_the_comment_lines_of_theirs(tmp_path: Path) -> None:
    root = tmp_path / "v"
    assert CliRunner().invoke(main, ["init", str(root)]).exit_code == 0
    memory = Vault.open(root).remember("Prefers dark themes.", title="X", now=T0)
    path = root / memory.path
    text = path.read_text(encoding="utf-8")
    head, _, rest = text.partition("use_count: 1\n")
    path.write_text(
        head + "<<<<<<< HEAD\nuse_count: 2  # mine\n=======\n# bumped on laptop\n"
        "use_count: 4 # theirs\n>>>>>>> other\n" + rest,
        encoding="utf-8",
    )
    result = CliRunner().invoke(main, ["doctor", "--fix", "--vault", str(root)])
    assert result.exit_code == 0, result.output
    assert f"fixed {memory.path}" in result.output
    fixed = path.read_text(encoding="utf-8")
    assert fixed == head + "# bumped on laptop\n# theirs\nuse_count: 4  # mine\n" + rest


def test_merge_note_without_a_base_carries_every_comment_of_theirs() -> None:
    ours = "---\nid: A\ntype: memory\nuse_count: 2\ntags: [a] # ours\n---\nbody\n"
    theirs = (
        "---\nid: A\ntype: memory\n# bumped on laptop\nuse_count: 4 # four\ntags:\n"
        "  - a  # first\n  # about b\n  - b\n# the end\n---\nbody\n"
    )
    result = merge_note(None, ours, theirs, git_merge_lines)
    assert result.clean
    assert result.text == (
        "---\nid: A\ntype: memory\n# bumped on laptop\n# four\nuse_count: 4\n  # first\n"
        "  # about b\ntags: [a, b] # ours\n# the end\n---\nbody\n"
    )


def test_merge_note_with_a_base_carries_the_comments_theirs_added_only() -> None:
    base = "---\nid: A\ntype: memory\n# old note\nuse_count: 2\n---\nbody\n"
    ours = "---\nid: A\ntype: memory\nuse_count: 3\n---\nbody\n"  # removed "# old note"
    theirs = "---\nid: A\ntype: memory\n# old note\n# new note\nuse_count: 4\n---\nbody\n"
    result = merge_note(base, ours, theirs, git_merge_lines)
    assert result.clean
    assert result.text == "---\nid: A\ntype: memory\n# new note\nuse_count: 5\n---\nbody\n"
    assert carry_comments(ours, ours, base) is ours  # nothing to carry: the same text back


def test_a_key_left_in_conflict_keeps_the_comment_of_ours_and_theirs() -> None:
    base = "---\nid: A\ntype: memory\nstrength: 1.0 # s\n---\nx\n"
    ours = base.replace("1.0", "high")  # a value the rule cannot merge: a conflict for the key
    theirs = base.replace("1.0 # s", "1.1 # t")
    result = merge_note(base, ours, theirs, git_merge_lines)
    assert result.conflicts == ("key 'strength'",)
    assert result.text == (
        "---\nid: A\ntype: memory\n# t\n<<<<<<< ours\nstrength: high # s\n||||||| base\n"
        "strength: 1.0\n=======\nstrength: 1.1\n>>>>>>> theirs\n---\nx\n"
    )


def test_a_carried_comment_line_ends_as_the_line_above_it() -> None:
    result = "---\r\nid: A\r\nn: 1\n---\n"
    assert carry_comments(result, "---\nid: A\n# c\nn: 1\n---\n") == (
        "---\r\nid: A\r\n# c\r\nn: 1\n---\n"
    )
    assert carry_comments(result, "---\ngone: 1 # g\n---\n") == "---\r\nid: A\r\nn: 1\n# g\n---\n"


# --- the common path ---------------------------------------------------------------------------


def test_a_note_without_a_comment_never_looks_for_comments(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(*args: object, **kwargs: object) -> dict[int, int]:
        raise AssertionError("comments looked for")

    monkeypatch.setattr(note_text, "find_comments", refuse)
    simple = "---\nid: A\nuse_count: 1\ntags:\n  - a\n---\nbody\n"
    assert set_fields(simple, {"use_count": 2, "use_days": 1}).count("\n") == 8
    yaml_only = "---\nid: A\nnote: |\n  x\nurl: http://x#frag\n---\n"  # YAML read, no comment
    assert set_fields(yaml_only, {"note": "y", "url": "z"}) == "---\nid: A\nnote: y\nurl: z\n---\n"
