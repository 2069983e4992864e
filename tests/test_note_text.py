"""Note text (spec section 2): split, parse, conflict markers, rendering and surgical edits.

The promise under test: ``set_fields`` changes only the lines of the keys it changes (or adds
lines just before the closing fence); every other byte of the note stays identical.
"""

from __future__ import annotations

import datetime as dt
import difflib
import math
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from vaultmem.core.notes import frontmatter_yaml, note_text, yaml_scalars
from vaultmem.core.notes.note_text import (
    DELETE,
    FrontmatterError,
    find_conflict_markers,
    frontmatter_bounds,
    parse_frontmatter,
    render_note,
    render_value,
    set_fields,
    split_note,
)

NOTES = Path(__file__).parent / "notes"
VAULTS = Path(__file__).parent / "vaults"
UTC = dt.UTC


def strict_equal(a: object, b: object) -> bool:
    """Equality where ``True`` is not ``1`` and NaN equals NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(strict_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def read_back(value: object) -> object:
    """What YAML reads back for a value written by vaultmem (datetimes: naive UTC, seconds)."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return value.replace(microsecond=0)
    if isinstance(value, list | tuple):
        return [read_back(item) for item in value]
    return value


def frontmatter_of(text: str) -> dict[str, Any]:
    note = split_note(text)
    assert note.has_frontmatter
    return parse_frontmatter(note.yaml)


def lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


# --- split_note ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "has_frontmatter", "yaml_text", "body"),
    [
        ("---\na: 1\n---\nbody\n", True, "a: 1\n", "body\n"),
        ("---\na: 1\n---", True, "a: 1\n", ""),
        ("---\na: 1\n---\n\n\nbody", True, "a: 1\n", "\n\nbody"),
        ("---\n---\nbody", True, "", "body"),
        ("---  \na: 1\n--- \t\nbody", True, "a: 1\n", "body"),
        ("---\r\na: 1\r\n---\r\nbody\r\n", True, "a: 1\r\n", "body\r\n"),
        ("\ufeff---\na: 1\n---\nbody", True, "a: 1\n", "body"),
        ("\ufeffbody", False, "", "body"),
        ("body\n---\na: 1\n---\n", False, "", "body\n---\na: 1\n---\n"),
        ("\n---\na: 1\n---\n", False, "", "\n---\na: 1\n---\n"),
        ("---\na: 1\n", False, "", "---\na: 1\n"),
        ("----\na: 1\n----\n", False, "", "----\na: 1\n----\n"),
        ("---\na: 1\n----\n---\nx", True, "a: 1\n----\n", "x"),
        ("--- a\n---\n", False, "", "--- a\n---\n"),
        ("", False, "", ""),
    ],
)
def test_split_note(text: str, has_frontmatter: bool, yaml_text: str, body: str) -> None:
    note = split_note(text)
    assert (note.has_frontmatter, note.yaml, note.body) == (has_frontmatter, yaml_text, body)
    assert note.text is text
    assert text[note.body_offset :] == body
    assert text[note.yaml_offset :].startswith(yaml_text)


_OPEN_FENCE = re.compile(r"\ufeff?---[ \t]*\r?\n")
_CLOSE_FENCE = re.compile(r"^---[ \t]*(?:\r?\n|\r?\Z)", re.MULTILINE)


def _bounds_by_regex(text: str) -> tuple[int, int, int] | None:
    """The fence rule as two regular expressions (what frontmatter_bounds did before it used
    string methods): the reference its string methods must agree with."""
    opening = _OPEN_FENCE.match(text)
    if opening is None:
        return None
    closing = _CLOSE_FENCE.search(text, opening.end())
    return None if closing is None else (opening.end(), closing.start(), closing.end())


@settings(max_examples=3000, deadline=None)
@given(
    st.lists(
        st.sampled_from(["---", "----", "-", " ", "\t", "\r", "\n", "\r\n", "a", "\ufeff", "\v"]),
        max_size=14,
    )
)
@example(["---", "\n", "---"])
@example(["---", "\r", "\n", "a", "\n", "---", " ", "\r"])
@example(["---", " ", "\r", " ", "\n", "---", "\n"])
def test_frontmatter_bounds_follow_the_fence_rule(parts: list[str]) -> None:
    text = "".join(parts)
    assert frontmatter_bounds(text) == _bounds_by_regex(text)


def test_split_note_newline() -> None:
    assert split_note("---\r\na: 1\r\n---\r\n").newline == "\r\n"
    assert split_note("---\na: 1\r\n---\r\n").newline == "\n"
    assert split_note("no newline at all").newline == "\n"
    assert split_note("plain\r\ntext").newline == "\r\n"


# --- parse_frontmatter -----------------------------------------------------------------------


