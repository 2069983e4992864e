"""``vaultmem demo``: a new vault with four believable months of memories, and the whole flow.

The story is fixed (same memories, same history every run) and told relative to ``now``: the
first memory is made 120 days before ``now``. Memories arrive in sessions (each session is an
episode and seals into one memory box, even when its topics differ somewhat; a memory alone in
its session stays in STM), some are used on several days (and promote to LTM: one use never
does), some are never used (and fade to the Archive), one is speculative (and expires), and one
is corrected (the correction supersedes it, and the old memory is archived after the grace
period). The lifecycle runs every simulated evening; the demo prints what moved where and why.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from vaultmem.core.settings import Settings
from vaultmem.errors import InputError
from vaultmem.services.lifecycle.lifecycle import LifecycleRun
from vaultmem.services.memories.memory_view import Memory, MemoryRow, VaultStatus

DAY = dt.timedelta(days=1)
SPAN_DAYS = 120


@dataclass(frozen=True, slots=True)
class DemoMemory:
    """One memory of the story: made on ``day`` at ``minute`` past 09:00, used on ``uses`` days."""

    title: str
    content: str
    tags: tuple[str, ...]
    category: str
    importance: float
    day: int
    minute: int
    uses: tuple[int, ...] = ()
    confidence: float = 1.0
    supersedes: str | None = None
    """Title of the memory this one corrects (``remember --supersedes``)."""


MEMORIES: tuple[DemoMemory, ...] = (
    DemoMemory(
        "Prefers dark themes",
        "Prefers dark themes in every editor; asked twice to "
        "switch VS Code to a dark theme. See also [[Editor setup]].",
        ("editor", "ui"),
        "preference",
        0.6,
        0,
        0,
        (1, 2, 4),
    ),
    DemoMemory(
        "Editor setup",
        "Uses VS Code with Vim keybindings and the Fira Code font.",
        ("editor", "ui"),
        "fact",
        0.5,
        0,
        5,
        (3, 10, 17, 24, 27),
    ),
    DemoMemory(
        "Font size",
        "Likes the editor font at 15 px; smaller strains the eyes.",
        ("editor", "ui"),
        "preference",
        0.25,
        0,
        9,
    ),
    DemoMemory(
        "Deploys on Fridays are banned",
        "Team rule: no production deploys on Fridays "
        "after 14:00; decided after the [[Outage in March]].",
        ("deploy", "team"),
        "decision",
        0.8,
        1,
        0,
        (8,),
    ),
    DemoMemory(
        "Outage in March",
        "The March outage came from a Friday deploy of the billing service; rollback took 3 hours.",
        ("deploy", "incident"),
        "moment",
        0.25,
        1,
        6,
    ),
    DemoMemory(
        "Daughter's birthday",
        "Daughter's birthday is on 14 December; likes drawing and dinosaurs.",
        ("family",),
        "fact",
        0.9,
        2,
        0,
    ),
    DemoMemory(
        "Coffee order", "Orders a flat white with oat milk.", ("food",), "preference", 0.25, 3, 0
    ),
    DemoMemory(
        "Try the new ramen place",
        "Wanted to try the ramen place on Elm Street.",
        ("food",),
        "fact",
        0.2,
        3,
        4,
    ),
    DemoMemory(
        "Python style",
        "Prefers type hints everywhere, ruff for linting, and pytest.",
        ("python", "code-style"),
        "preference",
        0.6,
        4,
        0,
        (5, 6, 7, 8, 20),
    ),
    DemoMemory(
        "Standup time",
        "Daily standup is at 09:30 on the team video link.",
        ("work", "team"),
        "fact",
        0.4,
        6,
        0,
        (7, 8, 9, 12, 13),
    ),
    DemoMemory(
        "Standup moved to ten",
        "Correction: the daily standup moved to 10:00, same video link.",
        ("work", "team"),
        "correction",
        0.4,
        14,
        0,
        (15, 16, 19),
        supersedes="Standup time",
    ),
    DemoMemory(
        "Maybe switch to Neovim",
        "Mentioned maybe switching to Neovim one day.",
        ("editor",),
        "fact",
        0.2,
        7,
        0,
        (),
        0.3,
    ),
    DemoMemory(
        "Gym schedule",
        "Goes to the gym on Mondays and Thursdays before work.",
        ("health",),
        "fact",
        0.25,
        8,
        0,
    ),
    DemoMemory(
        "Book recommendation",
        "A friend recommended 'The Pragmatic Programmer'.",
        ("books",),
        "fact",
        0.2,
        10,
        0,
    ),
    DemoMemory(
        "Database for the side project",
        "Chose SQLite over Postgres for the side "
        "project: single user, no server. Related: [[Python style]].",
        ("side-project", "database"),
        "decision",
        0.7,
        12,
        0,
        (14, 19, 26),
    ),
    DemoMemory(
        "Weekly planning",
        "Plans the week on Sunday evenings in a note.",
        ("planning",),
        "skill",
        0.5,
        20,
        0,
        (21, 22, 23, 25),
    ),
    DemoMemory(
        "Parking at the office",
        "Office parking is on level -2; cards only.",
        ("work",),
        "fact",
        0.2,
        22,
        0,
    ),
)


@dataclass(slots=True)
class DemoReport:
    """Where the demo vault is and what each evening's lifecycle did."""

    root: Path
    remembered: int = 0
    runs: list[LifecycleRun] = field(default_factory=list)


