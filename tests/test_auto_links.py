"""Semantic auto-links at remember (spec 6; seed 000): content-token Jaccard > 0.10, at most 5.

Driven through the CLI (``vaultmem remember``) with CliRunner; every overlap a test relies on is
also computed with :func:`~vaultmem.core.recall.text_tokens.jaccard` so the threshold cases are
exact.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from vaultmem.cli import main
from vaultmem.core.recall.text_tokens import content_tokens, jaccard
from vaultmem.services.memories.auto_links import related_memories
from vaultmem.services.vault import Vault

NOW = "2026-11-20T09:00:00"


def run(*args: str, vault: Path | None = None) -> tuple[int, str, str]:
    argv = [*args, "--vault", str(vault)] if vault is not None else list(args)
    result = CliRunner().invoke(main, argv)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    code, _, err = run("init", str(tmp_path / "v"))
    assert code == 0, err
    return tmp_path / "v"


def remember(vault: Path, text: str, title: str, *extra: str) -> dict[str, object]:
    code, out, err = run("remember", text, "--title", title, "--json", "--now", NOW, *extra,
                         vault=vault)
    assert code == 0, err
    data: dict[str, object] = json.loads(out)
    return data


def overlap(a: str, b: str) -> float:
    return jaccard(content_tokens(a), content_tokens(b))


def test_similar_memory_is_linked_in_related(vault: Path) -> None:
    first = "Kayak trip on Lake Bled with Anna in June; we rented paddles."
    second = "Printed the kayak trip photos from Lake Bled."
    assert overlap(first, second) > 0.10
    remember(vault, first, "Bled kayak trip")
    data = remember(vault, second, "Bled photos")
    assert data["related"] == ["[[Bled kayak trip]]"]
    text = (vault / str(data["path"])).read_text(encoding="utf-8")
    frontmatter = text.split("---\n")[1]
    related_line = next(line for line in frontmatter.splitlines() if line.startswith("related"))
    assert "[[Bled kayak trip]]" in related_line


def test_overlap_at_or_below_the_threshold_is_not_linked(vault: Path) -> None:
    base = "alpha bravo charlie delta echo"
    at_threshold = "alpha foxtrot golf hotel india juliet"  # 1 shared of 10: exactly 0.10
    above = "alpha foxtrot golf hotel india"  # 1 shared of 9: 0.111
    assert overlap(base, at_threshold) == pytest.approx(0.10)
    assert overlap(base, above) > 0.10
    remember(vault, base, "Base")
    assert remember(vault, at_threshold, "At threshold")["related"] == []
    assert "[[Base]]" in remember(vault, above, "Above")["related"]  # type: ignore[operator]


def test_at_most_five_highest_overlap_first(vault: Path) -> None:
    words = ["amber", "basalt", "cobalt", "dahlia", "ember", "fennel", "garnet", "harbor",
             "indigo", "juniper"]
    for n in range(1, 8):  # M1 shares 9 words … M7 shares 3
        remember(vault, " ".join(words[: 10 - n]), f"M{n}", "--no-link")
    new = " ".join(words)
    assert [round(overlap(" ".join(words[: 10 - n]), new), 2) for n in (1, 5, 7)] == [
        0.9, 0.5, 0.3]
    assert remember(vault, new, "All ten")["related"] == [f"[[M{n}]]" for n in range(1, 6)]


def test_no_link_turns_it_off(vault: Path) -> None:
    remember(vault, "Kayak trip on Lake Bled with Anna.", "Bled kayak trip")
    code, out, err = run("remember", "Kayak trip photos from Lake Bled.", "--no-link",
                         "--now", NOW, vault=vault)
    assert code == 0, err
    assert out.startswith("remembered STM/Kayak trip photos from Lake Bled") and "(id " in out
    written = next(p for p in (vault / "STM").glob("Kayak trip photos*.md"))
    assert "related" not in written.read_text(encoding="utf-8")


def test_only_active_managed_memories_are_linked(vault: Path) -> None:
    body = "Quarterly tax return filed with the accountant in March."
    (vault / "Archive" / "Old tax.md").write_text(
        "---\nid: OLDTAX\ntype: memory\nstatus: archived\n---\n" + body + "\n", encoding="utf-8")
    (vault / "Notes").mkdir()
    (vault / "Notes" / "Tax notes.md").write_text(body + "\n", encoding="utf-8")
    remember(vault, body, "Tax memory")
    data = remember(vault, "The accountant filed the quarterly tax return.", "Tax again")
    assert data["related"] == ["[[Tax memory]]"]


def test_related_memories_api(vault: Path) -> None:
    remember(vault, "Grandma's apple pie recipe uses cinnamon and cloves.", "Apple pie")
    with Vault.open(vault) as opened:
        opened.sync()
        assert related_memories(opened, "Cinnamon apple pie for the party", ()) == ["Apple pie"]
        assert related_memories(opened, "the and of it", ()) == []  # no content tokens
        assert related_memories(opened, "Quantum chromodynamics lecture", ()) == []


def test_fts_stays_the_outer_loop_of_every_join(vault: Path) -> None:
    """With ``notes`` outside, FTS5 re-runs the whole match per row (minutes at 10k notes)."""
    remember(vault, "Grandma's apple pie recipe uses cinnamon and cloves.", "Apple pie")
    statements: list[str] = []
    with Vault.open(vault) as opened:
        opened.sync()
        opened.index.conn.set_trace_callback(statements.append)
        related_memories(opened, "Cinnamon apple pie for the party", ())
        opened.recall("apple pie", status="active", tag="food", sync=False)
        opened.index.conn.set_trace_callback(None)
        joins = [s for s in statements if "notes_fts" in s and "JOIN notes" in s]
        assert len(joins) >= 2
        for sql in joins:
            plan = opened.index.conn.execute("EXPLAIN QUERY PLAN " + sql).fetchall()
            first_loop = next(row[3] for row in plan if row[3].startswith(("SCAN", "SEARCH")))
            assert first_loop.startswith("SCAN notes_fts"), (first_loop, sql)
