"""The property table: every key vaultmem reads or writes has one row (Obsidian type, merge rule),
and every rule merges two different values of its key without a conflict."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from vaultmem.core.notes.fields import DATETIME_KEYS, MemoryFields
from vaultmem.core.notes.note_merge import merge_note
from vaultmem.core.notes.note_text import parse_frontmatter, render_note, split_note
from vaultmem.core.notes.properties import PROPERTIES, Merge, obsidian_types, rule_of
from vaultmem.core.notes.property_merge import merge_frontmatter
from vaultmem.core.scoring.score_formulas import COLUMN_ORDER
from vaultmem.services.lifecycle.boxing import box_note, trace_note
from vaultmem.services.memories.remembering import FIELD_ORDER
from vaultmem.services.sync.merge_driver import git_merge_lines
from vaultmem.store.note_rows import FIELD_COLUMNS

ROOT = Path(__file__).resolve().parents[1]
T = dt.datetime(2026, 3, 1, 9, 0)


def test_every_field_of_the_note_model_and_the_index_has_a_row() -> None:
    model = set(MemoryFields._fields)
    written = set(FIELD_ORDER) | set(FIELD_COLUMNS) | set(COLUMN_ORDER) - {"path", "edges"}
    missing = sorted((model | written) - set(PROPERTIES))
    assert missing == [], f"properties without a merge rule: {missing}"
    datetimes = {k for k in model if PROPERTIES[k].obsidian == "datetime"}
    assert set(DATETIME_KEYS) == datetimes


def test_every_key_a_box_a_trace_or_a_consolidation_writes_has_a_row() -> None:
    from vaultmem.core.lifecycle.boxes import BoxPlan, TracePlan

    box = BoxPlan(
        title="box-x-abc123", path="Boxes/2026-03-01/box-x-abc123.md", members=("STM/a.md",),
        member_destinations=("Boxes/2026-03-01/box-x-abc123/a.md",), topics=("x",), start=0.0,
        end=60.0, reason="r", id="01BOX", trace="trace-x",
    )  # fmt: skip
    trace = TracePlan(
        title="trace-x", path="Boxes/trace-x.md", topics=("x",), boxes=("box-x-abc123",),
        new=True, updated=60.0, id="01TRACE",
    )  # fmt: skip
    keys: set[str] = set()
    for text in (box_note(box, dt.datetime.now(dt.UTC)), trace_note(trace, T)):
        keys |= set(parse_frontmatter(split_note(text).yaml))
    consolidation = ROOT / "vaultmem" / "services" / "semantic" / "consolidation.py"
    source = consolidation.read_text(encoding="utf-8")
    keys.add("consolidated_from")
    assert '"consolidated_from":' in source
    assert sorted(keys - set(PROPERTIES)) == []


def test_the_template_declares_every_property_with_its_type() -> None:
    path = ROOT / "vault-template" / ".obsidian" / "types.json"
    types = json.loads(path.read_text(encoding="utf-8"))["types"]
    assert types == obsidian_types()


def test_a_persons_own_key_merges_like_text_lines() -> None:
    assert rule_of("mood") is Merge.LINES
    base = {"id": "A", "mood": "calm", "places": ["home"]}
    ours = {"id": "A", "mood": "happy", "places": ["home", "work"]}
    theirs = {"id": "A", "mood": "tired", "places": ["gym"]}
    changes, conflicts = merge_frontmatter(base, ours, theirs)
    assert conflicts == []
    assert changes == {"mood": ["happy", "tired"], "places": ["work", "gym"]}
    changes, conflicts = merge_frontmatter(base, {"id": "A"}, theirs)  # deleted against changed
    assert conflicts == [] and changes["mood"] == "tired"
    note = "---\nid: A\ntype: memory\nmood: calm # mine\n---\nx\n"
    result = merge_note(
        note, note.replace("calm", "happy"), note.replace("calm", "tired"), git_merge_lines
    )
    assert result.clean  # never blocks the merge: both values kept, written on one line
    assert result.text == "---\nid: A\ntype: memory\nmood: [happy, tired] # mine\n---\nx\n"


SAMPLES: dict[str, tuple[object, object, object]] = {
    "text": ("a", "b", "c"),
    "number": (1, 3, 4),
    "datetime": (T, T + dt.timedelta(days=1), T + dt.timedelta(days=2)),
    "checkbox": ("yes", False, True),
    "tags": (["x"], ["x", "y"], ["z"]),
    "multitext": (["x"], ["x", "y"], ["z"]),
    "aliases": (["x"], ["x", "y"], ["z"]),
}
"""(base, ours, theirs) of each Obsidian type: both sides changed, differently."""
EXPECTED: dict[Merge, object] = {
    Merge.COUNTER: 3 + 4 - 1,
    Merge.BOUNDED: 0.8,
    Merge.USE_DAYS: 4,  # no last_used days to tell: the larger side
    Merge.LARGER: 4,
    Merge.LATEST: T + dt.timedelta(days=2),
    Merge.EARLIEST: T + dt.timedelta(days=1),
    Merge.ANY_TRUE: True,
    Merge.SET: ["y", "z"],
    Merge.FIRST_BY_NAME: "b",
    Merge.LAST_USED_SIDE: "b",  # last_used ties: the first by name
}
STAGES = {"status": ("active", "promoted", "archived"), "layer": ("working", "semantic",
                                                                  "episodic")}  # fmt: skip


@pytest.mark.parametrize("key", sorted(PROPERTIES))
def test_every_rule_merges_its_key_changed_differently_on_both_sides(key: str) -> None:
    prop = PROPERTIES[key]
    if prop.merge is Merge.IDENTITY:
        base = "---\nid: A\ntype: memory\n---\nx\n"
        ours = base.replace(f"{key}: ", f"{key}: ours-")
        theirs = base.replace(f"{key}: ", f"{key}: theirs-")
        result = merge_note(base, ours, theirs, git_merge_lines)
        if key == "id":  # two memories: theirs is kept apart, nothing fused
            assert result.text == ours and result.apart == theirs
        else:  # one id, two types: nothing to go by, the person decides
            assert result.conflicts == ("key 'type'",)
        return
    if prop.merge is Merge.STAGE:
        b, o, t = STAGES[key]
        expected: object = "archived" if key == "status" else "semantic"
    elif prop.merge is Merge.BOUNDED:
        b, o, t = 0.5, 0.6, 0.7
        expected = EXPECTED[prop.merge]
    else:
        b, o, t = SAMPLES[prop.obsidian]
        expected = EXPECTED[prop.merge]
    changes, conflicts = merge_frontmatter({key: b}, {key: o}, {key: t})
    assert conflicts == [], f"{key} ({prop.merge}) has no rule for {o!r} against {t!r}"
    assert changes.get(key, o) == expected


def _days(*days: int) -> dict[str, object]:
    """A memory created on 1 March and used on ``days`` (of March), as touch records it."""
    last = max((1, *days))
    return {"created": T, "last_used": T.replace(day=last), "use_days": 1 + len(set(days))}


@pytest.mark.parametrize(
    ("ours_days", "theirs_days", "expected"),
    [
        ((2, 3, 4), (2, 5), 5),  # the issue's case: A on 2–4 March, B on 2 and 5 March
        ((3,), (3,), 2),  # one new day each, the same day: exact
        ((3,), (4,), 3),  # one new day each, different days: exact
        ((2, 3, 4), (2, 3), 4),  # every day of both spans: exact
        ((2, 3, 4, 5), (3, 5), 5),  # ours every day, theirs within: exact
        ((3, 6), (4, 6), 3),  # unknown which days: at least the larger side, same last day
    ],
)
def test_use_days_counts_both_sides_distinct_days(
    ours_days: tuple[int, ...], theirs_days: tuple[int, ...], expected: int
) -> None:
    base = _days()
    ours, theirs = _days(*ours_days), _days(*theirs_days)
    changes, conflicts = merge_frontmatter(base, ours, theirs)
    merged = changes.get("use_days", ours["use_days"])
    assert conflicts == [] and merged == expected
    truth = 1 + len(set(ours_days) | set(theirs_days))
    assert max(ours["use_days"], theirs["use_days"]) <= merged <= truth  # type: ignore[operator]


def test_use_days_of_the_issue_merge_through_the_driver() -> None:
    base = render_note({"id": "A", "type": "memory", "created": T, "last_used": T}, "x\n")
    ours = base.replace("last_used: 2026-03-01", "last_used: 2026-03-04") + ""
    ours = ours.replace("---\nx", "use_days: 4\n---\nx")
    theirs = base.replace("last_used: 2026-03-01", "last_used: 2026-03-05")
    theirs = theirs.replace("---\nx", "use_days: 3\n---\nx")
    result = merge_note(base, ours, theirs, git_merge_lines)
    assert result.clean
    assert parse_frontmatter(split_note(result.text).yaml)["use_days"] == 5


def test_a_new_note_places_every_property_of_the_note_model_before_a_persons_own() -> None:
    from vaultmem.services.memories.remembering import draft_from_json

    record = {"content": "text", "zz_mine": 1, "superseded_by": "[[Old]]", "use_days": 2,
              "trace": "[[t]]"}  # fmt: skip
    keys = list(draft_from_json(record).frontmatter(T))  # an import keeps a history's fields
    assert keys[-1] == "zz_mine"
    model = [k for k in keys if k != "zz_mine"]
    assert model == [k for k in MemoryFields._fields if k in model]
