"""Sixty simulated days on a real vault: memories flow STM → Boxes → LTM or Archive.

A copy of the 13th Age SRD (1,003 notes) gets 2,000 imported memories that link to its notes and
to each other; every simulated day some memories are used and new ones remembered, and the whole
lifecycle runs. The SRD's own notes must stay byte-identical, every link must resolve to the same
note before and after, archetypal memories must end where the formulas say, and `undo` after the
last pass must restore the vault exactly.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from collections.abc import Callable
from pathlib import Path

from conftest import snapshot_files

from vaultmem import Vault
from vaultmem.core.notes.note_parse import parse_note
from vaultmem.errors import InputError

START = dt.datetime(2026, 9, 1, 8, 0, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)
DAYS = 60


def _srd_titles(root: Path) -> list[str]:
    return sorted(p.stem for p in root.rglob("*.md") if "Compendium" in p.parts)


def _memories(titles: list[str], rng: random.Random) -> list[str]:
    lines = []
    for i in range(2000):
        created = START - dt.timedelta(days=20) + dt.timedelta(minutes=14 * i)
        rules = rng.sample(titles, 2)
        body = (
            f"Campaign note {i}: we used [[{rules[0]}]] with [[{rules[1]}]]; "
            f"see [[sim {max(i - 1, 0)}]]."
        )
        lines.append(
            json.dumps(
                {
                    "content": body,
                    "title": f"sim {i}",
                    "tags": [f"arc{i // 25}"],
                    "created": created.isoformat(),
                    "importance": rng.choice([0.2, 0.4, 0.5, 0.6]),
                }
            )
        )
    return lines


def _id_of_every_note(root: Path) -> dict[str, str]:
    out = {}
    for path in root.rglob("*.md"):
        rel = path.relative_to(root).as_posix()
        note = parse_note(rel, path.read_text(encoding="utf-8"))
        out[rel] = note.fields.id or rel
    return out


def _resolved_links(vault: Vault) -> set[tuple[str, str, str]]:
    """(source identity, target as written, resolved identity) — identity = id or path.

    Attachments (``Memories.base``) are identified by their path.
    """
    vault.sync()
    identity = _id_of_every_note(vault.root)
    return {
        # an attachment (the dashboard's Memories.base) is its own identity
        (identity[r.source], r.target, identity.get(r.resolved, r.resolved) if r.resolved else "")
        for r in vault.index.all_links()
    }


def test_sixty_days_on_the_srd(copy_vault: Callable[[str], Path]) -> None:
    root = copy_vault("13th-age-srd")
    rng = random.Random(60)
    srd_before = snapshot_files(root)
    vault, _ = Vault.init(root)
    with vault:
        report = vault.import_jsonl(_memories(_srd_titles(root), rng), now=START)
        assert len(report.imported) == 2000 and not report.errors
        links_before = _resolved_links(vault)
        assert sum(1 for _, _, r in links_before if r) > 5000
        daily = vault.remember(
            "We play every Friday at 19:00", title="Game night", tags=["schedule"], now=START
        )
        burst = vault.remember(
            "The party owes the Archmage a favour",
            title="Archmage favour",
            tags=["plot"],
            now=START,
        )
        pinned = vault.remember(
            "Never kill the bard's cat",
            title="The cat rule",
            tags=["table"],
            pinned=True,
            importance=0.1,
            now=START,
        )
        for k in range(5):  # five uses on three separate days (promotion needs repeated use)
            vault.touch(burst.path, now=START + dt.timedelta(hours=10 * k + 1))
        ids = [json.loads(line) for line in []]
        del ids
        last_snapshot: dict[str, bytes] = {}
        for day in range(1, DAYS + 1):
            now = START + day * DAY
            vault.touch(daily.fields.id or "", now=now - dt.timedelta(hours=2))
            for ref in rng.sample(range(2000), 10):
                try:
                    vault.touch(f"sim {ref}", now=now - dt.timedelta(hours=1))
                except InputError as err:  # archived by an earlier pass: a touch is refused
                    assert " is archived; not touched" in str(err)
            for k in range(3):
                vault.remember(
                    f"day {day} session note {k}",
                    title=f"day {day} note {k}",
                    tags=[f"day{day}"],
                    link=False,
                    now=now - dt.timedelta(minutes=90 - k),
                )
            if day == DAYS:
                last_snapshot = snapshot_files(root)
            vault.lifecycle(now=now)

        final = {
            rel: parse_note(rel, (root / rel).read_text(encoding="utf-8")).fields
            for rel in _id_of_every_note(root)
            if not rel.startswith("Compendium")
        }
        by_id = {f.id: (rel, f) for rel, f in final.items() if f.id}

        # the SRD's own notes are untouched, every old link still resolves to the same note
        srd_after = snapshot_files(root)
        assert {k: v for k, v in srd_after.items() if k in srd_before} == srd_before
        assert links_before <= _resolved_links(vault)

        # the flow: nothing older than a day lingers in STM; boxes hold episodic memories
        stm = [rel for rel, f in final.items() if rel.startswith("STM/") and f.type == "memory"]
        assert stm == []
        boxed = [f for rel, f in final.items() if rel.startswith("Boxes/") and f.type == "memory"]
        assert boxed and all(f.layer == "episodic" and f.box for f in boxed)
        # used every day: promoted on score (≥ 0.65, ≥ 3 days old)
        rel, fields = by_id[daily.fields.id]
        assert rel == "LTM/Game night.md" and fields.status == "promoted"
        # five uses on three days: promoted by the use rule on the first pass after them
        rel, fields = by_id[burst.fields.id]
        assert rel == "LTM/Archmage favour.md"
        assert fields.promoted_at == START + DAY
        # pinned and unimportant: never archived
        rel, fields = by_id[pinned.fields.id]
        assert not rel.startswith("Archive/") and fields.status == "active"
        # 2,000+ active memories over max_active 1000: prune archived the lowest EI
        active = [f for f in final.values() if f.type == "memory" and f.status == "active"]
        archived = [
            f for rel, f in final.items() if rel.startswith("Archive/") and f.type == "memory"
        ]
        assert len(active) <= 1000 + 3  # today's three are in their grace period
        assert archived and all(f.status == "archived" and f.archived_at for f in archived)

        # undo of the last pass restores the vault exactly
        vault.undo()
        assert snapshot_files(root) == last_snapshot
