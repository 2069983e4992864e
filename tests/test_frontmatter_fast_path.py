"""The frontmatter fast path returns exactly what YAML returns, or steps aside."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import SHARED_VAULTS
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultmem.core.notes.frontmatter_fast_path import (
    PLACEHOLDER_PROBLEM,
    implicit_tag,
    parse_simple_frontmatter,
    template_placeholder,
)
from vaultmem.core.notes.frontmatter_yaml import _HANDLER, FastLoader, yaml_error
from vaultmem.core.notes.note_text import FrontmatterError, parse_frontmatter, split_note


def _yaml(text: str) -> Any:
    try:
        return _HANDLER.load(text, Loader=FastLoader) or {}  # parse_frontmatter: empty -> {}
    except (yaml.YAMLError, ValueError):
        return "error"


def _pure_yaml(text: str) -> Any:
    """PyYAML's pure-Python loader: what vaultmem reads where libyaml is missing."""
    try:
        return yaml.load(text, Loader=yaml.SafeLoader) or {}
    except (yaml.YAMLError, ValueError):
        return "error"


SCALARS = st.one_of(
    st.sampled_from(
        [
            "true",
            "false",
            "True",
            "yes",
            "no",
            "on",
            "off",
            "null",
            "Null",
            "~",
            "y",
            "n",
            "0",
            "-3",
            "007",
            "0x1F",
            "0o17",
            "1_000",
            "1e3",
            "1.5",
            ".5",
            "-0.25",
            ".inf",
            ".nan",
            "1:20",
            "2026-11-20",
            "2026-11-20T09:14:03",
            "2026-02-30",
            "2026-11-20 09:14:03",
            "01JDGZ6Q4V7C2M9R0S8T5W3XYZ",
            "memory",
            "hello world",
            "café",
            "a-b",
            "a.b",
            "a/b",
            '"[[Link]]"',
            "'single'",
            "'it''s'",
            '"say \\"hi\\""',
            '"a: b"',
            "[[Link]]",
            "https://example.com/a-b?x=1&y=2",
            "1st level+",
            "+002023-02-07 2316",
            "Wood Nymph (Dryad)",
            "Gauntlet's Mascot",
            'say "hi"',
            "it’s 5:30",
            "a:b",
            "a:",
            "a ? b",
            "a?b",
            "yEs",
            "NULL",
            "<<",
            "=",
            "+1",
            "+.inf",
            "0b101",
            "1_0.5",
            "2026-1-2 3:04:05",
            "[[Link]]",
            "a: b",
            "-",
            "- x",
            "|",
            ">",
            "&a x",
            "*a",
            "!tag x",
            "@x",
            "`x`",
            "%x",
            "x # c",
            "#c",
            "",
        ]
    ),
    st.text(alphabet="abcXYZ019 -_.:/#'\"[],", max_size=12),
    st.text(alphabet="ay0 +-.:/?'\"()!&*|>%@`<=~{}é’", max_size=10),
)
KEYS = st.sampled_from(["id", "type", "tags", "last_used", "use_count", "a-b", "x_y", "1", "k"])