def test_parse_the_spec_example() -> None:
    fields = frontmatter_of((NOTES / "memory.md").read_text(encoding="utf-8"))
    assert fields == {
        "id": "01JDGZ6Q4V7C2M9R0S8T5W3XYZ",
        "type": "memory",
        "status": "active",
        "layer": "working",
        "category": "preference",
        "created": dt.datetime(2026, 11, 20, 9, 14, 3),
        "last_used": dt.datetime(2026, 11, 21, 17, 40, 55),
        "use_count": 3,
        "strength": 1.2,
        "importance": 0.7,
        "confidence": 0.9,
        "source": "human",
        "pinned": False,
        "tags": ["editor", "ui"],
        "box": "[[box-2026-11-20-editor-setup]]",
        "related": ["[[Dark mode everywhere]]"],
    }


@pytest.mark.parametrize("yaml_text", ["", "\n", "  \n\n", "# only a comment\n", "~\n", "null"])
def test_parse_empty_is_an_empty_dict(yaml_text: str) -> None:
    assert parse_frontmatter(yaml_text) == {}


@pytest.mark.parametrize(
    ("yaml_text", "message", "line"),
    [
        ("a: 1\nb: [\n", "not valid YAML", 4),
        ("a: 1\nb: c: d\n", "not valid YAML: mapping values are not allowed", 3),
        ("- a\n- b\n", "frontmatter is a list, not 'key: value' properties", 2),
        ("just text\n", "a single value (str)", 2),
        ("created: {{date}}\n", "found unhashable key", 2),
        ("a: 1\n\tb: 2\n", "not valid YAML", 3),
    ],
)
def test_parse_errors_say_what_and_where(yaml_text: str, message: str, line: int) -> None:
    with pytest.raises(FrontmatterError) as caught:
        parse_frontmatter(yaml_text, path="STM/Note.md")
    err = caught.value
    assert message in str(err)
    assert str(err).startswith("STM/Note.md: ")
    assert err.line == line
    assert err.path == "STM/Note.md"
    assert isinstance(err, ValueError)
    assert "\n" not in str(err)


def test_parse_impossible_date_is_an_error() -> None:
    with pytest.raises(FrontmatterError, match="day is out of range"):
        parse_frontmatter("created: 2023-02-30\n")


def test_parse_keeps_scalar_keys_as_written() -> None:
    text = "1: a\ntrue: b\nnull: c\n2024-01-01: d\nnested: {2: x}\n"
    expected = {"1": "a", "true": "b", "null": "c", "2024-01-01": "d", "nested": {"2": "x"}}
    assert parse_frontmatter(text) == expected
    # the same through PyYAML's own constructor (taken for aliases and merges)
    merged = text + "base: &b {3: y}\nwith:\n  <<: *b\n  4: z\n"
    assert parse_frontmatter(merged) == {
        **expected,
        "base": {"3": "y"},
        "with": {"3": "y", "4": "z"},
    }


def test_parse_uses_libyaml_when_available() -> None:
    if getattr(yaml, "__with_libyaml__", False):
        assert issubclass(frontmatter_yaml.FastLoader, yaml.CSafeLoader)
    assert type(frontmatter_yaml._HANDLER).__name__ == "YAMLHandler"


@pytest.mark.parametrize(
    "yaml_text",
    [
        "a: &x [1, 2]\nb: *x\n",
        "a: !!set {x, y}\n",
        "a: !!binary aGVsbG8=\n",
        "a: !!omap [x: 1]\n",
        "a: [1, [2, {b: c}]]\nd: 0x1F\ne: 1_000\nf: .inf\ng: ~\nh: yes\ni: 2026-01-01T10:00:00Z\n",
    ],
)
def test_fast_loader_agrees_with_pyyaml(yaml_text: str) -> None:
    assert parse_frontmatter(yaml_text) == yaml.load(yaml_text, Loader=yaml.SafeLoader)


# --- find_conflict_markers -------------------------------------------------------------------


def test_conflict_markers() -> None:
    text = "---\n<<<<<<< HEAD\nuse_count: 3\n=======\nuse_count: 4\n>>>>>>> origin/main\n---\n"
    assert find_conflict_markers(text) == [2, 4, 6]
    diff3 = "a\r\n<<<<<<< ours\r\nx\r\n||||||| base\r\ny\r\n=======\r\nz\r\n>>>>>>> theirs\r\n"
    assert find_conflict_markers(diff3) == [2, 4, 6, 8]
    assert find_conflict_markers("<<<<<<<\nx\n=======\n") == [1, 3]  # an unfinished one


@pytest.mark.parametrize(
    "text",
    [
        "Title\n=======\nsetext heading underline\n",
        "| a |\n|||||||\n",
        "<<<<<<<< eight is not a marker\n",
        "x <<<<<<< not at the start of a line\n",
        ">>>>>>>x no space after\n",
        "plain note\n",
        "=======\n>>>>>>>> eight\n",
    ],
)
def test_not_conflict_markers(text: str) -> None:
    assert find_conflict_markers(text) == []


def test_a_stray_closing_marker_counts() -> None:
    assert find_conflict_markers("a\n=======\nb\n>>>>>>> theirs\n") == [4]


