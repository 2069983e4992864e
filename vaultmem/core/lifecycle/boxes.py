"""Planning pass 1, *Seal boxes*, and trace weaving (Engram's Memory Boxes; docs/user-guide.md,
"Boxes are episodes").

Pure: the caller reads the index and hands over :class:`StmMemory` rows, the existing
:class:`TraceRecord` notes and the lone :class:`SealedBox` notes of the last days;
:func:`plan_seal` returns a :class:`SealPlan` that the lifecycle service applies. Times are
epoch seconds; every sealed box says why it sealed, with the numbers.

Boxes are episodes (docs/user-guide.md, "Boxes are episodes"). STM memories are taken in
``created`` order (ties by path) and cut into *episodes* wherever two memories were made more
than ``box_gap_minutes`` (45) apart: one conversation or work session. An episode is boxed once
it is over (a later memory started another, or ``box_gap_minutes`` passed at ``now``); until
then its members are :attr:`SealPlan.open_members` and stay in STM, except that a box seals as
soon as it holds ``box_max_members``. A memory alone in its episode is not boxed: it stays in STM
(also listed in ``open_members``). Inside an episode, memories that share topics only in part
stay together: the box seals before a memory only when its topics (:func:`memory_topics`)
overlap the box's below ``box_topic_overlap`` (0.2) of the smaller set (:func:`topic_overlap`;
a memory sharing one of its two tags overlaps 0.5), and only when both the box and the rest of
the episode hold ``box_min_members`` (2): a topic shift never leaves a box of one. On simulated
weeks (4–6 memories a day within two hours, 1–3 of 17 tags each; ``tests/test_boxes.py``) no box
holds a single memory; the earlier sliding topic window (Jaccard 0.35, 30-minute gap) made 88 %
of boxes single ones.

Memories without topics (no tags, no links, no content word in the title) never seal a box by
topic: a memory with nothing to compare carries no evidence of a topic shift. Symmetrically, a
box whose members have no topics yet has no topic to shift *from*.

Idempotence: title-word topics depend on rarity across the memories planned, so once the sealed
members leave STM what stays could split differently. :func:`plan_seal` therefore replays the
memories that stay on their own (with their own title-word counts) until it seals nothing more;
the plan is what a second run would find, and planning after applying it yields nothing new
(removing sealed memories only widens the gaps between those that stay).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from vaultmem.core.lifecycle.box_naming import (
    HASH_CHARS,
    derived_id,
    ranked_topics,
    stem,
    topic_slug,
    unique_name,
    utc_date,
)
from vaultmem.core.lifecycle.box_topics import (
    TitleWordCounts,
    content_words,
    link_topic,
    memory_topics,
    tag_topic,
    title_word_counts,
)
from vaultmem.core.lifecycle.lifecycle_plan import base_name
from vaultmem.core.links.link_resolution import fold_path
from vaultmem.core.settings import LifecycleSettings, Settings

__all__ = [
    "GIVEN_NAME_PREFIXES", "BoxPlan", "SealPlan", "SealedBox", "StmMemory", "TracePlan",
    "TraceRecord", "content_words", "derived_id", "link_topic", "memory_topics", "plan_seal",
    "title_word_counts",
]

TRACES_FOLDER = "Traces"
"""Subfolder of the boxes folder that holds ``type: trace`` notes."""
GIVEN_NAME_PREFIXES = ("box-", "trace-")
"""How every name :func:`plan_seal` gives begins (folded): only a taken name that begins so can
ever be one it would give."""

@dataclass(frozen=True, slots=True)
class StmMemory:
    """One active memory in STM, from the index.

    ``path`` is vault-relative (``"STM/Prefers dark themes.md"``); ``created`` epoch seconds;
    ``link_targets`` the link targets as written (titles or paths), body and frontmatter.
    """

    path: str
    id: str | None
    title: str
    created: float
    tags: tuple[str, ...] = ()
    link_targets: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TraceRecord:
    """An existing ``type: trace`` note: its topics, its box titles in order, and
    ``last_box_added`` (epoch seconds). Record the ``end`` of the last box added, not the wall
    time of the pass, so that plans depend on memory times only."""

    path: str
    title: str
    topics: tuple[str, ...]
    boxes: tuple[str, ...]
    last_box_added: float
    id: str = ""
    """Its ``id`` (empty when it has none): an update of the trace is written for that id."""


@dataclass(frozen=True, slots=True)
class SealedBox:
    """An existing box note (sealed by an earlier pass); ``end`` = created of its last member.

    Only boxes with ``trace=None`` can chain with a new box into a new trace; boxes already in a
    trace are represented by their :class:`TraceRecord` and are ignored here.
    """

    title: str
    path: str
    topics: tuple[str, ...]
    end: float
    trace: str | None = None


@dataclass(frozen=True, slots=True)
class BoxPlan:
    """A box to seal: write ``path`` (``type: box``), move ``members`` to
    ``member_destinations`` (same order, same base names), link it to ``trace`` (or none)."""

    title: str
    path: str
    members: tuple[str, ...]
    member_destinations: tuple[str, ...]
    topics: tuple[str, ...]
    start: float
    end: float
    trace: str | None
    reason: str
    id: str = ""
    """Derived from the members' ids (:func:`derived_id`): every machine sealing the same
    members writes the same id, name and note."""


@dataclass(frozen=True, slots=True)
class TracePlan:
    """A trace to write: new (``Boxes/Traces/<title>.md``) or an existing one to update.

    ``boxes`` lists every box title in order after this pass; it may name existing box notes
    (a :class:`SealedBox` that chained with a new box), whose ``trace:`` link must be set too.
    """

    title: str
    path: str
    new: bool
    topics: tuple[str, ...]
    boxes: tuple[str, ...]
    id: str = ""
    """For a new trace: derived from its first two boxes (:func:`derived_id`); for an existing
    one: its own (:attr:`TraceRecord.id`)."""
    updated: float = 0.0
    """End of its latest box (epoch seconds): the trace's ``updated`` (and a new one's
    ``created``), so that both machines write the same note."""


@dataclass(frozen=True, slots=True)
class SealPlan:
    """Pass 1's plan: boxes in sealing order, traces by title, and the still-open members."""

    boxes: tuple[BoxPlan, ...]
    traces: tuple[TracePlan, ...]
    open_members: tuple[str, ...]


