"""Calibrating promotion on simulated histories: ``python -m benchmarks.promotion_sim``.

Each simulated memory is made on day 0 and then used according to one history kind; the
promote pass runs every evening for 30 days through the real rule
(:func:`vaultmem.core.lifecycle.lifecycle_plan.plan_promote`, reinforcement by
:func:`vaultmem.core.scoring.reinforcement.touch_changes`). A history is promoted when any evening's
plan moves it. Kinds (each with ``source`` human or agent, uses at random hours):

- ``never``: made and never used again;
- ``once``: used once, on one later day (day 1–10);
- ``one sitting``: used 2–8 times within two hours of one later day (a burst);
- ``two days``: used on two separate later days within 14 days;
- ``repeated``: used on 3–6 separate later days within 14 days.

Rows: the share of each kind promoted under ``promote_min_use_days`` = 1 (the rule before: any
use counts), 2, 3 (the default) and 4. The wanted behaviour: never/once/one sitting 0 %,
repeated use 100 %.
"""

from __future__ import annotations

import datetime as dt
import random
import sys
from collections.abc import Callable

from vaultmem.core.lifecycle.lifecycle_plan import plan_promote
from vaultmem.core.notes.fields import MemoryFields
from vaultmem.core.scoring.reinforcement import touch_changes
from vaultmem.core.scoring.scoring import MemoryColumns, score_columns
from vaultmem.core.settings import Settings

START = dt.datetime(2026, 5, 4, 9, 0, tzinfo=dt.UTC)
DAYS = 30
PER_KIND = 200
KINDS = ("never", "once", "one sitting", "two days", "repeated")
RULES = (1, 2, 3, 4)


def _at(day: int, rng: random.Random) -> dt.datetime:
    return START + dt.timedelta(days=day, hours=rng.uniform(0, 10))


def history(kind: str, rng: random.Random) -> list[dt.datetime]:
    """The times a memory of ``kind`` is used after being made at ``START``, in order."""
    if kind == "never":
        return []
    if kind == "once":
        return [_at(rng.randint(1, 10), rng)]
    if kind == "one sitting":
        first = _at(rng.randint(1, 10), rng)
        return sorted(
            first + dt.timedelta(minutes=rng.uniform(0, 120)) for _ in range(rng.randint(2, 8))
        )
    days = rng.sample(range(1, 15), 2 if kind == "two days" else rng.randint(3, 6))
    return sorted(_at(day, rng) for day in days)


def promoted(uses: list[dt.datetime], source: str, settings: Settings) -> bool:
    """Whether the evening promote pass moves a memory with these uses within :data:`DAYS`."""
    fields = MemoryFields(type="memory", created=START, last_used=START, source=source)
    pending = list(uses)
    for day in range(DAYS + 1):
        evening = START.replace(hour=20) + dt.timedelta(days=day)
        while pending and pending[0] <= evening:
            fields = fields._replace(**touch_changes(fields, pending.pop(0)))  # type: ignore[arg-type]
        columns = MemoryColumns.from_fields("STM/m.md", fields)
        scores = score_columns(columns, evening.timestamp(), settings)
        if plan_promote(columns, scores, settings, evening):
            return True
    return False


def simulate(
    seed: int = 3, per_kind: int = PER_KIND, rules: tuple[int, ...] = RULES
) -> dict[int, dict[str, float]]:
    """``result[min_use_days][kind]`` = share promoted (0..1)."""
    rng = random.Random(seed)
    cases = [
        (kind, history(kind, rng), rng.choice(("human", "agent")))
        for kind in KINDS
        for _ in range(per_kind)
    ]
    result: dict[int, dict[str, float]] = {}
    for days in rules:
        settings = Settings(
            thresholds=Settings().thresholds._replace(promote_min_use_days=days)
        )
        result[days] = {
            kind: sum(promoted(uses, source, settings) for k, uses, source in cases if k == kind)
            / per_kind
            for kind in KINDS
        }
    return result


def main(echo: Callable[[str], None] = print) -> int:
    result = simulate()
    echo(f"promotion on simulated histories ({PER_KIND} per kind, {DAYS} evenings of passes)")
    echo(f"{'min use days':<13}" + "".join(f"{k:>13}" for k in KINDS))
    for days, shares in result.items():
        mark = "  (default)" if days == Settings().thresholds.promote_min_use_days else ""
        echo(f"{days:<13}" + "".join(f"{shares[k]:>12.0%} " for k in KINDS) + mark)
    return 0


if __name__ == "__main__":
    sys.exit(main())
