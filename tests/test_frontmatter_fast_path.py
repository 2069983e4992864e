"""The frontmatter fast path returns exactly what YAML returns, or steps aside."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import SHARED_VAULTS
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultmem.core.frontmatter_fast_path import parse_simple_frontmatter
from vaultmem.core.note_text import _HANDLER, _Loader, split_note


def _yaml(text: str) -> Any:
    try:
        return _HANDLER.load(text, Loader=_Loader) or {}  # parse_frontmatter: empty -> {}
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