@st.composite
def frontmatters(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        key = draw(KEYS)
        form = draw(st.integers(0, 3))
        if form == 0:
            lines.append(f"{key}: {draw(SCALARS)}")
        elif form == 1:
            items = draw(st.lists(SCALARS, max_size=3))
            lines.append(f"{key}: [{', '.join(items)}]")
        elif form == 2:
            lines.append(f"{key}:")
            indent = draw(st.sampled_from(["", "  ", "    "]))
            lines += [f"{indent}- {item}" for item in draw(st.lists(SCALARS, max_size=3))]
        else:
            lines.append(draw(st.sampled_from(["", "  ", "# note", f"{key}:value", f" {key}: x"])))
    return "\n".join(lines)


@settings(max_examples=3000, deadline=None)
@given(frontmatters())
def test_fast_path_agrees_with_yaml_or_steps_aside(text: str) -> None:
    fast = parse_simple_frontmatter(text)
    if fast is not None:
        assert fast == _yaml(text)
        assert [type(v) for v in fast.values()] == [type(v) for v in _yaml(text).values()]
        assert fast == _pure_yaml(text)


@settings(max_examples=5000, deadline=None)
@given(
    st.one_of(
        st.text(alphabet="0123456789-+._:eEbxoaAfFtTyYnNlLuUsSrR~<= \t", min_size=1, max_size=20),
        st.text(min_size=1, max_size=8),
    )
)
def test_implicit_tag_is_pyyamls_resolver(text: str) -> None:
    resolver = yaml.resolver.Resolver()
    assert implicit_tag(text) == resolver.resolve(yaml.ScalarNode, text, (True, False))


def test_plain_scalars_beyond_words_need_no_yaml() -> None:
    text = (
        "url: https://stephango.com/evergreen-notes\nlevel: [1st level+]\n"
        "aliases: [Wood Nymph (Dryad), Beast Gauntlet's Mascot]\n"
        "created: +002023-02-07 2316\nsource: [https://keith-baker.com/eberron-and-13th-age/]"
    )
    fast = parse_simple_frontmatter(text)
    assert fast == _yaml(text) == _pure_yaml(text)
    assert fast is not None and fast["level"] == ["1st level+"]
    for stepped_aside in ("a: b: c", "a: [x?]", "a: x:", "a: -x", "a: [b:]", "a: 1:30", "a: Yes"):
        assert parse_simple_frontmatter(stepped_aside) is None, stepped_aside


def test_fast_path_takes_the_notes_vaultmem_writes() -> None:
    text = (
        "id: 01JDGZ6Q4V7C2M9R0S8T5W3XYZ\ntype: memory\nstatus: active\ncreated: "
        "2026-11-20T09:14:03\nuse_count: 3\nstrength: 1.2\npinned: false\ntags: [editor, ui]\n"
        'box: "[[box-2026-11-20-editor]]"\nrelated: ["[[Dark mode everywhere]]"]'
    )
    fast = parse_simple_frontmatter(text)
    assert fast is not None and fast == _yaml(text)


@pytest.mark.parametrize("vault", ["kepano-obsidian", "13th-age-srd"])
def test_fast_path_agrees_on_every_real_note(vault: str) -> None:
    taken = 0
    for path in sorted((SHARED_VAULTS / vault).rglob("*.md")):
        parts = split_note(path.read_text(encoding="utf-8"))
        if not parts.has_frontmatter:
            continue
        fast = parse_simple_frontmatter(parts.yaml)
        if fast is not None:
            taken += 1
            assert fast == _yaml(parts.yaml), Path(path).name
    assert taken > 0


def test_dates_take_ascii_digits_only() -> None:
    # "\d" would read Arabic-Indic digits as a date; YAML reads them as a string
    for text in ("created: ٢٠٢٦-١١-٢٠", "at: [٢٠٢٦-١١-٢٠]", "at:\n  - ١٢٣٤-٠١-٠١"):
        fast = parse_simple_frontmatter(text)
        assert fast is not None and fast == _yaml(text), text
        value = next(iter(fast.values()))
        assert isinstance(value if isinstance(value, str) else value[0], str)


PLACEHOLDERS = st.sampled_from(["{{date}}", "{{ title }}", "{{time}}", "{{date:YYYY}}", "{{a b}}"])


@st.composite
def templates(draw: st.DrawFn) -> str:
    lines = draw(frontmatters()).split("\n")
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(lines)))
        lines.insert(at, f"{draw(KEYS)}: {draw(PLACEHOLDERS)}{draw(st.sampled_from(['', ' ']))}")
    return "\n".join(lines)


def _yaml_failure(text: str, loader: Any) -> tuple[str, int, int] | None:
    try:
        yaml.load(text, Loader=loader)
    except yaml.MarkedYAMLError as exc:
        assert exc.problem_mark is not None
        return f"{exc.problem} ({exc.context})", exc.problem_mark.line, exc.problem_mark.column
    return None


@settings(max_examples=2000, deadline=None)
@given(templates())
def test_a_template_placeholder_fails_where_yaml_fails(text: str) -> None:
    found = template_placeholder(text)
    if found is not None:
        expected = (PLACEHOLDER_PROBLEM, *found)
        assert _yaml_failure(text, FastLoader) == expected
        assert _yaml_failure(text, yaml.SafeLoader) == expected


def test_template_notes_get_yamls_message_without_yaml() -> None:
    # the 28 templates of kepano-obsidian hold "created: {{date}}" and the like
    checked = 0
    for path in sorted((SHARED_VAULTS / "kepano-obsidian" / "Templates").rglob("*.md")):
        text = split_note(path.read_text(encoding="utf-8")).yaml
        if template_placeholder(text) is None:
            continue
        with pytest.raises(FrontmatterError) as raised:
            parse_frontmatter(text)
        try:
            _HANDLER.load(text, Loader=FastLoader)
        except yaml.YAMLError as exc:
            assert str(raised.value) == str(yaml_error(exc, "", 2))
        else:
            raise AssertionError(f"YAML reads {path.name}")
        checked += 1
    assert checked >= 20
    assert template_placeholder("a: {{date}}\nb: [x") is None  # YAML fails elsewhere first
    assert template_placeholder("a: {{date}} x") is None