# --- the sliding topic window -------------------------------------------------------------------


@dataclass(slots=True)
class _Box:
    members: list[StmMemory] = field(default_factory=list)
    member_topics: list[frozenset[str]] = field(default_factory=list)
    topics: set[str] = field(default_factory=set)
    reason: str = ""

    def add(self, memory: StmMemory, topics: frozenset[str]) -> None:
        self.members.append(memory)
        self.member_topics.append(topics)
        self.topics |= topics


def _num(value: float, limit: float, decimals: int) -> str:
    """``value`` with ``decimals`` digits, more when rounding would make it look like ``limit``."""
    text = f"{value:.{decimals}f}"
    while value != limit and float(text) == limit and decimals < 6:
        decimals += 1
        text = f"{value:.{decimals}f}"
    return text


def _duration(minutes: float) -> str:
    """A span in the unit that reads best: minutes up to 2 h, hours up to 2 d, then days."""
    if minutes < 120:
        return f"{minutes:.0f} min"
    if minutes < 2880:
        return f"{minutes / 60:.1f} h"
    return f"{minutes / 1440:.1f} d"


def topic_overlap(box: Collection[str], memory: Collection[str]) -> float:
    """Share of the smaller topic set that the other holds too: |A ∩ B| / min(|A|, |B|)
    (case-insensitive); 0.0 when either is empty. A memory sharing one of its two tags with a
    box overlaps 0.5, however many topics the box has gathered."""
    a = {t.lower() for t in box}
    b = {t.lower() for t in memory}
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def _topic_shift(box: _Box, topics: frozenset[str], lc: LifecycleSettings) -> str:
    """Why ``box`` seals before a memory with ``topics`` *by topic* ("" = it joins)."""
    if not topics or not box.topics:
        return ""
    overlap = topic_overlap(box.topics, topics)
    if overlap < lc.box_topic_overlap:
        shown = _num(overlap, lc.box_topic_overlap, 2)
        return f"next memory's topic overlap {shown} < {lc.box_topic_overlap:g}"
    return ""


