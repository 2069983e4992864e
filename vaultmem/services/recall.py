"""Recall (spec section 7). PLACEHOLDER — being written."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vaultmem.services.memory_view import MemoryRow

if TYPE_CHECKING:
    from vaultmem.services.vault import Vault


@dataclass(frozen=True, slots=True)
class Hit:
    path: str
    id: str | None
    title: str
    score: float


def recall_notes(vault: Vault, query: str, *, k: int | None, now: dt.datetime, **options: Any) -> list[Hit]:
    raise NotImplementedError


def review_queue(vault: Vault, *, k: int | None, now: dt.datetime) -> list[MemoryRow]:
    raise NotImplementedError