_PATTERNS = {  # what the fast path's string checks stand for (they replaced these expressions)
    "_is_key": r"[A-Za-z_][A-Za-z0-9_-]*\Z",
    "_is_int": r"-?(?:0|[1-9][0-9]*)\Z",
    "_is_float": r"-?(?:0|[1-9][0-9]*)\.[0-9]+\Z",
}


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet="-_.09aZT: '\"\\\u0662\u00b2", max_size=20))
def test_the_string_checks_match_the_expressions_they_replaced(text: str) -> None:
    import re

    from vaultmem.core.notes import frontmatter_fast_path as fast

    for name, pattern in _PATTERNS.items():
        assert getattr(fast, name)(text) == bool(re.match(pattern, text)), (name, text)
    assert _stamp_read(text) == _stamp_by_expression(text), text
    quoted = re.match(r'"([^"\\]*)"\Z|\'([^\']*)\'\Z', text)
    inner = None if quoted is None else next(g for g in quoted.groups() if g is not None)
    assert fast._unquoted(text) == inner


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=' -\ta:"', max_size=12))
def test_list_items_are_what_the_expression_took(line: str) -> None:
    import re

    from vaultmem.core.notes import frontmatter_fast_path as fast

    item = re.match(r"([ ]*)-[ ]+(.*?)[ ]*\Z", line)
    assert fast._list_item(line) == (None if item is None else item.groups()), line


def _stamp_by_expression(text: str) -> object:
    """What the fast path read a timestamp as when it took it apart with an expression: a date,
    a datetime, ``"impossible"`` (the right shape, no such day) or ``None`` (another shape)."""
    import re

    stamp = re.match(
        r"([0-9]{4})-([0-9]{2})-([0-9]{2})(?:T([0-9]{2}):([0-9]{2}):([0-9]{2}))?\Z", text
    )
    if stamp is None:
        return None
    numbers = [int(g) for g in stamp.groups() if g is not None]
    try:
        return (dt.datetime if len(numbers) == 6 else dt.date)(*numbers)
    except ValueError:
        return "impossible"


def _stamp_read(text: str) -> object:
    from vaultmem.core.notes import frontmatter_fast_path as fast

    try:
        return fast._timestamp(text)
    except fast._NotSimple:
        return "impossible"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-27", dt.date(2026, 11, 27)),
        ("2026-11-27T09:05:00", dt.datetime(2026, 11, 27, 9, 5)),
        ("1999-01-01", dt.date(1999, 1, 1)),
        ("0000-00-00T00:00:00", "impossible"),
        ("2023-02-30", "impossible"),
        ("2026-11-27 09:05:00", None),
        ("2026-11-2", None),
        ("٢٠٢٦-١١-٢٠", None),
    ],
)
def test_timestamps_of_the_right_shape_are_read(text: str, expected: object) -> None:
    assert _stamp_read(text) == expected == _stamp_by_expression(text)


@settings(max_examples=3000, deadline=None)
@given(st.data())
def test_timestamp_shapes_are_read_as_the_expression_took_them(data: st.DataObject) -> None:
    shape = data.draw(st.sampled_from(["dddd-dd-dd", "dddd-dd-ddTdd:dd:dd"]))
    digit = st.sampled_from("0123456789")
    anything = st.sampled_from("0123456789-T:x \u0662\u00b2")
    text = "".join(data.draw(digit if c == "d" else anything) for c in shape)
    if data.draw(st.booleans()):  # now and then a character anywhere may be another
        at = data.draw(st.integers(0, len(text) - 1))
        text = text[:at] + data.draw(anything) + text[at + 1 :]
    assert _stamp_read(text) == _stamp_by_expression(text), text


@settings(max_examples=2000, deadline=None)
@given(
    st.lists(
        st.sampled_from(["created", "x-y", "_k", "9", ":", " ", "  ", "{{", "}}", "{", "}",
                         "date", "a b", "\t", "-", "title"]),
        max_size=9,
    )
)  # fmt: skip
def test_placeholder_lines_are_what_the_expression_took(parts: list[str]) -> None:
    import re

    from vaultmem.core.notes.frontmatter_fast_path import placeholder_key

    line = "".join(parts)
    expected = re.match(
        r"([A-Za-z_][A-Za-z0-9_-]*):[ ]+\{\{[ ]*[A-Za-z_][A-Za-z0-9_]*[ ]*\}\}[ ]*\Z", line
    )
    assert placeholder_key(line) == (expected.group(1) if expected else None), line


def test_lines_read_once_never_push_out_the_repeated_ones() -> None:
    from vaultmem.core.notes import frontmatter_fast_path as fast

    common = "type: memory\nstatus: active"
    assert parse_simple_frontmatter(common) == parse_simple_frontmatter(common)
    for n in range(3 * fast._READ_ONCE_MAX):  # many notes, each with an id of its own
        assert parse_simple_frontmatter(f"id: note{n}\n{common}") == {
            "id": f"note{n}", "type": "memory", "status": "active"}  # fmt: skip
    assert "type: memory" in fast._LINE_CACHE and "status: active" in fast._LINE_CACHE
    assert len(fast._READ_ONCE) <= fast._READ_ONCE_MAX