def _episodes(ordered: Sequence[StmMemory], lc: LifecycleSettings) -> list[list[StmMemory]]:
    """``ordered`` cut wherever two memories were made more than ``box_gap_minutes`` apart."""
    episodes: list[list[StmMemory]] = []
    for memory in ordered:
        if episodes and (memory.created - episodes[-1][-1].created) / 60.0 <= lc.box_gap_minutes:
            episodes[-1].append(memory)
        else:
            episodes.append([memory])
    return episodes


def _split(
    episode: Sequence[StmMemory], df: Mapping[str, int] | None, lc: LifecycleSettings
) -> list[_Box]:
    """The boxes of one finished episode of at least two memories.

    Memories join the open box in order; it seals *before* a memory whose topics overlap the
    box's below ``box_topic_overlap`` (:func:`topic_overlap`) — but only when the box already
    holds ``box_min_members`` memories and at least that many are left, so a topic shift never
    leaves a smaller box — and *as soon as* it holds ``box_max_members``. The last box seals as
    the episode ends.
    """
    cap = max(1, lc.box_max_members)
    least = max(1, lc.box_min_members)
    boxes: list[_Box] = []
    box = _Box()
    for i, memory in enumerate(episode):
        topics = memory_topics(memory, df)
        left = len(episode) - i
        if len(box.members) >= least and left >= least and (
            reason := _topic_shift(box, topics, lc)
        ):
            box.reason = reason
            boxes.append(box)
            box = _Box()
        box.add(memory, topics)
        if len(box.members) >= cap:
            box.reason = f"{len(box.members)} members"
            boxes.append(box)
            box = _Box()
    if box.members:
        box.reason = f"episode ended (next memory > {lc.box_gap_minutes:g} min later)"
        boxes.append(box)
    return boxes


def _replay(
    ordered: Sequence[StmMemory], df: Mapping[str, int] | None, now: float, lc: LifecycleSettings
) -> tuple[list[_Box], list[StmMemory]]:
    """One pass over ``ordered``: (sealed boxes, memories that stay in STM).

    Episodes are runs of memories made at most ``box_gap_minutes`` apart (one conversation or
    work session). An episode is finished when a later memory starts another one, or when
    ``box_gap_minutes`` have passed at ``now`` since its last memory; a finished episode of at
    least ``box_min_members`` (2) memories is cut into boxes by :func:`_split`. A memory alone
    in its episode is not boxed (it stays in STM), and so are the members of the unfinished
    last episode.
    """
    sealed: list[_Box] = []
    staying: list[StmMemory] = []
    episodes = _episodes(ordered, lc)
    for n, episode in enumerate(episodes):
        idle_min = (now - episode[-1].created) / 60.0
        finished = n + 1 < len(episodes) or idle_min >= lc.box_gap_minutes
        if not finished:  # still going on: only full boxes seal
            cap = max(1, lc.box_max_members)
            while len(episode) >= cap:
                full = _Box()
                for memory in episode[:cap]:
                    full.add(memory, memory_topics(memory, df))
                full.reason = f"{cap} members"
                sealed.append(full)
                episode = episode[cap:]
            staying += episode
            continue
        if len(episode) < max(1, lc.box_min_members):
            staying += episode
            continue
        boxes = _split(episode, df, lc)
        if n + 1 == len(episodes) and boxes:
            boxes[-1].reason = (
                f"idle {_duration(idle_min)} ≥ {lc.box_gap_minutes:g} min at now"
            )
        sealed += boxes
    return sealed, staying


# --- names --------------------------------------------------------------------------------------


def _member_key(memory: StmMemory) -> str:
    """A member as its box id sees it: its id and its name (the box note lists the names, so
    a member renamed on one machine makes another box, not a conflicting one)."""
    return f"{memory.id or ''}\0{base_name(memory.path)}"


# --- trace weaving ------------------------------------------------------------------------------


@dataclass(slots=True)
class _Trace:
    title: str
    path: str
    new: bool
    topics: set[str]
    boxes: list[str]
    last: float
    id: str


@dataclass(slots=True)
class _Lone:
    title: str
    topics: frozenset[str]
    last: float  # the box's end
    index: int | None  # position among this pass's boxes; None for an existing box note


