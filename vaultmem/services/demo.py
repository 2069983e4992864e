"""``vaultmem demo``: a new vault with eight believable weeks of memories, and what passes do.

The story is fixed (same memories, same history every run) and told relative to ``now``: the
first memory is made 56 days before ``now``; on simulated days some are used again, and the
promote and gc passes run at later simulated times, printing what moved where and why.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from vaultmem.services.lifecycle import PassResult
from vaultmem.services.vault import Vault

DAY = dt.timedelta(days=1)
SPAN_DAYS = 56

# (title, content, tags, category, importance, day made, days on which it was used again)
MEMORIES: tuple[tuple[str, str, tuple[str, ...], str, float, float, tuple[float, ...]], ...] = (
    ("Prefers dark themes", "Prefers dark themes in every editor; asked twice to switch VS Code "
     "to a dark theme. See also [[Editor setup]].", ("editor", "ui"), "preference", 0.6, 0,
     (1, 2, 4, 6, 9)),
    ("Editor setup", "Uses VS Code with Vim keybindings and the Fira Code font, ligatures on.",
     ("editor", "tools"), "fact", 0.5, 0, (3, 10, 17, 24, 27)),
    ("Deploys on Fridays are banned", "Team rule: no production deploys on Fridays after 14:00; "
     "decided after the [[Outage in March]].", ("deploy", "team"), "decision", 0.8, 1, (8,)),
    ("Outage in March", "The March outage came from a Friday deploy of the billing service; "
     "rollback took 3 hours.", ("deploy", "incident"), "moment", 0.4, 1, ()),
    ("Daughter's birthday", "Daughter's birthday is on 14 December; likes drawing and dinosaurs.",
     ("family",), "fact", 0.9, 2, ()),
    ("Coffee order", "Orders a flat white with oat milk.", ("food",), "preference", 0.3, 3, ()),
    ("Try the new ramen place", "Wanted to try the ramen place on Elm Street some time.",
     ("food", "ideas"), "fact", 0.2, 3, ()),
    ("Python style", "Prefers type hints everywhere, ruff for linting, and pytest over unittest.",
     ("python", "code-style"), "preference", 0.6, 4, (5, 6, 7, 8, 20)),
    ("Review PR 412 by Thursday", "Promised to review pull request 412 (the cache layer) by "
     "Thursday.", ("work", "review"), "commitment", 0.5, 5, (6,)),
    ("Standup time", "Daily standup is at 09:30, on the video link in the team calendar.",
     ("work", "team"), "fact", 0.4, 6, (7, 8, 9, 12, 13)),
    ("Maybe switch to Neovim", "Mentioned maybe switching to Neovim one day; not sure.",
     ("editor",), "fact", 0.2, 7, ()),
    ("Gym schedule", "Goes to the gym on Mondays and Thursdays before work.", ("health",),
     "fact", 0.3, 8, (15,)),
    ("Book recommendation", "A friend recommended 'The Pragmatic Programmer'.", ("books",),
     "fact", 0.3, 10, ()),
    ("Database choice for side project", "Chose SQLite over Postgres for the side project: "
     "single user, no server to run. Related: [[Python style]].", ("side-project", "database"),
     "decision", 0.7, 12, (14, 19, 26)),
    ("Weekly planning", "Plans the week on Sunday evenings in a note called Weekly plan.",
     ("planning",), "skill", 0.5, 20, (21, 22, 23, 25)),
    ("Parking at the office", "Office parking is in level -2; the ticket machine takes cards only.",
     ("work",), "fact", 0.2, 22, ()),
)


@dataclass(slots=True)
class DemoReport:
    """Where the demo vault is and what each pass did."""

    root: Path
    remembered: int = 0
    passes: list[tuple[str, dt.datetime, PassResult]] = field(default_factory=list)


def run_demo(target: Path, now: dt.datetime, echo: Callable[[str], None]) -> DemoReport:
    """Build the demo vault at ``target`` (must be new or empty) and tell its eight weeks.

    Raises :class:`~vaultmem.errors.InputError` when ``target`` holds files already.
    """
    from vaultmem.errors import InputError

    if target.exists() and any(target.iterdir()):
        raise InputError(f"{target} is not empty; give --dir a new folder")
    vault, _ = Vault.init(target)
    report = DemoReport(vault.root)
    start = now - SPAN_DAYS * DAY
    echo(f"Eight weeks of memories in {vault.root}, from {start:%Y-%m-%d} to {now:%Y-%m-%d}.\n")
    events: list[tuple[dt.datetime, str, int]] = []
    for index, memory in enumerate(MEMORIES):
        made = start + memory[5] * DAY
        events.append((made, "remember", index))
        events += [(start + d * DAY + dt.timedelta(hours=2), "use", index) for d in memory[6]]
    checkpoints = {7: ("promote",), 14: ("gc", "promote"), 28: ("gc", "promote"),
                   42: ("gc", "promote"), SPAN_DAYS: ("gc", "promote")}
    refs: dict[int, str] = {}
    day_done = 0
    with vault:
        for when, kind, index in sorted(events):
            day_done = _run_checkpoints(vault, report, start, day_done, when, checkpoints, echo)
            title, content, tags, category, importance, _, _ = MEMORIES[index]
            if kind == "remember":
                memory = vault.remember(content, title=title, tags=list(tags), category=category,
                                        importance=importance, source="agent", now=when)
                refs[index] = memory.fields.id or memory.path
                report.remembered += 1
            elif refs.get(index):
                vault.touch(refs[index], now=when)
        _run_checkpoints(vault, report, start, day_done, now + dt.timedelta(seconds=1),
                         checkpoints, echo)
        status = vault.status(now=now)
    echo("\nWhere things are now:")
    for folder, count in status.by_folder.items():
        echo(f"  {folder:<10} {count} memories")
    echo(f"\nOpen {vault.root} as a vault in Obsidian, then the note 'Memory dashboard'.")
    echo(f"Try: vaultmem --help, or vaultmem list --vault '{vault.root}' --now {now:%Y-%m-%dT%H:%M:%S}")
    return report


def _run_checkpoints(
    vault: Vault, report: DemoReport, start: dt.datetime, day_done: int, until: dt.datetime,
    checkpoints: dict[int, tuple[str, ...]], echo: Callable[[str], None],
) -> int:
    for day in sorted(checkpoints):
        at = min(start + day * DAY + dt.timedelta(hours=23), start + SPAN_DAYS * DAY)
        if day <= day_done or at >= until:
            continue
        for name in checkpoints[day]:
            result = vault.promote(now=at) if name == "promote" else vault.gc(now=at)
            report.passes.append((name, at, result))
            verb = "promoted" if name == "promote" else "archived"
            echo(f"day {day:>2}  {name:<8} {len(result.applied)} {verb}")
            for move in result.applied:
                echo(f"         {move.path} → {move.destination}\n           because {move.reason}")
        day_done = day
    return day_done