# --- render_value ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "rendered"),
    [
        ("hello", "hello"),
        ("hello world", "hello world"),
        ("café ☃", "café ☃"),
        ("it's", "it's"),
        ("[[Dark mode everywhere]]", '"[[Dark mode everywhere]]"'),
        ("true", '"true"'),
        ("yes", '"yes"'),
        ("null", '"null"'),
        ("~", '"~"'),
        ("2026-11-20", '"2026-11-20"'),
        ("1.5", '"1.5"'),
        ("1e3", '"1e3"'),
        ("0o17", '"0o17"'),
        ("", '""'),
        (" padded", '" padded"'),
        ("a: b", '"a: b"'),
        ("a #b", '"a #b"'),
        ("#tag", '"#tag"'),
        ("-x", '"-x"'),
        ("@me", '"@me"'),
        ('say "hi"', 'say "hi"'),
        ("back\\slash", "back\\slash"),
        ("two\nlines", '"two\\nlines"'),
        ("tab\there", '"tab\\there"'),
        ("nbsp\u00a0", '"nbsp\\xa0"'),
        ("ls\u2028", '"ls\\u2028"'),
        (True, "true"),
        (False, "false"),
        (0, "0"),
        (-12, "-12"),
        (1.2, "1.2"),
        (0.1 + 0.2, "0.30000000000000004"),
        (1e20, "1.0e+20"),
        (1e-7, "1.0e-07"),
        (2.5e-7, "2.5e-07"),
        (float("inf"), ".inf"),
        (float("-inf"), "-.inf"),
        (float("nan"), ".nan"),
        (dt.datetime(2026, 11, 20, 9, 14, 3, 999, tzinfo=UTC), "2026-11-20T09:14:03"),
        (dt.datetime(2026, 11, 20, 10, 14, 3, tzinfo=dt.timezone(dt.timedelta(hours=1))),
         "2026-11-20T09:14:03"),
        (dt.datetime(2026, 11, 20, 9, 14, 3), "2026-11-20T09:14:03"),
        (dt.date(2026, 11, 20), "2026-11-20"),
        (None, ""),
        ([], "[]"),
        (["editor", "ui"], "[editor, ui]"),
        (("[[A]]", "[[B]]"), '["[[A]]", "[[B]]"]'),
        (["a, b", "c:d", "x y", 1, None, True], '["a, b", "c:d", x y, 1, null, true]'),
        ([["nested"]], "[[nested]]"),
    ],
)  # fmt: skip
def test_render_value(value: object, rendered: str) -> None:
    assert render_value(value) == rendered
    assert strict_equal(yaml.safe_load(f"k: {rendered}")["k"], read_back(value))


@pytest.mark.parametrize("value", [{"a": 1}, {1, 2}, DELETE, object(), b"bytes"])
def test_render_value_refuses_other_types(value: object) -> None:
    with pytest.raises(TypeError):
        render_value(value)


values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text()
    | st.sampled_from(["[[A]]", "[[Dark mode]]", "true", "2026-01-01", "a: b", "x #y", "'"])
    | st.dates(min_value=dt.date(1000, 1, 1))
    | st.datetimes(min_value=dt.datetime(1900, 1, 1), timezones=st.sampled_from([None, UTC])),
    lambda inner: st.lists(inner, max_size=4),
    max_leaves=8,
)


@example(value=["0?"])  # PyYAML's pure-Python parser ends a flow scalar at "?"
@given(value=values)
def test_render_value_reads_back(value: object) -> None:
    rendered = render_value(value)
    assert "\n" not in rendered and "\r" not in rendered
    for loader in (yaml.SafeLoader, frontmatter_yaml.FastLoader):
        loaded = yaml.load(f"k: {rendered}\n", Loader=loader)  # noqa: S506 (safe loaders)
        assert strict_equal(loaded["k"], read_back(value))


@given(key=st.text(min_size=0, max_size=12), value=values)
def test_render_note_reads_back(key: str, value: object) -> None:
    text = render_note({key: value, "type": "memory"}, "body\n")
    assert text.startswith("---\n") and text.endswith("\n---\nbody\n")
    assert strict_equal(frontmatter_of(text), {key: read_back(value), "type": "memory"})


def test_render_note() -> None:
    fields = {
        "id": "01JDGZ6Q4V7C2M9R0S8T5W3XYZ",
        "type": "memory",
        "created": dt.datetime(2026, 11, 20, 9, 14, 3, tzinfo=UTC),
        "use_count": 1,
        "strength": 1.0,
        "pinned": False,
        "tags": ["editor", "ui"],
        "box": "[[box-2026-11-20-editor-setup]]",
        "related": [],
        "valid_until": None,
    }
    assert render_note(fields, "Prefers dark themes.\n") == (
        "---\n"
        "id: 01JDGZ6Q4V7C2M9R0S8T5W3XYZ\n"
        "type: memory\n"
        "created: 2026-11-20T09:14:03\n"
        "use_count: 1\n"
        "strength: 1.0\n"
        "pinned: false\n"
        "tags: [editor, ui]\n"
        'box: "[[box-2026-11-20-editor-setup]]"\n'
        "related: []\n"
        "valid_until:\n"
        "---\n"
        "Prefers dark themes.\n"
    )