_Candidate = TypeVar("_Candidate", _Trace, _Lone)


def _best(
    candidates: Iterable[_Candidate], topics: frozenset[str], end: float, lc: LifecycleSettings
) -> _Candidate | None:
    """The trace (or lone box) a box ending at ``end`` goes with: last gained a box (ended) at
    most ``trace_window_days`` before ``end`` or after it, topic overlap ≥ ``trace_overlap``;
    the highest overlap wins, ties by title."""
    if not topics:
        return None
    window = lc.trace_window_days * 86_400.0
    best: _Candidate | None = None
    best_key = (0.0, "")
    if not topics:
        return None
    for candidate in candidates:
        if not end - candidate.last <= window:  # outside the window (or no end): no overlap
            continue
        # jaccard (topics are lower-cased already): |A ∩ B| / |A ∪ B|, the union never built
        shared = len(topics & candidate.topics)
        overlap = shared / (len(topics) + len(candidate.topics) - shared)
        key = (-overlap, candidate.title)
        if overlap >= lc.trace_overlap and (best is None or key < best_key):
            best, best_key = candidate, key
    return best


def _topic_set(topics: Iterable[str]) -> frozenset[str]:
    return frozenset(t for t in map(tag_topic, topics) if t)


def _weave(
    new_boxes: Sequence[tuple[str, frozenset[str], float]],
    traces: Sequence[TraceRecord],
    recent_boxes: Sequence[SealedBox],
    taken: set[str],
    settings: Settings,
) -> tuple[list[str | None], tuple[TracePlan, ...]]:
    """Trace of each new ``(title, topics, end)`` box in order, and the traces to write."""
    lc = settings.lifecycle
    state = [
        _Trace(
            t.title, t.path, False, set(_topic_set(t.topics)), list(t.boxes), t.last_box_added,
            t.id,
        )
        for t in sorted(traces, key=lambda t: (t.title, t.path))
    ]
    in_trace = {fold_path(b) for t in state for b in t.boxes}
    lone = [
        _Lone(b.title, _topic_set(b.topics), b.end, None)
        for b in sorted(recent_boxes, key=lambda b: (b.end, b.title))
        if b.trace is None and fold_path(b.title) not in in_trace
    ]
    assigned: list[str | None] = []
    touched: dict[str, _Trace] = {}
    for title, topics, end in new_boxes:
        trace = _best(state, topics, end, lc)
        if trace is not None:  # join: union of topics, the box appended
            trace.topics |= topics
            trace.boxes.append(title)
            trace.last = max(trace.last, end)
        elif (partner := _best(lone, topics, end, lc)) is not None:  # two boxes chain
            lone.remove(partner)
            trace_id = derived_id("trace", [partner.title, title])
            slug = topic_slug(ranked_topics([partner.topics, topics]))
            suffix = trace_id[-HASH_CHARS:].lower()
            name = unique_name(f"trace-{slug}-{suffix}" if slug else f"trace-{suffix}", taken)
            pair = sorted([(partner.last, partner.title), (end, title)])
            trace = _Trace(
                name, f"{settings.folders.boxes.strip('/')}/{TRACES_FOLDER}/{name}.md", True,
                set(partner.topics | topics), [t for _, t in pair], max(end, partner.last),
                trace_id,
            )
            state.append(trace)
            if partner.index is not None:
                assigned[partner.index] = name
        else:  # lone for now: a later box may chain with it
            lone.append(_Lone(title, topics, end, len(assigned)))
            assigned.append(None)
            continue
        touched[trace.title] = trace
        assigned.append(trace.title)
    plans = tuple(
        TracePlan(
            t.title, t.path, t.new, tuple(sorted(t.topics)), tuple(t.boxes),
            t.id, t.last,
        )
        for t in sorted(touched.values(), key=lambda t: t.title)
    )  # fmt: skip
    return assigned, plans


# --- the plan -----------------------------------------------------------------------------------


def _could_be_given(names: Iterable[str]) -> set[str]:
    """The folded stems of those of ``names`` that a name :func:`plan_seal` gives could equal
    (:data:`GIVEN_NAME_PREFIXES`): the only ones its name checks ever ask about. A vault's
    100,000 other names are not folded one by one."""
    return {
        fold_path(stem(name))
        for name in names
        if name[:6].lower().startswith(GIVEN_NAME_PREFIXES)
    }


