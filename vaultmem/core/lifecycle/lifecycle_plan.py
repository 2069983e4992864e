"""Planning the lifecycle passes from columns: promote, expire, forget, prune.

The rules are those of docs/user-guide.md, "Lifecycle".

Pure and vectorised: every rule is a numpy mask over
:class:`~vaultmem.core.scoring.scoring.MemoryColumns` and
:class:`~vaultmem.core.scoring.scoring.Scores`; no file is read. Each planned :class:`Move` states
its rule and the numbers behind it, so nothing moves without a reason a person can check.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from vaultmem.core.scoring.importance import importance_level
from vaultmem.core.scoring.scoring import MemoryColumns, Scores
from vaultmem.core.settings import Settings

BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]

PASS_ORDER = ("seal", "promote", "expire", "forget", "prune")
"""The lifecycle passes, in the order a full run applies them (docs/user-guide.md)."""
PROCEDURAL_CATEGORIES = ("principle", "skill", "decision")
"""Categories promoted to the procedural layer; the rest go to semantic ("Lifecycle", Promote)."""


@dataclass(slots=True)
class Move:
    """One planned change of one note: move it to ``destination`` and set ``changes``.

    A value: change one with :func:`dataclasses.replace`, never in place. (Not ``frozen``: a
    frozen dataclass sets each field through ``object.__setattr__``, which made building the
    22,000 moves of a prune at 100,000 memories 3× slower.)

    ``destination`` is a vault-relative path (``None`` = stays where it is; ``action`` "delete"
    removes the file). ``rule`` names the lifecycle rule; ``reason`` gives its numbers.
    """

    path: str
    id: str | None
    action: str
    destination: str | None
    changes: dict[str, object] = field(default_factory=dict)
    rule: str = ""
    reason: str = ""


def base_name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def in_folder(columns: MemoryColumns, folder: str) -> BoolArray:
    """Mask of the memories inside top-level vault folder ``folder`` (any depth below it)."""
    inside: BoolArray = columns.top_folder == folder.strip("/")
    return inside


def _managed_active(columns: MemoryColumns) -> BoolArray:
    managed: BoolArray = (columns.type == "memory") & (columns.status == "active")
    return managed


def immune_mask(columns: MemoryColumns, settings: Settings) -> BoolArray:
    """Immune to forget and prune: pinned, level ≥ 4, access ≥ 3, semantic/procedural.

    See docs/user-guide.md, "Lifecycle" (Forget, Prune).
    """
    lc = settings.lifecycle
    level = np.asarray(importance_level(columns.importance))
    access = np.maximum(columns.use_count - 1, 0)
    immune: BoolArray = (
        columns.pinned
        | (level >= lc.immune_level)
        | (access >= lc.immune_access_count)
        | (columns.layer == "semantic")
        | (columns.layer == "procedural")  # np.isin sorts the object array: 3× slower
    )
    return immune


def plan_promote(
    columns: MemoryColumns, scores: Scores, settings: Settings, now: dt.datetime
) -> list[Move]:
    """Promote (Mnemex, engram; "Lifecycle"): STM or box memories that earned long-term memory.

    Promotion means repeated use (docs/user-guide.md, "Promotion"): every path needs uses on at
    least ``promote_min_use_days`` distinct UTC days (``use_days``, the creation day included),
    so a memory used once — or many times in one sitting — is not promoted. Then: score ≥
    ``promote`` at ``promote_min_age_days`` or older; or ``promote_use_count`` uses within
    ``promote_window_days`` of creation; or episodic with high importance and access. Only
    ``status: active`` memories are eligible (a superseded one never is). The score rule uses
    :attr:`Scores.promotion_score` (the working-layer curve the threshold was calibrated on).
    """
    th = settings.thresholds
    folders = settings.folders
    eligible = _managed_active(columns) & (
        in_folder(columns, folders.stm) | in_folder(columns, folders.boxes)
    )
    repeated = np.nan_to_num(columns.use_days, nan=1.0) >= th.promote_min_use_days
    by_score = (scores.promotion_score >= th.promote) & (scores.age_days >= th.promote_min_age_days)
    by_use = (columns.use_count >= th.promote_use_count) & (
        scores.age_days <= th.promote_window_days
    )
    by_episode = (
        (columns.layer == "episodic")
        & (columns.importance >= th.episodic_promote_importance)
        & (columns.use_count - 1 >= th.episodic_promote_access_count)
    )
    moves: list[Move] = []
    for i in np.flatnonzero(eligible & repeated & (by_score | by_use | by_episode)):
        path = str(columns.path[i])
        days = f"used on {int(columns.use_days[i])} days ≥ {th.promote_min_use_days}"
        if by_score[i]:
            reason = (
                f"{days}, score {_num(scores.promotion_score[i], th.promote, 3)} ≥ "
                f"{th.promote} and age {_num(scores.age_days[i], th.promote_min_age_days, 1)} d"
                f" ≥ {th.promote_min_age_days:g} d"
            )
        elif by_use[i]:
            reason = (
                f"{days}, use_count {int(columns.use_count[i])} ≥ {th.promote_use_count} within "
                f"{th.promote_window_days:g} d of creation (age {scores.age_days[i]:.1f} d)"
            )
        else:
            reason = (
                f"{days}, episodic, importance "
                f"{_num(columns.importance[i], th.episodic_promote_importance, 2)} ≥ "
                f"{th.episodic_promote_importance} and access_count "
                f"{int(columns.use_count[i]) - 1} ≥ {th.episodic_promote_access_count}"
            )
        layer = "procedural" if columns.category[i] in PROCEDURAL_CATEGORIES else "semantic"
        moves.append(
            Move(
                path,
                columns.id[i],
                "promote",
                f"{folders.ltm}/{base_name(path)}",
                {"status": "promoted", "layer": layer, "promoted_at": now},
                rule="promote",
                reason=reason,
            )
        )
    return moves


def _num(value: float, limit: float, decimals: int) -> str:
    """``value`` with ``decimals`` digits, more when rounding would make it look equal to
    ``limit`` (so "0.1499 < 0.15" never prints as "0.150 < 0.15"); at most 6 digits."""
    text = f"{value:.{decimals}f}"
    while float(value) != float(limit) and float(text) == float(limit) and decimals < 6:
        decimals += 1
        text = f"{value:.{decimals}f}"
    return text


def _archive(
    path: str,
    note_id: object,
    settings: Settings,
    now: dt.datetime,
    rule: str,
    reason: str,
    *,
    hard: bool = False,
) -> Move:
    if hard:
        return Move(
            path,
            note_id if isinstance(note_id, str) else None,
            "delete",
            None,
            rule=rule,
            reason=reason,
        )
    return Move(
        path,
        note_id if isinstance(note_id, str) else None,
        "archive",
        f"{settings.folders.archive}/{base_name(path)}",
        {"status": "archived", "archived_at": now},
        rule=rule,
        reason=reason,
    )


def _movable(columns: MemoryColumns, settings: Settings) -> BoolArray:
    f = settings.folders
    return _managed_active(columns) & (
        in_folder(columns, f.stm) | in_folder(columns, f.boxes) | in_folder(columns, f.ltm)
    )


def plan_expire(
    columns: MemoryColumns, scores: Scores, settings: Settings, now: dt.datetime,
    superseded_at: FloatArray | None = None,
) -> list[Move]:
    """Expire (Engram; "Lifecycle"): unconfirmed speculative memories, long-resolved commitments,
    and corrected memories: ``status: superseded`` for more than ``superseded_grace_days``
    (counted from ``superseded_at``, epoch seconds per row, NaN = unknown; then from the later
    of ``last_used`` and ``created``). Pinned memories stay."""
    lc = settings.lifecycle
    now_epoch = now.timestamp()
    movable = _movable(columns, settings) & ~columns.pinned
    speculative = (
        (columns.confidence < lc.speculative_confidence)
        & (scores.age_days > lc.speculative_ttl_days)
        & (columns.use_count <= 1)
    )
    resolved_days = (now_epoch - columns.resolved_at) / 86_400.0
    with np.errstate(invalid="ignore"):
        commitment = (columns.category == "commitment") & (resolved_days > lc.commitment_ttl_days)
    since = np.fmax(columns.last_used, columns.created)
    if superseded_at is not None:
        since = np.where(np.isnan(superseded_at), since, superseded_at)
    superseded_days = (now_epoch - since) / 86_400.0
    f = settings.folders
    with np.errstate(invalid="ignore"):
        superseded = (
            (columns.type == "memory") & (columns.status == "superseded") & ~columns.pinned
            & (in_folder(columns, f.stm) | in_folder(columns, f.boxes) | in_folder(columns, f.ltm))
            & (superseded_days > lc.superseded_grace_days)
        )
    moves: list[Move] = []
    for i in np.flatnonzero((movable & (speculative | commitment)) | superseded):
        if superseded[i]:
            reason = (
                f"superseded {_num(superseded_days[i], lc.superseded_grace_days, 1)} d ago > "
                f"{lc.superseded_grace_days:g} d grace"
            )
        elif speculative[i]:
            reason = (
                f"speculative (confidence "
                f"{_num(columns.confidence[i], lc.speculative_confidence, 2)} < "
                f"{lc.speculative_confidence}), "
                f"{_num(scores.age_days[i], lc.speculative_ttl_days, 0)} d old > "
                f"{lc.speculative_ttl_days:g} d, never confirmed"
            )
        else:
            reason = (
                f"commitment resolved {_num(resolved_days[i], lc.commitment_ttl_days, 0)} d ago "
                f"> {lc.commitment_ttl_days:g} d"
            )
        moves.append(_archive(str(columns.path[i]), columns.id[i], settings, now, "expire", reason))
    return moves


def plan_forget(
    columns: MemoryColumns,
    scores: Scores,
    settings: Settings,
    now: dt.datetime,
    *,
    threshold: float | None = None,
    hard: bool = False,
    skip: frozenset[str] = frozenset(),
) -> list[Move]:
    """Forget (Mnemex, engram; "Lifecycle"): archive (or delete with ``hard``) faded memories.

    Score below ``threshold`` (default ``[thresholds] forget``), or older than 90 days with
    retention < 0.15, importance < 0.3 and access_count < 3 (engram). Immune memories
    (:func:`immune_mask`) stay; protected categories are immune to the age rule only. ``skip``
    holds paths another pass already moves.
    """
    lc = settings.lifecycle
    limit = settings.thresholds.forget if threshold is None else threshold
    candidates = _movable(columns, settings) & ~immune_mask(columns, settings)
    low = scores.score < limit
    old = (
        (scores.age_days > lc.old_age_days)
        & (scores.retention < lc.old_retention)
        & (columns.importance < lc.old_importance)
        & (columns.use_count - 1 < lc.immune_access_count)
        & ~np.isin(columns.category, list(lc.protected_categories))
    )
    moves: list[Move] = []
    for i in np.flatnonzero(candidates & (low | old)):
        path = str(columns.path[i])
        if path in skip:
            continue
        if low[i]:
            reason = (
                f"score {_num(scores.score[i], limit, 3)} < {limit:g} "
                f"(idle {scores.idle_days[i]:.1f} d)"
            )
        else:
            reason = (
                f"{_num(scores.age_days[i], lc.old_age_days, 0)} d old, retention "
                f"{_num(scores.retention[i], lc.old_retention, 2)} < {lc.old_retention}, "
                f"importance {_num(columns.importance[i], lc.old_importance, 2)} < "
                f"{lc.old_importance}"
            )
        moves.append(_archive(path, columns.id[i], settings, now, "forget", reason, hard=hard))
    return moves


def plan_prune(
    columns: MemoryColumns,
    scores: Scores,
    settings: Settings,
    now: dt.datetime,
    *,
    skip: frozenset[str] = frozenset(),
) -> list[Move]:
    """Prune (Mnemon; "Lifecycle"): over ``max_active`` active memories, archive the lowest EI.

    Batches of ``prune_batch`` until under the cap; immune memories and those younger than the
    grace period (24 h) are never pruned. ``skip`` holds paths already leaving.
    """
    lc = settings.lifecycle
    active = _managed_active(columns)
    if skip:  # a set lookup per path: np.isin sorts the object arrays (0.1 s per 1,000 paths)
        active &= np.fromiter(
            (path not in skip for path in columns.path.tolist()), dtype=np.bool_, count=len(active)
        )
    n_active = int(active.sum())
    excess = n_active - lc.max_active
    if excess <= 0:
        return []
    batches = -(-excess // lc.prune_batch)
    count = min(excess, batches * lc.prune_batch)
    grace_days = lc.grace_period_hours / 24.0
    candidates = active & _movable(columns, settings) & ~immune_mask(columns, settings)
    candidates &= scores.age_days >= grace_days
    order = np.flatnonzero(candidates)
    order = order[np.lexsort((columns.path[order].astype(str), scores.effective_importance[order]))]
    chosen = order[:count]
    head = f"{n_active} active > max_active {lc.max_active}; lowest EI "
    return _archives(
        columns.path[chosen].tolist(),
        columns.id[chosen].tolist(),
        [f"{head}{ei:.3f}" for ei in scores.effective_importance[chosen].tolist()],
        settings,
        now,
        "prune",
    )


def _archives(
    paths: list[str],
    ids: list[object],
    reasons: list[str],
    settings: Settings,
    now: dt.datetime,
    rule: str,
) -> list[Move]:
    """:func:`_archive` of many notes (a prune plans thousands): the archive folder is joined
    once, and each :class:`Move` made in one comprehension."""
    folder = f"{settings.folders.archive}/"
    return [
        Move(
            str(path),
            note_id if isinstance(note_id, str) else None,
            "archive",
            folder + path[path.rfind("/") + 1 :],
            {"status": "archived", "archived_at": now},
            rule,
            reason,
        )
        for path, note_id, reason in zip(paths, ids, reasons, strict=True)
    ]