def test_render_note_quotes_keys_that_need_it() -> None:
    text = render_note({"my key": 1, "a: b": 2, "true": 3, "#x": 4, "": 5, "ключ": 6}, "")
    assert text.splitlines()[1:-1] == [
        "my key: 1", '"a: b": 2', '"true": 3', '"#x": 4', '"": 5', "ключ: 6"
    ]  # fmt: skip


# --- set_fields: golden files ----------------------------------------------------------------

GOLDEN: dict[str, dict[str, object]] = {
    "memory": {"last_used": dt.datetime(2026, 11, 22, 8, 30, tzinfo=UTC), "use_count": 4},
    "block_values": {
        "tags": ["editor", "ui", "[[Dark mode]]"],
        "aliases": ("Block",),
        "summary": "One line now",
        "related": ["[[C]]"],
        "after": "kept",
    },
    "quoted_keys": {
        "my key": 2.5,
        "other key": "single",
        "status": "archived",
        "ключ": "новое значение",
    },
    "delete_and_add": {
        "box": DELETE,
        "valid_until": DELETE,
        "not there": DELETE,
        "status": "archived",
        "archived_at": dt.datetime(2026, 11, 30, 12, tzinfo=UTC),
        "review count": 0,
        "note": "needs: quoting",
    },
    "no_frontmatter": {"type": "memory", "tags": [], "confidence": 0.9, "box": None},
}

VARIANTS: dict[str, Callable[[str], str]] = {
    "lf": lambda text: text,
    "crlf": lambda text: text.replace("\n", "\r\n"),
    "no-final-newline": lambda text: text.rstrip("\n"),
    "bom": lambda text: "\ufeff" + text,
    "bom-crlf-no-final-newline": lambda text: "\ufeff" + text.rstrip("\n").replace("\n", "\r\n"),
}


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("case", GOLDEN)
def test_golden(case: str, variant: str) -> None:
    convert = VARIANTS[variant]
    source = convert((NOTES / f"{case}.md").read_text(encoding="utf-8"))
    expected = convert((NOTES / f"{case}.expected.md").read_text(encoding="utf-8"))
    result = set_fields(source, GOLDEN[case])
    assert result == expected
    assert split_note(result).body == split_note(source).body
    assert set_fields(result, GOLDEN[case]) is result  # idempotent: nothing left to change


def test_golden_files_are_lf_with_final_newline() -> None:
    for path in NOTES.glob("*.md"):
        raw = path.read_bytes()
        assert b"\r" not in raw and raw.endswith(b"\n"), path.name


# --- set_fields: rules -----------------------------------------------------------------------