def plan_seal(
    memories: Sequence[StmMemory],
    traces: Sequence[TraceRecord],
    now: float,
    settings: Settings,
    *,
    taken_names: Collection[str] = (),
    recent_boxes: Sequence[SealedBox] = (),
    document_frequency: Mapping[str, int] | None = None,
) -> SealPlan:
    """Plan pass 1 (Engram's Memory Boxes and Trace Weaver; "Lifecycle"). Pure; ``now`` epoch s.

    ``memories``: the active memories in STM (any order). ``traces``: the existing trace
    notes. ``recent_boxes``: existing box notes without a trace that ended recently (each is
    checked against each new box's own window, so a generous selection is fine).
    ``taken_names``: base names already in the vault, any case, with or without ``.md`` (only
    those beginning with one of :data:`GIVEN_NAME_PREFIXES`, any case, matter; the others may
    be left out).
    ``document_frequency``: title-word counts for :func:`memory_topics`; ``None`` counts the
    titles of the memories being planned (see the module docstring on idempotence).

    Boxes (in sealing order) are named ``box-<slug>-<hash>`` after their up to 3 most common
    topics (held by the most members, then alphabetically) and the last 6 characters of their
    id, :func:`derived_id` of their members' ids and names, so that two machines sealing the same
    members
    name the box the same; a name still taken (``taken_names``, the memories, traces and recent
    boxes, this pass's names) gets ``-2``, ``-3``…; their folder is ``<boxes>/YYYY-MM-DD/``,
    the UTC date of their first member. New traces are named ``trace-<slug>-<hash>`` alike,
    from the two boxes that started them.

    Trace weaving, box by box in sealing order: a box joins the existing or new trace that
    gained a box at most ``trace_window_days`` before the box's end and whose topics overlap
    the box's by Jaccard ≥ ``trace_overlap`` (the highest overlap, ties by title). Failing
    that, it chains with the best lone box (a recent box note or an earlier box of this pass)
    under the same rules into a new trace ``trace-<slug>`` listing both boxes by end time;
    failing that it stays lone (``trace=None``) until a later box chains with it.
    """
    lc = settings.lifecycle
    ordered = sorted(memories, key=lambda m: (m.created, m.path))
    sealed: list[_Box] = []
    open_members = ordered
    while open_members:  # replay what stays in STM alone until it seals nothing more
        df = TitleWordCounts(open_members) if document_frequency is None else document_frequency
        more, rest = _replay(open_members, df, now, lc)
        if not more:
            break
        sealed += more
        open_members = rest

    taken = _could_be_given(name.strip() for name in taken_names)
    taken |= _could_be_given(base_name(m.path) for m in ordered)
    taken |= {fold_path(t.title) for t in traces} | {fold_path(b.title) for b in recent_boxes}
    folder = settings.folders.boxes.strip("/")
    drafts: list[tuple[str, str, _Box]] = []
    box_ids: list[str] = []
    for box in sealed:
        date = utc_date(box.members[0].created)
        slug = topic_slug(ranked_topics(box.member_topics))
        box_ids.append(derived_id("box", [_member_key(m) for m in box.members]))
        suffix = box_ids[-1][-HASH_CHARS:].lower()
        name = f"box-{slug}-{suffix}" if slug else f"box-{suffix}"
        drafts.append((unique_name(name, taken), date, box))
    trace_of, trace_plans = _weave(
        [(title, frozenset(box.topics), box.members[-1].created) for title, _, box in drafts],
        traces, recent_boxes, taken, settings,
    )
    plans = []
    for (title, date, box), trace, box_id in zip(drafts, trace_of, box_ids, strict=True):
        home = f"{folder}/{date}/{title}"
        plans.append(BoxPlan(
            title, f"{home}.md", tuple(m.path for m in box.members),
            tuple(f"{home}/{base_name(m.path)}" for m in box.members), tuple(sorted(box.topics)),
            box.members[0].created, box.members[-1].created, trace, box.reason, box_id,
        ))
    return SealPlan(tuple(plans), trace_plans, tuple(m.path for m in open_members))
