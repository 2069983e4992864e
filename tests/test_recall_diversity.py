"""Near-duplicates do not fill a recall page (issue: seven "Meeting notes day N" hid the standup).

The core function on hand-made candidates, then real vaults in tmp_path searched through the
real index: keyword recall, and hybrid recall with the packaged model when it is installed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_recall import NOW, memory

from vaultmem.core.recall.recall_diversity import spread_near_duplicates
from vaultmem.core.recall.text_tokens import content_tokens
from vaultmem.services.semantic.embedding_providers import (
    EmbeddingUnavailableError,
    LocalOnnxProvider,
)
from vaultmem.services.semantic.embeddings import embed_notes
from vaultmem.services.vault import Vault

DAYS = (4, 8, 12, 16, 20, 24, 28)
OTHERS = (
    "Team offsite planned for March in Lisbon.",
    "Meeting with the landlord about the lease renewal.",
    "The dentist appointment moved to Thursday afternoon.",
    "Sara prefers oat milk in her coffee.",
    "The quarterly review meeting is on the first Monday of each quarter.",
    "Gym membership renews in June.",
    "Project Falcon ships its beta on 14 May; the team demo is the day before.",
    "Call mum on Sunday evenings.",
)


def test_near_duplicates_move_behind_the_distinct_candidates() -> None:
    texts = ["meeting notes day 4 sprint board release checklist",
             "meeting notes day 8 sprint board release checklist",
             "standup every weekday small room",
             "meeting notes day 12 sprint board release checklist",
             "lunch on fridays thai place"]
    words = [content_tokens(t) for t in texts]
    spread = spread_near_duplicates(range(5), 3, lambda i: words[i])
    assert spread.order[:3] == [0, 2, 4]  # one meeting note, then the distinct ones
    assert sorted(spread.order) == [0, 1, 2, 3, 4] and spread.held == {1, 3}
    # a cosine at or above the threshold is a near-duplicate even when the words differ
    spread = spread_near_duplicates(range(3), 3, lambda i: frozenset({str(i)}),
                                    lambda i, j: 0.95 if {i, j} == {0, 2} else 0.1)
    assert spread.order == [0, 1, 2] and spread.held == {2}
    # too few distinct candidates: the held-back ones still fill the page, in their order
    assert spread_near_duplicates([1, 0, 3], 3, lambda i: words[i]).order == [1, 0, 3]


def _meetings_vault(root: Path, *, provider: str = "none") -> Vault:
    Vault.init(root)[0].close()
    settings = root / "vaultmem.toml"
    settings.write_text(settings.read_text(encoding="utf-8").replace(
        'provider = "auto"', f'provider = "{provider}"', 1), encoding="utf-8")
    for n in DAYS:
        memory(root, f"STM/Meeting notes day {n}.md",
               f"Meeting notes day {n}: the team went through the sprint board, open tickets and "
               "the release checklist.", days_ago=30 - n)
    memory(root, "STM/Standup.md",
           "The team standup is at 9:30 every weekday, in the small room by the kitchen.",
           days_ago=1, uses=28)
    for i, text in enumerate(OTHERS):
        memory(root, f"STM/Other {i}.md", text, days_ago=2 + i, uses=2)
    return Vault.open(root)


def _meeting_notes(paths: list[str]) -> list[str]:
    return [p for p in paths if "Meeting notes" in p]


def test_keyword_recall_shows_one_of_seven_near_identical_notes(tmp_path: Path) -> None:
    vault = _meetings_vault(tmp_path / "v")
    try:
        hits = vault.recall("team meeting", k=5, now=NOW)
        paths = [h.path for h in hits]
        assert len(paths) == 5 and len(_meeting_notes(paths)) == 1, paths
        assert {"STM/Other 0.md", "STM/Other 1.md", "STM/Other 4.md"} <= set(paths)
        # asked for more than there are distinct matches, the near-duplicates fill the page
        many = [h.path for h in vault.recall("team meeting", k=12, now=NOW)]
        assert len(_meeting_notes(many)) == len(DAYS)
    finally:
        vault.close()


def test_the_standup_example_finds_the_standup_memory(tmp_path: Path) -> None:
    try:
        LocalOnnxProvider().check()
    except EmbeddingUnavailableError as err:
        pytest.skip(f"needs vaultmem[embeddings]: {err}")
    vault = _meetings_vault(tmp_path / "v", provider="local")
    try:
        embed_notes(vault, now=NOW)
        hits = vault.recall("when is the daily team meeting", k=5, now=NOW)
        paths = [h.path for h in hits]
        assert "STM/Standup.md" in paths, paths  # it shares one word with the question
        assert len(_meeting_notes(paths)) == 1, paths
    finally:
        vault.close()