def test_touch_changes_exactly_two_lines() -> None:
    text = (NOTES / "memory.md").read_text(encoding="utf-8")
    now = dt.datetime(2026, 11, 22, 8, 30, tzinfo=UTC)
    result = set_fields(text, {"last_used": now, "use_count": 4})
    diff = [
        line
        for line in difflib.unified_diff(lines(text), lines(result), n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    assert diff == [
        "-last_used: 2026-11-21T17:40:55\n",
        "-use_count: 3\n",
        "+last_used: 2026-11-22T08:30:00\n",
        "+use_count: 4\n",
    ]
    assert len(result) == len(text)


def test_no_change_returns_the_same_text() -> None:
    text = '---\nstatus: "active"\ncount: 3\n---\nbody'
    assert set_fields(text, {"status": "active", "count": 3, "gone": DELETE}) is text
    assert set_fields(text, {}) is text
    assert set_fields("body only", {"gone": DELETE}) == "body only"


def test_equal_value_of_another_type_is_rewritten() -> None:
    text = "---\ncount: 1\nflag: 1\n---\n"
    assert set_fields(text, {"count": 1.0, "flag": True}) == "---\ncount: 1.0\nflag: true\n---\n"


def test_new_keys_are_appended_in_order_before_the_fence() -> None:
    text = "---\nb: 1\n# last comment\n\n---\nbody"
    result = set_fields(text, {"z": 1, "a": 2, "m": [3]})
    assert result == "---\nb: 1\n# last comment\n\nz: 1\na: 2\nm: [3]\n---\nbody"


def test_closing_fence_at_end_of_file() -> None:
    assert set_fields("---\na: 1\n---", {"b": 2}) == "---\na: 1\nb: 2\n---"
    assert set_fields("---\r\na: 1\r\n---", {"a": 2}) == "---\r\na: 2\r\n---"


def test_empty_frontmatter_block() -> None:
    assert set_fields("---\n---\nbody", {"a": "x"}) == "---\na: x\n---\nbody"
    assert (
        set_fields("---\n# just a comment\n---\n", {"a": 1}) == "---\n# just a comment\na: 1\n---\n"
    )


def test_no_frontmatter_keeps_bom_and_crlf() -> None:
    assert (
        set_fields("\ufeffline\r\nline 2", {"a": 1}) == "\ufeff---\r\na: 1\r\n---\r\nline\r\nline 2"
    )
    assert set_fields("", {"a": 1}) == "---\na: 1\n---\n"
    # a lone '---' first line without a closing fence is body, and stays so
    assert set_fields("---\nbody", {"a": 1}) == "---\na: 1\n---\n---\nbody"


def test_rewritten_line_keeps_its_own_ending() -> None:
    text = "---\na: 1\r\nb: 2\n---\n"  # mixed endings: the note's newline is LF
    assert set_fields(text, {"a": 5, "c": 6}) == "---\na: 5\r\nb: 2\nc: 6\n---\n"


def test_block_scalar_keeps_its_content_lines_that_look_like_comments() -> None:
    text = "---\nnote: |\n  line\n  # content, not a comment\n# a real comment\nb: 1\n---\n"
    assert set_fields(text, {"note": "short"}) == "---\nnote: short\n# a real comment\nb: 1\n---\n"
    assert frontmatter_of(text)["note"] == "line\n# content, not a comment\n"


def test_keep_chomping_block_scalar_and_multiline_strings() -> None:
    text = (
        "---\na: |+\n  x\n\n\nb: 'multi\n  line'\nc: \"q\n  r\"\nd: plain\n  continued\ne: 1\n---\n"
    )
    result = set_fields(text, {"a": 1, "b": 2, "c": 3, "d": 4})
    assert result == "---\na: 1\n\n\nb: 2\nc: 3\nd: 4\ne: 1\n---\n"


def test_comments_after_an_empty_value_stay() -> None:
    assert set_fields("---\n? a\n# c\n---\n", {"a": 1}) == "---\na: 1\n# c\n---\n"
    assert set_fields("---\na:\n# c\nb: 1\n---\n", {"a": 2}) == "---\na: 2\n# c\nb: 1\n---\n"
    text = "---\nt:\n  - x\n  -\n  # c\nb: 1\n---\n"
    assert set_fields(text, {"t": []}) == "---\nt: []\n  # c\nb: 1\n---\n"


def test_comment_between_key_and_value_stays_after_the_new_line() -> None:
    text = "---\nm:\n  # about m\n  value\nn: 1\n---\n"
    assert set_fields(text, {"m": "new"}) == "---\nm: new\n  # about m\nn: 1\n---\n"


def test_indented_root_mapping_gets_indented_new_keys() -> None:
    text = "---\n  a: 1\n  b: [x,\n    y]\n---\n"
    assert set_fields(text, {"b": [], "c": 2}) == "---\n  a: 1\n  b: []\n  c: 2\n---\n"


def test_explicit_key_is_rewritten_plainly() -> None:
    text = "---\n? a\n: 1\nb: 2\n---\n"
    assert set_fields(text, {"a": 3}) == "---\na: 3\nb: 2\n---\n"


def test_non_string_keys_match_as_written() -> None:
    text = "---\n1: one\ntrue: yes\n'2': two\n---\n"
    assert set_fields(text, {"1": "uno", "true": False, "2": DELETE}) == (
        "---\n1: uno\ntrue: false\n---\n"
    )


def test_anchor_and_merge_edits_are_refused_when_unsafe() -> None:
    text = "---\na: &x [1]\nb: *x\n---\n"
    with pytest.raises(FrontmatterError, match="would break it"):
        set_fields(text, {"a": 2})  # the alias would dangle
    assert set_fields(text, {"b": 3}) == "---\na: &x [1]\nb: 3\n---\n"
    merged = "---\nbase: &b {k: 1}\nm:\n  <<: *b\n---\n"
    assert frontmatter_of(merged)["m"] == {"k": 1}
    assert set_fields(merged, {"m": "x"}) == "---\nbase: &b {k: 1}\nm: x\n---\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("---\na: [\n---\n", "not valid YAML"),
        ("---\n- a\n---\n", "frontmatter is a list"),
        ("---\n{a: 1, b: 2}\n---\n", "flow mapping"),
        ("---\na: 1\nb: 2\na: 3\n---\n", "property 'a' appears 2 times (lines 2, 4)"),
        (
            "---\na: 1\n---\n<<<<<<< HEAD\nx\n=======\ny\n>>>>>>> b\n",
            "conflict markers (lines 4, 6, 8)",
        ),
        ("---\ncreated: {{date}}\n---\n", "unhashable key"),
    ],
)
def test_set_fields_refuses(text: str, message: str) -> None:
    with pytest.raises(FrontmatterError, match=re.escape(message)) as caught:
        set_fields(text, {"a": 5}, path="STM/x.md")
    assert str(caught.value).startswith("STM/x.md: ")


def test_set_fields_type_errors() -> None:
    with pytest.raises(TypeError):
        set_fields("---\na: 1\n---\n", {"a": {"nested": "dict"}})
    with pytest.raises(TypeError):
        set_fields("---\na: 1\n---\n", {1: 2})  # type: ignore[dict-item]


def test_safety_check_catches_a_broken_edit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(note_text, "render_value", lambda value: "[oops")
    with pytest.raises(FrontmatterError, match="left as it is"):
        set_fields("---\na: 1\n---\n", {"a": 2})
    monkeypatch.setattr(note_text, "render_value", lambda value: "7")
    with pytest.raises(FrontmatterError, match="intended values \\(keys a\\)"):
        set_fields("---\na: 1\n---\n", {"a": "seven"})


# --- set_fields: hypothesis ------------------------------------------------------------------

KEYS = ["id", "tags", "aliases", "my key", "a-b", "ключ", "日本語", "x.y", "status", "1", "yes"]
NEW_KEYS = ["last_used", "use_count", "related", "box", "new key", "ü", "strength"]
WORDS = ["hello", "hello world", "42", "3.5", "true", "2024-01-02", "2024-01-02T03:04:05", "",
         "null", "café", "~", "a-b"]  # fmt: skip
safe_text = st.text(
    st.characters(codec="utf-8", categories=["L", "N", "P", "S", "Zs"]), max_size=12
)


def quoted_single(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def quoted_double(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped + '"'


@st.composite
def key_text(draw: st.DrawFn, key: str) -> str:
    style = draw(st.sampled_from(["plain", "single", "double"]))
    return {"plain": key, "single": quoted_single(key), "double": quoted_double(key)}[style]


@st.composite
def entry_lines(draw: st.DrawFn, key: str) -> list[str]:
    """The lines (without endings) of one ``key: value`` entry in one of many YAML styles."""
    head = draw(key_text(key)) + ":"
    comment = draw(st.sampled_from(["", "  # trailing comment", " #c"]))
    item = st.sampled_from(["a", "b c", '"[[Link]]"', "'q'", "1", "x-y"])
    style = draw(st.sampled_from(
        ["plain", "single", "double", "flow", "block", "block0", "literal", "folded", "multiflow"]
    ))  # fmt: skip
    if style == "plain":
        word = draw(st.sampled_from(WORDS))
        return [f"{head} {word}{comment}" if word else f"{head}{comment}"]
    if style in ("single", "double"):
        quote = quoted_single if style == "single" else quoted_double
        return [f"{head} {quote(draw(safe_text))}{comment}"]
    items = draw(st.lists(item, min_size=1, max_size=3))
    if style == "flow":
        return [f"{head} [{', '.join(items)}]{comment}"]
    if style == "multiflow":
        return [f"{head} [{items[0]},", *[f"  {i}," for i in items[1:]], "  ]"]
    if style in ("block", "block0"):
        pad = "  " if style == "block" else ""
        body = [f"{pad}- {i}" for i in items]
        if len(body) > 1 and draw(st.booleans()):
            body.insert(1, f"{pad}# a comment inside the list")
        return [head + comment, *body]
    indicator = "|" if style == "literal" else ">"
    content = draw(st.lists(st.sampled_from(["text", "# looks like a comment", "a: b"]),
                            min_size=1, max_size=3))  # fmt: skip
    return [f"{head} {indicator}{comment}", *[f"  {c}" for c in content]]


@st.composite
def notes(draw: st.DrawFn) -> tuple[str, list[tuple[str | None, list[str]]], str, str]:
    """(note text, frontmatter segments (key or None for comment/blank, lines), newline, body)."""
    keys = draw(st.lists(st.sampled_from(KEYS), unique=True, max_size=7))
    segments: list[tuple[str | None, list[str]]] = []
    for key in keys:
        for _ in range(draw(st.integers(0, 2))):
            segments.append((None, [draw(st.sampled_from(["# a comment", "", "#", "#x: 1"]))]))
        segments.append((key, draw(entry_lines(key))))
    if draw(st.booleans()):
        segments.append((None, ["# closing comment"]))
    nl = draw(st.sampled_from(["\n", "\r\n"]))
    body = draw(st.text(max_size=40))
    if draw(st.booleans()):
        body += nl
    yaml_part = "".join(line + nl for _, seg in segments for line in seg)
    return "---" + nl + yaml_part + "---" + nl + body, segments, nl, body


new_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-10, 10**12),
    st.floats(allow_nan=True),
    st.text(max_size=15),
    st.sampled_from(["[[A]]", "true", "a: b", "#x"]),
    st.datetimes(min_value=dt.datetime(1970, 1, 1), timezones=st.sampled_from([None, UTC])),
    st.dates(min_value=dt.date(1000, 1, 1)),
    st.lists(st.sampled_from(["[[A]]", "[[B b]]", "editor", "ui", "x, y"]), max_size=3),
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), generated=notes())
def test_set_fields_keeps_every_other_byte(data: st.DataObject, generated: Any) -> None:
    text, segments, nl, body = generated
    assume(not find_conflict_markers(text))
    original = frontmatter_of(text)
    present = [key for key, _ in segments if key is not None]
    changes: dict[str, object] = {}
    for key in data.draw(
        st.lists(st.sampled_from(present), unique=True) if present else st.just([])
    ):
        changes[key] = data.draw(new_values | st.just(DELETE))
    for key in data.draw(st.lists(st.sampled_from(NEW_KEYS), unique=True, max_size=3)):
        changes[key] = data.draw(new_values)

    result = set_fields(text, changes)

    # (a) the mapping is the original with the changes applied
    expected = dict(original)
    for key, value in changes.items():
        if value is DELETE:
            expected.pop(key, None)
        else:
            expected[key] = read_back(value)
    assert strict_equal(frontmatter_of(result), expected)
    # (c) the body and the fences are identical
    after = split_note(result)
    assert after.body == body
    assert result.startswith("---" + nl) and result.endswith("---" + nl + body)
    # (b) every line of an unchanged key, comment or blank line is identical and in order;
    #     a changed key is one line (or none when deleted), its line's comment kept at its end
    #     (on a line of its own when deleted), the comment lines inside its list kept after it;
    #     new keys come last, in order
    template: list[tuple[str, str | None, str]] = []  # ("line", text, "") / ("key", key, comment)
    for key, seg in segments:
        unchanged = key not in changes or (
            changes[key] is not DELETE and strict_equal(original[key], read_back(changes[key]))
        )
        if key is None or unchanged:
            template += [("line", line + nl, "") for line in seg]
            continue
        comment = next((c for c in ("  # trailing comment", " #c") if seg[0].endswith(c)), "")
        if changes[key] is not DELETE:
            template.append(("key", key, comment))
        elif comment:
            template.append(("line", comment.lstrip() + nl, ""))
        template += [("line", line + nl, "") for line in seg[1:] if "comment inside" in line]
    template += [("key", key, "") for key in changes if key not in present]
    got = lines(after.yaml)
    assert len(got) == len(template)
    for line, (kind, what, comment) in zip(got, template, strict=True):
        if kind == "line":
            assert line == what
        else:
            assert what is not None and line.endswith(comment + nl)
            assert strict_equal(parse_frontmatter(line), {what: read_back(changes[what])})