def _echo_run(run: LifecycleRun, day: int, echo: Callable[[str], None]) -> None:
    for result in run.results:
        for move in result.applied:
            if result.name == "seal" and move.action == "create":
                echo(f"day {day:>3}  seal     {move.path.rsplit('/', 1)[-1]}: {move.reason}")
            elif result.name == "seal":
                continue
            elif result.name != "seal":
                echo(
                    f"day {day:>3}  {result.name:<8} {move.path.rsplit('/', 1)[-1]}"
                    f" → {move.destination.rsplit('/', 1)[0] + '/' if move.destination else '—'}"
                    f"\n              because {move.reason}"
                )


class DemoVault(Protocol):
    """The vault the demo tells its story in (``Vault`` satisfies it structurally)."""

    root: Path
    settings: Settings

    def memories(
        self, *, status: str | None = None, now: dt.datetime | None = None
    ) -> list[MemoryRow]: ...

    def remember(self, content: str, *, now: dt.datetime | None = None, **options: Any) -> Memory:
        ...

    def touch(self, ref: str, *, now: dt.datetime | None = None) -> Memory: ...

    def lifecycle(self, *, now: dt.datetime | None = None) -> LifecycleRun: ...

    def status(self, *, now: dt.datetime | None = None) -> VaultStatus: ...

    def __enter__(self) -> Any: ...

    def __exit__(self, *exc: object) -> None: ...


def run_demo(
    target: Path,
    now: dt.datetime,
    echo: Callable[[str], None],
    init_vault: Callable[[Path], DemoVault],
) -> DemoReport:
    """Build the demo vault at ``target`` (new or empty) and tell its four months.

    ``init_vault(target)`` makes ``target`` a vault and opens it (the CLI passes one calling
    ``Vault.init``; the demo closes it). Raises :class:`~vaultmem.errors.InputError` when
    ``target`` holds files already.
    """
    if target.exists() and any(target.iterdir()):
        raise InputError(f"{target} is not empty; give --dir a new folder")
    vault = init_vault(target)
    report = DemoReport(vault.root)
    start = (now - SPAN_DAYS * DAY).replace(hour=9, minute=0, second=0, microsecond=0)
    echo(
        f"Four months of an assistant's memories in {vault.root}\n"
        f"({start:%Y-%m-%d} to {now:%Y-%m-%d}; the lifecycle runs every evening).\n"
    )
    refs: dict[str, str] = {}
    with vault:
        for day in range(SPAN_DAYS + 1):
            morning = start + day * DAY
            for memory in MEMORIES:
                if memory.day == day:
                    made = vault.remember(
                        memory.content,
                        title=memory.title,
                        tags=list(memory.tags),
                        category=memory.category,
                        importance=memory.importance,
                        confidence=memory.confidence,
                        source="agent",
                        now=morning + dt.timedelta(minutes=memory.minute),
                        supersedes=refs[memory.supersedes] if memory.supersedes else None,
                    )
                    if memory.supersedes:
                        echo(f"day {day:>3}  correct  {memory.title}.md supersedes "
                             f"{memory.supersedes}.md (now status superseded)")
                    refs[memory.title] = made.fields.id or made.path
                    report.remembered += 1
                if day in memory.uses:
                    vault.touch(refs[memory.title], now=morning + dt.timedelta(hours=3))
            run = vault.lifecycle(now=min(morning + dt.timedelta(hours=12), now))
            report.runs.append(run)
            _echo_run(run, day, echo)
        status = vault.status(now=now)
        once = [row for row in vault.memories(status="active", now=now)
                if row.use_count == 2 and not row.path.startswith(vault.settings.folders.ltm)]
    for row in once:
        echo(f"\n{row.title}: used once more after the day it was made, so not promoted "
             "(promotion needs uses on 3 separate days).")
    echo("\nWhere the memories are now:")
    for folder, count in status.by_folder.items():
        echo(f"  {folder:<10} {count}")
    echo(f"\nOpen {vault.root} as a vault in Obsidian, then the note 'Memory dashboard'.")
    echo(f"Try: vaultmem list --vault '{vault.root}' --now {now:%Y-%m-%dT%H:%M:%S}")
    echo(f"     vaultmem undo --vault '{vault.root}'   (reverses the last evening's pass)")
    return report
