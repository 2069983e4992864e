"""Pass 1, Seal boxes, and trace weaving: spec section 4.1, seed 002 (Engram Memory Boxes)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultmem.core.lifecycle.boxes import (
    SealedBox,
    SealPlan,
    StmMemory,
    TraceRecord,
    content_words,
    derived_id,
    link_topic,
    memory_topics,
    plan_seal,
    title_word_counts,
)
from vaultmem.core.settings import FolderSettings, LifecycleSettings, Settings

MIN = 60.0
DAY = 86_400.0
T0 = dt.datetime(2026, 11, 20, 9, 0, tzinfo=dt.UTC).timestamp()
SETTINGS = Settings(lifecycle=LifecycleSettings(
    box_min_members=1, box_gap_minutes=30.0, box_topic_overlap=0.35))
"""Most tests below check one rule at a time on small plans: a box may hold one memory here."""
LATER = T0 + 30 * DAY  # every box idle long enough to seal


def mem(
    name: str, minute: float, tags: tuple[str, ...] = (), links: tuple[str, ...] = (),
    title: str | None = None, folder: str = "STM",
) -> StmMemory:
    return StmMemory(f"{folder}/{name}.md", f"id-{name}", title or name, T0 + minute * MIN,
                     tags, links)


def lifecycle(**changes: object) -> Settings:
    return Settings(lifecycle=SETTINGS.lifecycle._replace(**changes))  # type: ignore[arg-type]


def members(plan: SealPlan) -> list[list[str]]:
    return [[p.rsplit("/", 1)[-1][:-3] for p in box.members] for box in plan.boxes]


def opened(plan: SealPlan) -> list[str]:
    return [p.rsplit("/", 1)[-1][:-3] for p in plan.open_members]


# --- topics ---------------------------------------------------------------------------------------


def test_topics_are_the_tags_lower_cased_and_nothing_else() -> None:
    m = mem("x", 0, tags=("Editor", "#UI", " "), links=("Fonts",), title="Dark themes")
    assert memory_topics(m) == {"editor", "ui"}


def test_without_tags_topics_are_link_targets_and_the_rarest_title_words() -> None:
    m = mem("x", 0, links=("Folder/Editor Setup.md#Fonts|setup", "#heading"),
            title="The user prefers dark themes in VS Code")
    df = {"user": 5, "prefers": 4, "dark": 1, "themes": 2, "vs": 1, "code": 3}
    # dark and vs are rarest (1), then themes (2); "the"/"in" are stopwords
    assert memory_topics(m, df) == {"editor setup", "dark", "vs", "themes"}
    assert memory_topics(m, df, title_words=1) == {"editor setup", "dark"}


def test_title_words_without_counts_rank_alphabetically() -> None:
    assert memory_topics(mem("x", 0, title="Zebra mango apple kiwi")) == {"apple", "kiwi", "mango"}


def test_title_word_counts_count_titles_not_occurrences() -> None:
    memories = [mem("a", 0, title="dark dark mode"), mem("b", 1, title="Dark theme")]
    counts = title_word_counts(memories)
    assert counts == {"dark": 2, "mode": 1, "theme": 1}
    assert content_words("I use it at 9 and 10 o'clock") == ["use", "clock"]


def test_link_topic_strips_folder_extension_subpath_and_alias() -> None:
    assert link_topic("Projects/Editor  Setup.MD#Fonts|x") == "editor setup"
    assert link_topic("v1.2 notes") == "v1.2 notes"


def test_a_memory_can_have_no_topics() -> None:
    assert memory_topics(mem("x", 0, title="and of the")) == frozenset()


# --- seal conditions ------------------------------------------------------------------------------


DEFAULTS = Settings()


def test_an_episode_is_boxed_once_it_ends_and_topics_that_differ_somewhat_share_it() -> None:
    # two tags sharing one (Jaccard 0.33 under the old rule) share a box now: overlap 0.5
    memories = [mem("a", 0, ("python", "code-style")), mem("b", 20, ("python", "testing")),
                mem("c", 50, ("testing", "ci"))]
    going_on = plan_seal(memories, [], T0 + 60 * MIN, DEFAULTS)
    assert going_on.boxes == () and opened(going_on) == ["a", "b", "c"]
    plan = plan_seal(memories, [], T0 + 95 * MIN, DEFAULTS)
    assert members(plan) == [["a", "b", "c"]] and plan.open_members == ()
    assert plan.boxes[0].reason == "idle 45 min ≥ 45 min at now"


def test_a_topic_shift_inside_an_episode_splits_it_but_never_leaves_a_box_of_one() -> None:
    memories = [mem("a", 0, ("x", "y")), mem("b", 5, ("x",)), mem("c", 10, ("p", "q")),
                mem("d", 15, ("p",))]
    plan = plan_seal(memories, [], LATER, DEFAULTS)
    assert members(plan) == [["a", "b"], ["c", "d"]]
    assert plan.boxes[0].reason == "next memory's topic overlap 0.00 < 0.2"
    tail = plan_seal(memories[:3], [], LATER, DEFAULTS)  # c alone after the shift: it stays
    assert members(tail) == [["a", "b", "c"]]
    head = plan_seal([mem("a", 0, ("x",)), mem("c", 5, ("p",)), mem("d", 9, ("p",))], [], LATER,
                     DEFAULTS)
    assert members(head) == [["a", "c", "d"]]


def test_a_memory_alone_in_its_episode_is_not_boxed() -> None:
    memories = [mem("lone", 0, ("x",)), mem("b", 100, ("x",)), mem("c", 110, ("y",)),
                mem("late", 400, ("x",))]
    plan = plan_seal(memories, [], LATER, DEFAULTS)
    assert members(plan) == [["b", "c"]] and opened(plan) == ["lone", "late"]
    # planning again over what stays in STM seals nothing more
    again = plan_seal([m for m in memories if m.path in plan.open_members], [], LATER, DEFAULTS)
    assert again.boxes == ()


def test_gaps_cut_episodes_with_the_reason_and_exactly_the_gap_joins() -> None:
    memories = [mem("a", 0, ("x",)), mem("b", 45, ("x",)), mem("c", 95.5, ("x",)),
                mem("d", 100, ("x",))]
    plan = plan_seal(memories, [], LATER, DEFAULTS)
    assert members(plan) == [["a", "b"], ["c", "d"]]
    assert plan.boxes[0].reason == "episode ended (next memory > 45 min later)"
    assert plan.boxes[1].reason.startswith("idle 29.9 d ≥ 45 min")


def test_a_box_seals_at_50_members() -> None:
    memories = [mem(f"m{i:02d}", i * 0.5, ("x",)) for i in range(51)]
    plan = plan_seal(memories, [], T0 + 26 * MIN, SETTINGS)
    assert [len(b.members) for b in plan.boxes] == [50]
    assert plan.boxes[0].reason == "50 members"
    assert opened(plan) == ["m50"]


def test_a_full_last_box_seals_without_waiting() -> None:
    plan = plan_seal([mem(f"m{i}", i, ("x",)) for i in range(3)], [], T0 + 3 * MIN,
                     lifecycle(box_max_members=3))
    assert members(plan) == [["m0", "m1", "m2"]] and plan.open_members == ()
    assert plan.boxes[0].reason == "3 members"


def test_a_memory_without_topics_joins_its_episode() -> None:
    plan = plan_seal([mem("a", 0, ("x",)), mem("and", 5), mem("c", 10, ("y",)),
                      mem("d", 12, ("y",))], [], LATER, DEFAULTS)
    assert members(plan) == [["a", "and"], ["c", "d"]]
    plan = plan_seal([mem("of", 0), mem("b", 5, ("x",)), mem("c", 6, ("y",)),
                      mem("d", 8, ("y",))], [], LATER, DEFAULTS)
    assert members(plan) == [["of", "b"], ["c", "d"]]
    assert plan.boxes[0].topics == ("x",)


def test_a_simulated_week_makes_few_boxes_of_one() -> None:
    """4–6 memories a day within two hours, varied tags: at most 20 % of boxes hold one."""
    rng = random.Random(11)
    pool = ["python", "testing", "ci", "deploy", "editor", "ui", "family", "food", "health",
            "books", "planning", "work", "team", "database", "travel", "music", "finance"]
    memories: list[StmMemory] = []
    for day in range(7):
        start = day * 24 * 60 + rng.uniform(0, 10 * 60)
        for n in range(rng.randint(4, 6)):
            tags = tuple(rng.sample(pool, rng.randint(1, 3)))
            memories.append(mem(f"d{day}m{n}", start + rng.uniform(0, 120), tags))
    plan = plan_seal(memories, [], LATER, DEFAULTS)
    sizes = [len(box.members) for box in plan.boxes]
    assert sizes and sum(1 for s in sizes if s == 1) <= 0.2 * len(sizes)
    boxed = sum(sizes)
    assert boxed >= 0.8 * len(memories)  # few memories are left alone in STM
    for box in plan.boxes:  # a box is one sitting: never two days
        assert box.end - box.start <= 2 * 60 * MIN


def test_replay_is_in_created_order_ties_by_path() -> None:
    plan = plan_seal([mem("b", 0, ("x",)), mem("a", 0, ("x",)), mem("c", -1, ("x",))], [], LATER,
                     SETTINGS)
    assert members(plan) == [["c", "a", "b"]]
    assert plan.boxes[0].start == T0 - MIN and plan.boxes[0].end == T0


# --- names and paths ------------------------------------------------------------------------------


def h(*member_names: str, kind: str = "box") -> str:
    """The 6-character name suffix of the box (or trace) whose members (boxes) are these."""
    keys = [f"id-{n}\0{n}.md" for n in member_names] if kind == "box" else list(member_names)
    return derived_id(kind, keys)[-6:].lower()


def test_box_title_path_and_destinations() -> None:
    memories = [
        mem("Likes fonts", 0, ("Editor", "ui", "fonts"), folder="STM/sub"),
        mem("b", 5, ("editor", "ui")),
        mem("c", 9, ("editor", "ui", "themes")),
    ]
    box = plan_seal(memories, [], LATER, SETTINGS).boxes[0]
    # editor and ui are held by 3 members, fonts and themes by 1: alphabetical tie; the date is
    # the folder's, not repeated in the name
    name = f"box-editor-ui-fonts-{h('Likes fonts', 'b', 'c')}"
    assert box.title == name
    assert box.path == f"Boxes/2026-11-20/{name}.md"
    assert box.members == ("STM/sub/Likes fonts.md", "STM/b.md", "STM/c.md")
    assert box.member_destinations == tuple(
        f"Boxes/2026-11-20/{name}/{n}" for n in ("Likes fonts.md", "b.md", "c.md")
    )
    assert box.topics == ("editor", "fonts", "themes", "ui")
    keys = ["id-c\0c.md", "id-Likes fonts\0Likes fonts.md", "id-b\0b.md"]  # any order
    assert box.id == derived_id("box", keys)


def test_box_ids_and_names_depend_on_the_members_only() -> None:
    memories = [mem("a", 0, ("x",)), mem("b", 5, ("x",))]
    one = plan_seal(memories, [], LATER, SETTINGS).boxes[0]
    # another machine: other notes taken, planned later, members listed in another order
    two = plan_seal(memories[::-1], [], LATER + DAY, SETTINGS, taken_names={"unrelated"}).boxes[0]
    assert (one.id, one.title, one.path) == (two.id, two.title, two.path)
    other = plan_seal([mem("a", 0, ("x",)), mem("c", 5, ("x",))], [], LATER, SETTINGS).boxes[0]
    assert other.id != one.id and other.title != one.title
    assert len(one.id) == 26 and one.id.isalnum() and one.id.isupper()


def test_date_folder_is_the_utc_date_of_the_first_member() -> None:
    late = (dt.datetime(2026, 11, 20, 23, 50, tzinfo=dt.UTC).timestamp() - T0) / MIN
    plan = plan_seal([mem("a", late, ("x",)), mem("b", late + 20, ("x",))], [], LATER,
                     Settings(folders=FolderSettings(boxes="Memory Boxes")))
    assert plan.boxes[0].path == f"Memory Boxes/2026-11-20/box-x-{h('a', 'b')}.md"
    assert len(plan.boxes[0].members) == 2


def test_slug_is_safe_and_short() -> None:
    long_tag = "a" * 70
    plan = plan_seal([mem("a", 0, ("c++/rust", "Project: alpha")), mem("b", 40, (long_tag,)),
                      mem("c", 80, title="of the")], [], LATER, SETTINGS)
    titles = [b.title for b in plan.boxes]
    assert titles[0] == f"box-c++-rust-project-alpha-{h('a')}"
    assert titles[1] == "box-" + "a" * 60 + f"-{h('b')}"
    assert titles[2] == f"box-{h('c')}"


def test_titles_are_unique_against_taken_names_and_within_the_pass() -> None:
    memories = [mem("a", 0, ("editor",)), mem("b", 40, ("editor",)), mem("c", 80, ("editor",))]
    taken = {f"BOX-Editor-{h('a').upper()}.md"}
    plan = plan_seal(memories, [], LATER, SETTINGS, taken_names=taken)
    assert [b.title for b in plan.boxes] == [
        f"box-editor-{h('a')}-2", f"box-editor-{h('b')}", f"box-editor-{h('c')}"
    ]


# --- trace weaving --------------------------------------------------------------------------------


def trace(title: str, topics: tuple[str, ...], last: float, boxes: tuple[str, ...] = ("old",)
          ) -> TraceRecord:
    return TraceRecord(f"Boxes/Traces/{title}.md", title, topics, boxes, last)


def test_a_box_joins_a_recent_trace_with_enough_overlap() -> None:
    rec = trace("trace-editor-ui", ("editor", "ui"), T0 - 2 * DAY, ("box-2026-11-18-editor-ui",))
    plan = plan_seal([mem("a", 0, ("editor", "ui", "fonts"))], [rec], LATER, SETTINGS)
    box = plan.boxes[0]
    assert box.trace == "trace-editor-ui"  # overlap 2/3 ≥ 0.4
    (tp,) = plan.traces
    assert (tp.title, tp.path, tp.new) == ("trace-editor-ui", rec.path, False)
    assert tp.topics == ("editor", "fonts", "ui")
    assert tp.boxes == ("box-2026-11-18-editor-ui", box.title)


def test_no_join_below_the_overlap_or_outside_the_window() -> None:
    low = trace("trace-low", ("editor", "ui", "x", "y", "z"), T0 - DAY)  # 1/6 < 0.4
    old = trace("trace-old", ("editor", "fonts"), T0 - 7 * DAY - MIN)
    plan = plan_seal([mem("a", 0, ("editor", "fonts"))], [low, old], LATER, SETTINGS)
    assert plan.boxes[0].trace is None and plan.traces == ()
    inside = dataclasses.replace(old, last_box_added=T0 - 7 * DAY + MIN)
    assert plan_seal([mem("a", 0, ("editor", "fonts"))], [inside], LATER, SETTINGS).boxes[0].trace \
        == "trace-old"


def test_the_best_trace_wins_then_the_title() -> None:
    half = trace("trace-a", ("editor", "ui"), T0)  # overlap with {editor} 0.5
    full = trace("trace-b", ("editor",), T0)  # overlap 1.0
    twin = trace("trace-c", ("editor",), T0)
    plan = plan_seal([mem("a", 0, ("editor",))], [twin, half, full], LATER, SETTINGS)
    assert plan.boxes[0].trace == "trace-b"


def test_two_boxes_of_one_pass_chain_into_a_new_trace_and_a_third_joins_it() -> None:
    memories = [mem("a", 0, ("editor", "ui")), mem("b", 2 * 24 * 60, ("editor", "ui", "fonts")),
                mem("c", 3 * 24 * 60, ("editor", "fonts")), mem("d", 4 * 24 * 60, ("cooking",))]
    plan = plan_seal(memories, [], LATER, SETTINGS)
    b1, b2, b3, b4 = plan.boxes
    (tp,) = plan.traces
    # ranked by the number of boxes holding a topic: editor, ui (2), then fonts (1)
    name = f"trace-editor-ui-fonts-{h(b1.title, b2.title, kind='trace')}"
    assert tp.title == name and tp.new
    assert tp.path == f"Boxes/Traces/{name}.md"
    assert tp.updated == b3.end  # created/updated: the end of its latest box, not the clock
    assert tp.boxes == (b1.title, b2.title, b3.title)  # b3 vs {editor,fonts,ui}: 2/3
    assert tp.topics == ("editor", "fonts", "ui")
    assert (b1.trace, b2.trace, b3.trace, b4.trace) == (tp.title,) * 3 + (None,)


def test_a_lone_box_stays_without_trace() -> None:
    plan = plan_seal([mem("a", 0, ("editor",)), mem("b", 60, ("cooking",))], [], LATER, SETTINGS)
    assert [b.trace for b in plan.boxes] == [None, None] and plan.traces == ()


def test_a_box_chains_with_an_earlier_lone_box_note() -> None:
    lone = SealedBox("box-2026-11-18-editor", "Boxes/2026-11-18/box-2026-11-18-editor.md",
                     ("editor", "ui", "fonts"), T0 - 2 * DAY)  # overlap 2/3
    traced = SealedBox("box-2026-11-19-editor", "Boxes/2026-11-19/box-2026-11-19-editor.md",
                       ("editor", "ui"), T0 - DAY, trace="trace-x")  # 1.0, but in a trace
    stale = SealedBox("box-2026-11-01-editor", "Boxes/2026-11-01/box-2026-11-01-editor.md",
                      ("editor", "ui"), T0 - 19 * DAY)
    plan = plan_seal([mem("a", 0, ("editor", "ui"))], [], LATER, SETTINGS,
                     recent_boxes=[traced, stale, lone])
    (tp,) = plan.traces
    assert tp.title == "trace-editor-ui-fonts-" + h(
        "box-2026-11-18-editor", plan.boxes[0].title, kind="trace"
    )
    assert tp.topics == ("editor", "fonts", "ui")
    assert tp.boxes == ("box-2026-11-18-editor", plan.boxes[0].title)
    assert plan.boxes[0].trace == tp.title


def test_trace_titles_are_unique_against_taken_names_and_existing_traces() -> None:
    memories = [mem("a", 0, ("editor",)), mem("b", 60, ("editor",))]
    boxes = plan_seal(memories, [], LATER, SETTINGS).boxes
    name = f"trace-editor-{h(*(b.title for b in boxes), kind='trace')}"
    other = trace(name, ("cooking",), T0)
    plan = plan_seal(memories, [other], LATER, SETTINGS, taken_names={name + "-2"})
    (tp,) = plan.traces
    assert tp.title == name + "-3" and tp.boxes == tuple(b.title for b in plan.boxes)


# --- determinism and idempotence ------------------------------------------------------------------


def test_shuffled_inputs_give_the_same_plan() -> None:
    memories = [mem(f"m{i}", i * 17 % 200, (("editor", "ui", "fonts", "cooking")[i % 4],),
                    title=f"note {i} about things") for i in range(40)]
    traces = [trace("trace-ui", ("ui",), T0), trace("trace-fonts", ("fonts",), T0)]
    recent = [SealedBox(f"box-{i}", f"Boxes/x/box-{i}.md", ("editor",), T0 - i * DAY)
              for i in range(3)]
    first = plan_seal(memories, traces, T0 + 250 * MIN, SETTINGS, recent_boxes=recent)
    rng = random.Random(7)
    for _ in range(5):
        rng.shuffle(memories)
        rng.shuffle(traces)
        rng.shuffle(recent)
        assert plan_seal(memories, traces, T0 + 250 * MIN, SETTINGS, recent_boxes=recent) == first
    assert first.boxes and first.traces


def test_planning_after_applying_yields_nothing_new() -> None:
    # titles only: topics depend on rarity across STM, which changes when sealed members leave
    # (a single replay over all five leaves m2..m4 open, but on their own m2 and m3 split off)
    titles = ["alpha delta omega", "beta", "alpha zeta gamma", "delta omega beta gamma zeta",
              "delta omega kappa alpha beta"]
    memories = [mem(f"m{i}", i, title=t) for i, t in enumerate(titles)]
    memories.append(mem("lone", 300, title="omega"))
    now = T0 + 320 * MIN
    plan = plan_seal(memories, [], now, DEFAULTS)
    assert [len(b.members) for b in plan.boxes] == [5] and opened(plan) == ["lone"]
    left = [m for m in memories if m.path in plan.open_members]
    again = plan_seal(left, [], now, DEFAULTS)
    assert again.boxes == () and again.open_members == plan.open_members


st_memories = st.lists(
    st.tuples(
        st.integers(0, 240),
        st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), max_size=2),
        st.lists(st.sampled_from(["red", "green", "blue", "the", "cyan", "pink", "teal", "gold"]),
                 max_size=5),
    ),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(rows=st_memories, now_minute=st.integers(0, 300), cap=st.integers(1, 6),
       least=st.integers(1, 3))
def test_every_memory_is_in_exactly_one_box_or_open_in_created_order(
    rows: list[tuple[int, list[str], list[str]]], now_minute: int, cap: int, least: int
) -> None:
    memories = [mem(f"m{i}", minute, tuple(tags), title=" ".join(words) or "of")
                for i, (minute, tags, words) in enumerate(rows)]
    conf = lifecycle(box_max_members=cap, box_min_members=least)
    now = T0 + now_minute * MIN
    plan = plan_seal(memories, [], now, conf)
    placed = [p for box in plan.boxes for p in box.members] + list(plan.open_members)
    ordered = [m.path for m in sorted(memories, key=lambda m: (m.created, m.path))]
    assert sorted(placed) == sorted(ordered) and len(placed) == len(ordered)
    rank = {p: i for i, p in enumerate(ordered)}
    for chunk in [*(b.members for b in plan.boxes), plan.open_members]:
        assert [rank[p] for p in chunk] == sorted(rank[p] for p in chunk)
    assert all(1 <= len(b.members) <= cap and b.reason for b in plan.boxes)
    assert len({b.title.lower() for b in plan.boxes}) == len(plan.boxes)
    left = [m for m in memories if m.path in plan.open_members]
    again = plan_seal(left, [], now, conf)
    assert again.boxes == () and again.open_members == plan.open_members


@pytest.mark.parametrize(
    ("counts", "topics"),
    [(None, ("blue", "cyan", "green")), ({"blue": 9, "cyan": 9}, ("blue", "green", "red"))],
)
def test_title_word_rarity_comes_from_stm_or_from_given_counts(
    counts: dict[str, int] | None, topics: tuple[str, ...]
) -> None:
    # counted over STM, red is in both titles so it is the least distinctive word of "a"
    memories = [mem("a", 0, title="red green blue cyan"), mem("b", 60, title="red pink")]
    plan = plan_seal(memories, [], LATER, SETTINGS, document_frequency=counts)
    assert plan.boxes[0].topics == topics


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.frozensets(st.sampled_from("abcdefg"), max_size=6),
                       st.integers(-12, 12)), max_size=8),
    st.frozensets(st.sampled_from("abcdefg"), max_size=5),
    st.sampled_from([0.0, 0.2, 0.25, 0.3, 1 / 3, 0.4, 0.5, 1.0]),
)
def test_the_trace_a_box_goes_with_is_the_jaccard_best_in_its_window(
    candidates: list[tuple[frozenset[str], int]], topics: frozenset[str], overlap: float
) -> None:
    """The weaving's shortcut (the window first, the overlap from the shared count) picks what
    the rule says: the highest Jaccard overlap ≥ ``trace_overlap`` among candidates whose last
    box ended at most ``trace_window_days`` before the box, ties by title."""
    from vaultmem.core.lifecycle.boxes import _best, _Lone
    from vaultmem.core.scoring.reinforcement import jaccard

    lc = SETTINGS.lifecycle._replace(trace_overlap=overlap, trace_window_days=7.0)
    lone = [_Lone(f"box-{i}", found, T0 + days * DAY, None)
            for i, (found, days) in enumerate(candidates)]
    end = T0 + 5 * DAY
    fitting = [
        c for c in lone
        if topics and end - c.last <= 7 * DAY and jaccard(topics, c.topics) >= overlap
    ]
    expected = min(fitting, key=lambda c: (-jaccard(topics, c.topics), c.title), default=None)
    assert _best(lone, topics, end, lc) is expected


def test_traces_outside_the_window_or_undated_are_never_chosen() -> None:
    from vaultmem.core.lifecycle import boxes

    lc = LifecycleSettings()
    day = 86_400.0
    end = 1_000 * day
    near = boxes._Lone("near", frozenset({"tea"}), end - day, None)
    old = [boxes._Lone(f"old {i}", frozenset({"tea"}), end - 400 * day, None) for i in range(5)]
    undated = boxes._Lone("undated", frozenset({"tea"}), float("nan"), None)
    assert boxes._best([*old, undated, near], frozenset({"tea"}), end, lc) is near
    assert boxes._best([*old, undated], frozenset({"tea"}), end, lc) is None
    assert boxes._best([near], frozenset(), end, lc) is None


def test_a_note_of_the_vault_with_the_name_a_box_would_get_makes_it_another(
    tmp_path: Path,
) -> None:
    """The seal pass asks the index only for names a box or trace could be given; a note of
    that name anywhere in the vault, in any case, still makes the box take the next name."""
    from vaultmem import Vault

    t0 = dt.datetime(2026, 11, 1, 9, 0, tzinfo=dt.UTC)
    when = t0 + dt.timedelta(days=2)
    Vault.init(tmp_path / "v")[0].close()

    def box_created(vault: Vault) -> str:
        run = vault.lifecycle(dry_run=True, now=when)
        (path,) = [m.path for r in run.results for m in r.planned if m.action == "create"]
        return path.rsplit("/", 1)[-1].removesuffix(".md")

    with Vault.open(tmp_path / "v") as vault:
        for i in range(3):
            vault.remember(f"a note on canals number {i}", tags=["canals"],
                           now=t0 + i * dt.timedelta(minutes=2))
        name = box_created(vault)
        assert name.startswith("box-canals-")
        (tmp_path / "v" / "Notes").mkdir(exist_ok=True)
        (tmp_path / "v" / "Notes" / f"{name.upper()}.md").write_text("mine\n")
        assert box_created(vault) == f"{name}-2"