@given(body=st.text(max_size=60), changes=st.dictionaries(st.sampled_from(NEW_KEYS), new_values))
def test_set_fields_without_frontmatter_adds_a_block(body: str, changes: dict[str, object]) -> None:
    assume(not split_note(body).has_frontmatter and not find_conflict_markers(body))
    assume(not body.startswith("\ufeff"))
    result = set_fields(body, changes)
    if not changes:
        assert result is body
        return
    assert result.endswith(body)
    assert split_note(result).body == body
    assert strict_equal(frontmatter_of(result), {k: read_back(v) for k, v in changes.items()})


# --- the real vaults -------------------------------------------------------------------------

REAL_VAULTS = {
    # vault: (notes, with frontmatter, without, frontmatter that does not parse)
    "kepano-obsidian": (103, 98, 5, 28),
    "13th-age-srd": (1003, 1001, 2, 0),
}


def vault_notes(name: str) -> list[Path]:
    root = VAULTS / name
    if not root.is_dir():
        pytest.skip(f"real vault {root} is not there")
    return sorted(
        path
        for path in root.rglob("*.md")
        if not any(part.startswith(".") for part in path.relative_to(root).parts)
    )


@pytest.mark.slow
@pytest.mark.parametrize("vault", REAL_VAULTS)
def test_real_vault_notes(vault: str) -> None:
    now = dt.datetime(2026, 11, 22, 8, 30, 15, tzinfo=UTC)
    changes = {"last_used": now, "use_count": 7}
    counts: Counter[str] = Counter()
    for path in vault_notes(vault):
        text = path.read_bytes().decode("utf-8")
        note = split_note(text)
        counts["notes"] += 1
        counts["with" if note.has_frontmatter else "without"] += 1
        try:
            fields = parse_frontmatter(note.yaml, path=path.name)
        except FrontmatterError:
            counts["unparsable"] += 1
            with pytest.raises(FrontmatterError):
                set_fields(text, changes)
            continue
        expected_yaml = yaml.load(note.yaml, Loader=yaml.SafeLoader) or {}
        assert fields == expected_yaml, path  # the fast loader reads what PyYAML reads
        assert "last_used" not in fields and "use_count" not in fields

        result = set_fields(text, changes, path=path.name)

        nl = note.newline
        added = [f"last_used: 2026-11-22T08:30:15{nl}", f"use_count: 7{nl}"]
        before, after = lines(text), lines(result)
        matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
        ops = [op for op in matcher.get_opcodes() if op[0] != "equal"]
        assert len(ops) == 1 and ops[0][0] == "insert", path
        _, i1, _, j1, j2 = ops[0]
        if note.has_frontmatter:
            assert after[j1:j2] == added, path
            fence_line = note.text[: note.yaml_offset + len(note.yaml)].count("\n")
            assert i1 == fence_line  # just before the closing fence
        else:
            assert after[j1:j2] == [f"---{nl}", *added, f"---{nl}"], path
            assert i1 == 0
        assert split_note(result).body == note.body
        edited = {**fields, "last_used": now.replace(tzinfo=None), "use_count": 7}
        assert strict_equal(frontmatter_of(result), edited)
    notes_, with_, without, unparsable = REAL_VAULTS[vault]
    expected = {"notes": notes_, "with": with_, "without": without, "unparsable": unparsable}
    assert counts == Counter({key: n for key, n in expected.items() if n})


