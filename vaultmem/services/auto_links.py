"""Semantic auto-links at ``remember`` (spec section 6; seed 000). PLACEHOLDER — being written."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vaultmem.services.vault import Vault


def related_memories(vault: Vault, content: str, tags: Sequence[str]) -> list[str]:
    """Titles of up to 5 managed memories whose content-token Jaccard with ``content`` > 0.10."""
    return []
