"""The line-by-line code scanner (core/code_lines) and the inline HTML check agree with markdown-it:
with hypothesis over lists, quotes, callouts, tables and HTML, and over every note of a generated
vault shaped like obsidian-hub's plugin notes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import split_note
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from vaultmem.core.links.code_lines import text_outside_code_by_line
from vaultmem.core.links.code_spans import code_spans, html_may_take_backticks
from vaultmem.core.links.indented_code import FENCE_MARK
from vaultmem.core.links.links import Link, _normalise, _parsed_links, _scan, extract_links

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # benchmarks/ is not installed; plain `pytest` lacks the repo
    sys.path.insert(0, str(REPO))

from benchmarks.generate_vault import generate_hub_vault  # noqa: E402


def _by_line(body: str) -> list[object] | None:
    outside = text_outside_code_by_line(body)
    return None if outside is None else list(_scan(*outside))


def _assert_agrees_with_markdown_it(body: str) -> list[Link]:
    """The line scanner, where it is sure, and the whole extraction find what markdown-it's
    parse finds; returns that."""
    expected = _parsed_links(body)
    found = _by_line(body)
    if found is not None:
        assert found == expected
    assert extract_links(body) == expected
    return expected


HTML_PREFIXES = ["", "", "", "", " ", "    ", "- ", "* ", "1. ", "    - ", "        - ", "\t- ",
                 "> ", "> [!note] ", "> - ", "- > ", "| ", "  ", "   ", "  ", "     ", "      ",
                 "        ", "1.  ", " \t"]  # fmt: skip
HTML_BODIES = ["", "", "text", "Plugin ID: `x`", "`[[A]]`", "[[B]] `c`", "<div>", "</div>",
               "<details>", "<summary>s</summary>", '<span class="a">[[C]]</span>', "<br>",
               '<img src="x`y">', "<kbd>`</kbd> `k` [[D]]", "<pre>", "</pre>", "<http://a`b>`",
               "<a@b`c.d>` [[E]]", "a < b `c` [[F]]", "<!-- [[G]] -->", "<?x`?>`", "```",
               "~~~", "[t](c.md) `x`", "[[H]]", "| a | `b` | [[I]] |", "<a\nb>`", "x <y `z` [[J]]",
               "<a title='>`'>` [[K]]", "<![CDATA[`]]>`", "[r]: x.md", "## h `i`",
               "---", "`` ` `` [[L]]", "<script>", "<b>`</b>`", "<!-- a", "b --> [[M]]",
               "<!-- `x` --> `y` [[N]]", "<!-- [[O]] -->", "-->", "```", "```js", "~~~~",
               "`a` [[P]]", "```"]  # fmt: skip
htmlish = st.lists(
    st.tuples(st.sampled_from(HTML_PREFIXES), st.sampled_from(HTML_BODIES)), max_size=12
).map(lambda lines: "\n".join(p + b for p, b in lines))


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(htmlish)
def test_line_scanner_agrees_with_markdown_it_over_lists_quotes_and_html(body: str) -> None:
    body = _normalise(body)
    expected = _assert_agrees_with_markdown_it(body)
    assert _parsed_links(body, fast_inline=True) == expected


def _markdown_it_spans(source: str) -> list[tuple[int, int]]:
    """(start, end) of each code span markdown-it finds in one inline source."""
    md = MarkdownIt("commonmark")
    spans: list[tuple[int, int]] = []
    pos = 0
    for token in md.parseInline(source)[0].children or []:
        if token.type == "code_inline":
            start = source.index(token.markup, pos)
            end = source.index(token.markup, start + len(token.markup)) + len(token.markup)
            spans.append((start, end))
            pos = end
    return spans


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="<>`ab/!?:@ \"'=\n-", max_size=24))
def test_html_that_takes_no_backtick_leaves_code_spans_to_the_backticks(source: str) -> None:
    if "\n" in source.strip() or source != source.strip():
        return  # an inline source: no blank line, no surrounding whitespace
    if not html_may_take_backticks(source):
        spans = code_spans(source) or []
        assert [source[s:e] for s, e in spans] == [
            source[s:e] for s, e in _markdown_it_spans(source)
        ], source


@pytest.mark.parametrize(
    ("source", "takes"),
    [
        ("<kbd>Ctrl</kbd> `x`", False),
        ('<span class="a">[[B]]</span> `x`', False),
        ("a < b `c`", False),
        ('<a title="`">` `x`', True),  # the tag holds a backtick
        ("<http://a`b>`", True),  # so does the autolink
        ("<a@b`c.d>`", True),
        ("<!-- `x` -->", True),
        ("<a\nb>`x`", True),  # a tag over two lines is not followed
        ("`x` <b>", False),  # no backtick after the "<"
    ],
)
def test_inline_html_check(source: str, takes: bool) -> None:
    assert html_may_take_backticks(source) is takes


@pytest.fixture(scope="module")
def hub_vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hub")
    generate_hub_vault(root, 400, seed=3)
    return root


def test_line_scanner_agrees_over_a_hub_shaped_vault(hub_vault: Path) -> None:
    """Every note of a generated hub-shaped vault (backticks in list items, nested lists, HTML
    blocks, the HTML footer, fences in list items, callouts, comments) gives markdown-it's
    links, and no note needs markdown-it any more."""
    notes = sorted(hub_vault.rglob("*.md"))
    by_line = 0
    for path in notes:
        body = _normalise(split_note(path.read_text("utf-8"))[1])
        expected = _parsed_links(body)
        assert extract_links(body) == expected, path
        found = _by_line(body)
        if found is not None:
            by_line += 1
            assert found == expected, path
    assert len(notes) == 500
    assert by_line == len(notes)  # none needs markdown-it (each had, before issue 31)


def test_markdown_it_debug_logging_is_skipped_only_while_off() -> None:
    """markdown-it's block rules log each entry at DEBUG; while their loggers log no DEBUG the
    calls go to a stand-in that does nothing, and a logger set to DEBUG keeps its messages."""
    import logging

    from vaultmem.core.links.links import _block_markdown, _quiet_debug_logging, _QuietLogger

    _block_markdown().parse("- a\n")
    module = sys.modules["markdown_it.rules_block.list"]
    assert isinstance(module.LOGGER, _QuietLogger)
    assert module.LOGGER.debug("entering list: %s", 1, 2, False) == ""
    logger = logging.getLogger("markdown_it.rules_block.list")
    module.LOGGER = logger
    logger.setLevel(logging.DEBUG)
    try:
        _quiet_debug_logging.__wrapped__()
        assert module.LOGGER is logger
    finally:
        logger.setLevel(logging.NOTSET)
    _quiet_debug_logging.__wrapped__()
    assert isinstance(module.LOGGER, _QuietLogger)


@pytest.mark.parametrize(
    ("body", "taken"),
    [
        ("- a `b`\n\n<!-- [[A]]\n```\n[[B]] -->[[C]] `d`\n\ntext [[F]]", True),
        ("<!-- [[A]] -->\n    `x` [[B]]", False),  # then indented code: left to markdown-it
        ("x `y`\n<!-- [[A]] -->", False),  # inside a paragraph: left to markdown-it
        ("`a`\n\n<!-- [[A]]\n\n[[B]]", True),  # unclosed: to the end
    ],
)
def test_comment_blocks_at_top_level_are_cut(body: str, taken: bool) -> None:
    expected = _parsed_links(body)
    found = _by_line(body)
    assert (found is not None) is taken
    assert found is None or found == expected
    assert extract_links(body) == expected


INDENTS = ["", " ", "  ", "   ", "    ", "     ", "      ", "        "]
fence_lines = st.lists(
    st.tuples(st.sampled_from(INDENTS), st.sampled_from(["[[X]]", "`c` [[Y]]", "a", "", "```"])),
    max_size=3,
)
fence_blocks = st.tuples(
    st.sampled_from(INDENTS),
    st.sampled_from(["```", "~~~", "````", "```js"]),
    fence_lines,
    st.sampled_from(["same", "same", "other"]),
    st.sampled_from(INDENTS),
).map(
    lambda f: [
        f[0] + f[1],
        *(i + b for i, b in f[2]),
        (f[0] if f[3] == "same" else f[4]) + f[1][:4],
    ]
)
other_lines = st.tuples(
    st.sampled_from(INDENTS),
    st.sampled_from(["- a", "1. b", "text", "[[P]] `q`", "", "> c", "- [[Q]]", "<div>", "---"]),
).map(lambda line: [line[0] + line[1]])
fenced_lists = st.lists(st.one_of(fence_blocks, other_lines), min_size=1, max_size=5).map(
    lambda units: "\n".join(line for unit in units for line in unit)
)


@settings(max_examples=1200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fenced_lists)
def test_fences_indented_in_list_items_agree_with_markdown_it(body: str) -> None:
    """Fences indented by spaces (in list items, nested, after paragraphs, as indented code
    or paragraph text) are cut only where markdown-it reads a fence (found by such bodies: a
    fence indented under a paragraph is its text)."""
    _assert_agrees_with_markdown_it(body)


@pytest.mark.parametrize(
    ("body", "taken"),
    [
        ("1. a\n    ```js\n    [[X]]\n    ```\n2. b [[Y]]", True),  # the hub's shape
        ("- a `b`\n  ~~~\n\n  `[[X]]`\n  ~~~\n  [[Y]] `c`", True),
        ("a\n    ~~~\n    [[X]]\n    ~~~", False),  # paragraph text: left to markdown-it
        ("- a\n  ```\n  [[X]]\n ```\n[[Q]]", False),  # a closer indented otherwise
        ("  ```\n[[X]]\n  ```", False),  # a line less indented than the fence
    ],
)
def test_fences_indented_in_list_items(body: str, taken: bool) -> None:
    found = _by_line(body)
    assert (found is not None) is taken
    assert found is None or found == _parsed_links(body)
    assert extract_links(body) == _parsed_links(body)


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=" \t>-*+1.)xa", max_size=16))
def test_the_quick_look_for_wide_marker_gaps_never_changes_the_answer(line: str) -> None:
    """A marker followed by 5+ columns needs a tab or five spaces in a row: the check that
    looks for those first answers exactly as the column count does."""
    from vaultmem.core.links.indented_code import (
        _marker_opens_indented_code,
        _may_open_indented_code,
    )

    assert _may_open_indented_code(line) == _marker_opens_indented_code(line)


@pytest.mark.parametrize(
    ("line", "opens"),
    [("-     x", True), (">\t  x", True), ("1.     x", True), ("-    x", False),
     ("- \tx", False), ("-     ", False)],
)  # fmt: skip
def test_wide_marker_gaps_open_indented_code(line: str, opens: bool) -> None:
    from vaultmem.core.links.indented_code import _may_open_indented_code

    assert _may_open_indented_code(line) is opens


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="`a \\[]()", max_size=24), st.booleans())
def test_the_one_backtick_scan_finds_the_spans_the_general_scan_finds(
    source: str, paired: bool
) -> None:
    """Without a backslash or two backticks in a row, code spans are found by pairing each
    backtick with the next: the same spans (and the same "unpaired") as the general scan, and
    cutting them in the order found is cutting them sorted."""
    from vaultmem.core.links.code_spans import _scanned_spans, cut_code

    spans = code_spans(source, paired=paired)
    assert spans == _scanned_spans(source, paired)
    if spans:
        ordered: list[str] = []
        assert cut_code(source, spans, ordered, ordered=True) == cut_code(source, spans, [])


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=" \t>-*+1.)`x[]\n#<", max_size=40), st.booleans())
def test_indented_code_is_judged_alike_with_backticks_as_letters(
    body: str, html_at_top_level: bool
) -> None:
    """The line-by-line scanner asks whether a body may hold indented code with its backticks
    left in: the answer is the one the full question gives with each backtick read as a
    letter."""
    from vaultmem.core.links.indented_code import may_hold_code, may_hold_indented_code

    assert may_hold_indented_code(body, html_at_top_level=html_at_top_level) == may_hold_code(
        body.replace("`", "x"), html_at_top_level=html_at_top_level
    )


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=" \t>-*+1.)x=#_\n", max_size=40))
def test_the_list_walk_reads_a_text_line_without_asking_what_it_opens(body: str) -> None:
    """A line whose first character opens no block is text: the walk answers as when it asked
    :func:`_block_start` of every line (which says text for each such line)."""
    from vaultmem.core.links.indented_code import (
        _BLOCK_START_CHARS,
        _SETEXT_RE,
        _TEXT,
        _block_start,
    )

    for line in body.split("\n"):
        stripped = line.lstrip(" \t")
        if stripped and stripped[0] not in _BLOCK_START_CHARS:
            assert _block_start(stripped) == (_TEXT, None)
        if stripped and stripped[0] not in "=-":  # a setext underline is "=" or "-" only
            assert _SETEXT_RE.fullmatch(stripped) is None


WALK_PREFIXES = ["", "", " ", "  ", "   ", "    ", "     ", "      ", "        ", "\t", " \t",
                 "- ", "* ", "1. ", "2) ", "-     ", "- \t", "    - ", "      - ", "\t- ", "> ",
                 ">", "> - ", "- > ", ">     ", "# ", "  - ", "   1. ", "-", "1."]  # fmt: skip
WALK_BODIES = ["", "", "", "x", "a b", "- x", "# h", "---", "===", "***", "> q", "    x", "\tx",
               "<div>", "[r]: x", "x    y", "-"]  # fmt: skip
walkable = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(WALK_PREFIXES), st.sampled_from(WALK_BODIES)),
        st.sampled_from([("", ""), ("  ", FENCE_MARK), ("    ", FENCE_MARK), ("", FENCE_MARK)]),
    ),
    max_size=14,
).map(lambda lines: "\n".join(p + b for p, b in lines))


@settings(max_examples=4000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(walkable)
def test_the_list_walk_answers_alike_when_it_walks_only_some_stretches(body: str) -> None:
    """The walk starts afresh at each line that stands at column 0 after an empty line, and
    skips the stretches without four spaces, a tab or a ``>``: it answers as the walk over the
    whole body does."""
    from vaultmem.core.links.indented_code import _list_walk_finds_code, _walk_finds_code

    assert _list_walk_finds_code(body) == _walk_finds_code(body)


SPAN_LINES = ["x `y", "z` w", "[[X]]", "`a` [[B]]", "[t](c.md) `d`", "\\`e", "``f``", "`` ` ``",
              "g `` h", "[[C]] `i", "`[[D]]`", "", "- `j` [[E]]", "k ` l ` m", "\\\\`n`",
              "[u](`v`.md)"]  # fmt: skip


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(SPAN_LINES), max_size=8).map("\n".join))
def test_code_spans_are_cut_only_where_a_link_may_be(body: str) -> None:
    """Lines without ``[`` keep their code spans (no link sits there), yet a backtick that
    finds no closer on its line still makes the scanner unsure: a span may run over lines and
    hide a link on the next."""
    _assert_agrees_with_markdown_it(body)


@pytest.mark.parametrize(
    ("body", "sure"),
    [("x `y\n[[X]]\nz` w", False), ("x `y` z\n[[X]]", True), ("a `` b\n[[X]]", False),
     ("Plugin ID: `p`\n- [[X]] `q`", True)],
)  # fmt: skip
def test_an_unpaired_backtick_on_a_line_without_links_is_not_sure(body: str, sure: bool) -> None:
    assert (text_outside_code_by_line(body) is not None) is sure
    assert extract_links(body) == _parsed_links(body)


@settings(max_examples=4000, deadline=None)
@given(st.text(alphabet=" \t>-*+1.)x\n", max_size=40))
@example("\t\n-     x")
def test_wide_marker_gaps_are_found_by_searching_for_tabs_and_five_spaces(body: str) -> None:
    """The lines asked whether a marker opens indented code are found by searching for a tab
    or five spaces in a row: the answer is the one asking each line the expression for a marker
    followed by four spaces or a tab picks out gives."""
    import re

    from vaultmem.core.links.indented_code import _marker_opens_indented_code, _wide_marker_gap

    marker_then_ws = re.compile(r"\n[ \t>*+\-0-9.)]*?(?:>|[-+*]|[0-9][.)])(?: {4}| {0,3}\t)")
    text = "\n" + body
    expected = any(
        _marker_opens_indented_code(text[m.start() + 1 :].split("\n", 1)[0])
        for m in marker_then_ws.finditer(text)
    )
    assert _wide_marker_gap(body) is expected


class _Everything:
    """A set that holds everything (so no bullet line takes the walk's shortcut)."""

    def __contains__(self, item: object) -> bool:
        return True


ITEM_PREFIXES = ["", " ", "  ", "   ", "    ", "     ", "      ", "        ", "\t", " \t", "> "]
ITEM_LINES = ["- x", "* x", "+ x", "- - x", "-  x", "- \tx", "- ", "-", "- #", "- 1. x",
              "x", "1. x", "2) x", "# h", "---", "- > q", "* * *", "- =", "", "", "> x",
              "-\tx"]  # fmt: skip
nested_lists = st.lists(
    st.tuples(st.sampled_from(ITEM_PREFIXES), st.sampled_from(ITEM_LINES)), max_size=14
).map(lambda lines: "\n".join(p + b for p, b in lines))


@settings(max_examples=4000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nested_lists)
@example("- > q\n  2) x\n\n      z")  # a quote's paragraph: any list item ends it
@example("> q\n- x\n  2) y\n\n      z")  # after the bullet, no quote's paragraph is open
def test_the_list_walk_reads_a_bullet_line_opening_a_paragraph_without_asking(body: str) -> None:
    """A ``- text`` line (a bullet, one space, text that opens no block) is taken by the walk
    without asking :func:`_block_start` what it opens: the walk answers as when it asks."""
    from vaultmem.core.links import indented_code

    quick = indented_code._walk_finds_code(body)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(indented_code, "_NOT_TEXT_START", _Everything())
        assert indented_code._walk_finds_code(body) is quick


@pytest.mark.parametrize("body", ["<div> `[[A]]`", "<div>\n`[[A]]`", "x\n\n<div> `[[A]]`\n"])
def test_a_backtick_in_an_html_block_is_no_code(body: str) -> None:
    """An HTML block keeps its text as it stands: a backtick on its first line or after it
    makes the line scanner unsure, and the parser keeps the link."""
    assert text_outside_code_by_line(body) is None
    assert extract_links(body) == _parsed_links(body) == [Link("A", "wikilink")]


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=" \t>-*+1.)<x\n", max_size=30))
def test_lines_the_paragraph_scanner_does_not_follow_are_found_after_a_line_break(
    body: str,
) -> None:
    """The search for a quote, list item or HTML line anywhere in a body runs over ``"\\n" +
    body`` from a literal line break: it finds one exactly where the expression anchored at
    each line start (``^``, multi-line) does."""
    import re

    from vaultmem.core.links.code_spans import _UNSURE_ANYWHERE_RE

    anchored = re.compile(
        r"^ {0,3}(?:>|<|[-+*](?:[ \t]|$)|[0-9]{1,9}[.)](?:[ \t]|$))", re.MULTILINE
    )
    assert (_UNSURE_ANYWHERE_RE.search("\n" + body) is None) is (anchored.search(body) is None)