# --- set_fields: the line scan of flat frontmatter -----------------------------------------


def _both_entries(text: str) -> tuple[list[Any], list[Any]] | None:
    """(line-scan entries, YAML-event entries) of ``text``'s frontmatter, when the fast path
    reads it and it is a non-empty mapping; else ``None``."""
    from vaultmem.core.notes.frontmatter_fast_path import parse_simple_frontmatter

    note = note_text.split_note(text)
    if not note.has_frontmatter or not parse_simple_frontmatter(note.yaml):
        return None
    lines = note_text._YAML_LINE.findall(note.yaml)
    return note_text._simple_entries(lines), frontmatter_yaml.yaml_entries(note.yaml, lines, "")[1]


@st.composite
def flat_notes(draw: st.DrawFn) -> str:
    """Notes whose frontmatter the fast path reads: plain keys, scalars, flow and block lists,
    empty values and blank lines in between."""
    words = st.sampled_from(["hello", "hello world", "42", "3.5", "true", "2024-01-02",
                             "2024-01-02T03:04:05", '"[[Link]]"', "'q'", "a-b"])  # fmt: skip
    out: list[str] = []
    for key in draw(st.lists(st.sampled_from(["id", "tags", "status", "a-b", "x_y", "box"]),
                             unique=True, min_size=1, max_size=6)):  # fmt: skip
        out += [""] * draw(st.integers(0, 1))
        style = draw(st.sampled_from(["plain", "flow", "block", "block0", "empty"]))
        items = draw(st.lists(words, min_size=1, max_size=3))
        if style == "plain":
            out.append(f"{key}: {items[0]}")
        elif style == "flow":
            out.append(f"{key}: [{', '.join(items)}]")
        elif style == "empty":
            out.append(f"{key}:")
        else:
            pad = "  " if style == "block" else ""
            out += [f"{key}:", *[f"{pad}- {item}" for item in items]]
            out += [""] * draw(st.integers(0, 1))
    return "---\n" + "".join(line + "\n" for line in out) + "---\nbody\n"


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(text=flat_notes())
def test_the_line_scan_finds_the_entries_yaml_events_find(text: str) -> None:
    both = _both_entries(text)
    assert both is not None, text
    assert both[0] == both[1]


