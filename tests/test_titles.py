"""Every title gives a visible, findable note that every synced device can store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from vaultmem import Vault
from vaultmem.cli import main
from vaultmem.core.notes.naming import (
    FORBIDDEN_CHARS,
    MAX_TITLE_BYTES,
    WINDOWS_RESERVED,
    safe_title,
    title_from_content,
)
from vaultmem.errors import InputError

NOW = "2026-11-20T09:00:00"
DECORATION_BYTES = 60
"""Room left for the longest temporary / set-aside name built from a note's file name."""


def run(*args: str, vault: Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [*args, "--vault", str(vault)])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    Vault.init(root)
    return root


HOSTILE_TITLES = [
    "../../escape",
    ". . hidden",
    "/etc/passwd",
    "a/b\\c",
    "..",
    "CON",
    "nul.txt",
    "Com1",
    "lpt9 ",
    "x" * 300,
    "😀" * 80,
    "👩‍👩‍👧‍👦" * 30,
    "漢" * 85,
    "é" * 200,
    "bell\x07and\x00null",
    "trailing dots...  ",
    ':<>|?*"',
    "%%comment%%",
    "[[link]]#heading^block",
]


@pytest.mark.parametrize("title", HOSTILE_TITLES)
def test_every_title_gives_a_visible_findable_note(vault: Path, title: str) -> None:
    code, out, err = run(
        "remember", "Hostile titles are tamed", "--title", title, "--json", vault=vault
    )
    if not safe_title(title):  # nothing left of it: refused, not saved as "Memory <id>"
        assert code == 1 and "is empty once cleaned into a file name" in out + err, out
        assert not any((vault / "STM").glob("*.md"))
        return
    assert code == 0, err
    data = json.loads(out)
    path = vault / data["path"]
    assert path.is_file() and path.parent == vault / "STM"
    name = path.name
    assert not name.startswith(".") and not name.removesuffix(".md").endswith((".", " "))
    assert len(name.encode("utf-8")) + DECORATION_BYTES <= 255
    assert not any(ch in name for ch in FORBIDDEN_CHARS)
    assert name.split(".")[0].strip().upper() not in WINDOWS_RESERVED
    assert not any(ord(ch) < 32 for ch in name)
    code, out, err = run("show", data["id"], "--json", vault=vault)
    assert code == 0 and json.loads(out)["path"] == data["path"]
    listed = json.loads(run("list", "--json", vault=vault)[1])["memories"]
    assert [row["path"] for row in listed] == [data["path"]]


def test_a_lone_surrogate_in_a_title_or_content_is_refused(vault: Path) -> None:
    with Vault.open(vault) as v:
        with pytest.raises(InputError, match="title holds a lone surrogate"):
            v.remember("Surrogates cannot be encoded", title="odd\ud800title")
        with pytest.raises(InputError, match="content holds a lone surrogate"):
            v.remember("bytes \udcff from a bad terminal")
    assert list((vault / "STM").glob("*.md")) == []
    assert safe_title("odd\ud800title") == "oddtitle"


def test_a_long_title_with_a_clash_counter_stays_within_255_bytes(vault: Path) -> None:
    title = "漢字 " * 100
    with Vault.open(vault) as v:
        paths = [v.remember(f"long title, memory {n}", title=title).path for n in range(3)]
    assert paths[1].endswith(" 2.md") and paths[2].endswith(" 3.md")
    for rel in paths:
        assert len(Path(rel).name.encode()) + DECORATION_BYTES <= 255


@given(st.text(max_size=400))
def test_safe_titles_are_safe_file_names_everywhere(text: str) -> None:
    title = safe_title(text)
    assert len(title.encode("utf-8")) <= MAX_TITLE_BYTES
    assert not any(ch in title for ch in FORBIDDEN_CHARS)
    assert not any(ord(ch) < 32 or 0xD800 <= ord(ch) <= 0xDFFF for ch in title)
    assert not title.startswith(".") and not title.endswith((".", " "))
    assert title.split(".")[0].strip().upper() not in WINDOWS_RESERVED


@given(
    st.sampled_from("aZ09"),
    st.text(st.characters(blacklist_categories=("Zs", "Zl", "Zp", "Cc")), max_size=300),
)
def test_a_word_starting_with_an_ascii_letter_or_digit_is_never_cleaned_away(
    first: str, rest: str
) -> None:
    # default titles keep such a word without cleaning it first (the import's fast path)
    word = first + rest
    assert safe_title(word)
    assert title_from_content(f"{word} and more")


def test_default_titles_end_at_a_word_and_outside_brackets() -> None:
    assert (
        title_from_content("Promised to send Bob the tart recipe (the one with pears) tomorrow")
        == "Promised to send Bob the tart recipe"
    )
    assert (
        title_from_content("Promised to send Bob the tart recipe ( with pears)")
        == "Promised to send Bob the tart recipe"
    )
    assert title_from_content("Bought milk, eggs, bread, butter, jam, cheese, tea, and more") == (
        "Bought milk, eggs, bread, butter, jam, cheese, tea"
    )
    assert title_from_content("Lunch (with Ana) went well today and we talked") == (
        "Lunch (with Ana) went well today"
    )
    long_word = "Supercalifragilistic" * 10
    assert len(title_from_content(long_word).encode()) <= MAX_TITLE_BYTES


def test_default_title_of_a_remembered_memory(vault: Path) -> None:
    code, out, err = run(
        "remember",
        "Promised to send Bob the tart recipe (the one with pears) by Friday",
        "--json",
        vault=vault,
    )
    assert code == 0, err
    assert json.loads(out)["path"] == "STM/Promised to send Bob the tart recipe.md"


def test_a_title_clash_with_a_persons_note_is_reported(vault: Path) -> None:
    (vault / "Travel").mkdir()
    (vault / "Travel" / "Kyoto.md").write_text("# Kyoto\nTemples and gardens.\n")
    code, out, err = run(
        "remember", "Kyoto trip is in April", "--title", "Kyoto", "--json", vault=vault
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["path"] == "STM/Kyoto 2.md"
    assert data["title_clash"] == {
        "requested": "Kyoto",
        "taken_by": "Travel/Kyoto.md",
        "saved_as": "Kyoto 2",
    }
    assert "Travel/Kyoto.md (a note of yours, not a memory)" in err
    assert "saved as 'Kyoto 2'" in err
    code, out, err = run("remember", "Another note about Kyoto", "--title", "kyoto", vault=vault)
    assert code == 0 and "saved as 'kyoto 3'" in err and "remembered STM/kyoto 3.md" in out


def test_default_titles_clashing_with_memories_are_numbered_quietly(vault: Path) -> None:
    for ending in ("first", "second"):  # the same first words: the same default title
        code, out, err = run(
            "remember", f"Same words again and again and again, then {ending}", vault=vault
        )
        assert code == 0 and "warning" not in err
    assert (vault / "STM" / "Same words again and again and again 2.md").is_file()