def test_the_line_scan_agrees_with_yaml_events_on_real_and_written_notes() -> None:
    texts = [p.read_bytes().decode("utf-8", errors="replace")
             for name in REAL_VAULTS for p in vault_notes(name)]  # fmt: skip
    now = dt.datetime(2026, 11, 22, 8, 30, 15, tzinfo=UTC)
    texts += [
        note_text.render_note(
            {"id": "01ABC", "type": "memory", "status": "active", "created": now,
             "tags": ["tea", "x y"], "related": ["[[A b]]"], "pinned": False, "strength": 1.5},
            "body\n",
        ),  # fmt: skip
        "---\nid: A1\ntype: memory\ntags:\n  - tea\n\n  - pot\nrelated:\nbox: \"[[B]]\"\n---\nx\n",
        "---\ntags:\n- a\n- b\n\nstatus: active\n\n---\n",
        "---\nempty:\nlist: []\n---\n",
    ]
    compared = 0
    for text in texts:
        both = _both_entries(text)
        if both is not None:
            compared += 1
            assert both[0] == both[1], text[:300]
    assert compared > 100


@settings(max_examples=3000, deadline=None)
@given(
    text=st.one_of(
        st.sampled_from(["true", "No", "ON", "null", "~", "1_0", "0x1", "1:30", "last_used"]),
        st.text(alphabet="aZ0 _-.:/?'\"()!&*|>%@`<=~{}é’yYnN+eTtxolrsuf", min_size=1, max_size=8),
    ),
    flow=st.booleans(),
    key=st.booleans(),
)
def test_a_plain_write_reads_back_in_both_yaml_loaders(text: str, flow: bool, key: bool) -> None:
    """``_plain_ok`` mostly decides with the fast path, without YAML: whatever it writes plain,
    libyaml and PyYAML both read back as the same text (a key, a value, a flow-list item)."""
    flow = flow and not key
    if not yaml_scalars.plain_ok.__wrapped__(text, flow=flow, key=key):
        return
    source = f"{text}: k" if key else f"k: [{text}]" if flow else f"k: {text}"
    expected = {text: "k"} if key else {"k": [text] if flow else text}
    for loader in (getattr(yaml, "CSafeLoader", yaml.SafeLoader), yaml.SafeLoader):
        assert yaml.load(source, Loader=loader) == expected  # noqa: S506 (safe loaders)
