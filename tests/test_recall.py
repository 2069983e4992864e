"""Recall (spec 7): FTS candidates, fusion with decay and graph, review blending, filters, CLI.

Vaults are built in tmp_path from hand-written notes (every decay field under the test's
control) and searched through the real index; a copy of the 13th Age SRD checks a real vault.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import vaultmem.services.recall.recall_candidates as recall_module
from vaultmem.cli import main
from vaultmem.core.recall.recall_fusion import (
    UNRANKED_BM25,
    FusionWeights,
    blend_results,
    decay_signal,
    graph_signal,
    relevance_signal,
    review_period,
)
from vaultmem.core.recall.recall_time import TIME_LIFT, asks_when, mentions_time
from vaultmem.core.recall.text_tokens import content_tokens, fts_string, jaccard, query_terms
from vaultmem.errors import InputError
from vaultmem.services.recall.recall import Hit
from vaultmem.services.vault import Vault

NOW = dt.datetime(2026, 11, 20, 12, 0, 0, tzinfo=dt.UTC)
NOW_TEXT = "2026-11-20T12:00:00"
KEYWORD_ONLY = {"decay": 0.0, "graph": 0.0, "review_blend": 0.0}
DANGER_DAYS = 8.6
"""A working memory used once, idle this long, scores ≈ 0.25: the middle of the danger zone."""


def stamp(days_ago: float) -> str:
    return (NOW - dt.timedelta(days=days_ago)).strftime("%Y-%m-%dT%H:%M:%S")


def write(root: Path, rel: str, body: str, **fields: object) -> None:
    """A note at ``rel``; ``fields`` become frontmatter lines as given (``key: value``)."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    front = "".join(f"{key}: {value}\n" for key, value in fields.items())
    path.write_text((f"---\n{front}---\n" if fields else "") + body + "\n", encoding="utf-8")


def memory(root: Path, rel: str, body: str, *, days_ago: float = 0.0, uses: int = 1,
           **fields: object) -> None:
    """A managed memory last used ``days_ago`` days before NOW."""
    values: dict[str, object] = {
        "id": "T" + rel.rsplit("/", 1)[-1].removesuffix(".md").replace(" ", "").upper()[:24],
        "type": "memory", "status": "active", "layer": "working",
        "created": stamp(days_ago + 1), "last_used": stamp(days_ago), "use_count": uses,
        "strength": 1.0,
    }
    values.update(fields)
    write(root, rel, body, **values)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "vault"
    (folder / ".obsidian").mkdir(parents=True)
    return folder


def ask(root: Path, query: str, **options: object) -> list[Hit]:
    with Vault.open(root) as vault:
        return vault.recall(query, now=NOW, **options)  # type: ignore[arg-type]


def paths(hits: list[Hit]) -> list[str]:
    return [hit.path for hit in hits]


def cli(command: str, *args: str, root: Path) -> tuple[int, str, str]:
    """``vaultmem COMMAND --vault ROOT --now NOW ARGS…`` through the real command group."""
    argv = [command, "--vault", str(root), "--now", NOW_TEXT, *args]
    result = CliRunner().invoke(main, argv)
    return result.exit_code, result.stdout, result.stderr


# ------------------------------------------------------------------------------ pure parts
def test_query_terms_drop_stopwords_and_keep_words_only() -> None:
    assert query_terms("What is the DARK theme of my editor?") == ("dark", "theme", "editor")
    assert query_terms("to be or not to be") == ("to", "be", "or", "not")
    assert query_terms('"  -- :: * ( ) ') == ()
    assert query_terms("foo-bar a:b NEAR(x") == ("foo", "bar", "b", "near", "x")
    assert fts_string('say "hi"') == '"say ""hi"""'


def test_content_tokens_and_jaccard() -> None:
    assert content_tokens("The cat and THE Dog, a cat!") == {"cat", "dog"}
    assert jaccard({"a", "b"}, {"b", "c"}) == pytest.approx(1 / 3)
    assert jaccard(set(), set()) == 0.0


def test_relevance_and_decay_signals() -> None:
    r = relevance_signal(np.array([-4.0, -2.0, 0.0]))
    assert r == [1.0, 0.5, 0.0]
    d = decay_signal(np.array([1.0, 0.05, 4.0, 7.0]), np.array([True, True, True, False]))
    assert d[0] == pytest.approx(0.5) and d[1] < 0.05 and d[2] == pytest.approx(0.8)
    assert d[3] == 0.5  # not a memory: neutral


def test_graph_signal_takes_the_strongest_linked_seed() -> None:
    relevance = np.array([1.0, 0.6, 0.2, 0.1])
    seeds = np.array([True, True, False, False])
    # 0 → 2, 3 → 1 (a backlink), 1 → 2
    proximity = graph_signal(relevance, seeds, np.array([0, 3, 1]), np.array([2, 1, 2]))
    assert proximity.signal == [0.0, 0.0, 1.0, 0.6]
    assert proximity.via == [-1, -1, 0, 1]


def test_blend_follows_seed_001_example() -> None:
    primary = [10, 11, 12, 13, 14, 15, 16, 20, 21, 22]
    review = [20, 21, 22]
    placed = blend_results(primary, review, 10, 0.3)
    assert placed == [(10, False), (11, False), (20, True), (12, False), (13, False), (21, True),
                      (14, False), (15, False), (22, True), (16, False)]
    assert blend_results(primary, review, 5, 0.3)[2] == (20, True)  # top 5: one review slot
    assert review_period(0.3) == 3 and review_period(0.5) == 2 and review_period(0.0) == 0
    assert blend_results([1, 2, 3], [], 10, 0.3) == [(1, False), (2, False), (3, False)]


def test_review_candidate_takes_a_slot_only_when_close_to_the_hit_it_displaces() -> None:
    primary = [0, 1, 2, 3, 4, 5]
    score = [1.0, 0.9, 0.8, 0.7, 0.6, 0.5]
    # candidate 5 (0.5) against the hit it would displace at slot 3 (candidate 2, 0.8)
    assert blend_results(primary, [5], 4, 0.3, score, 0.5)[2] == (5, True)  # 0.5 ≥ 0.5 × 0.8
    assert blend_results(primary, [5], 4, 0.3, score, 0.9) == [
        (0, False), (1, False), (2, False), (3, False)]  # 0.5 < 0.9 × 0.8: primary order
    # the queue keeps its order: the head waits for a slot where it is close enough
    assert blend_results(primary, [5, 3], 6, 0.3, score, 0.9) == [
        (0, False), (1, False), (2, False), (3, False), (4, False), (5, True)]


def test_weights_override_and_validation() -> None:
    weights = FusionWeights().with_overrides({"decay": 0, "graph": 0})
    assert (weights.relevance, weights.decay, weights.graph) == (1.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="unknown recall weight 'speed'"):
        FusionWeights().with_overrides({"speed": 1.0})
    with pytest.raises(ValueError, match="review_blend"):
        FusionWeights().with_overrides({"review_blend": 1.5})


# ------------------------------------------------------------------------------ ranking
def test_fts_finds_notes_by_stemmed_words(root: Path) -> None:
    memory(root, "STM/Marathon plans.md", "She was running two marathons in the autumn.")
    write(root, "Notes/Unrelated.md", "Nothing about that sport here.")
    hits = ask(root, "runs marathon")
    assert paths(hits) == ["STM/Marathon plans.md"]
    assert hits[0].id == "TMARATHONPLANS" and hits[0].title == "Marathon plans"


def test_title_outranks_body(root: Path) -> None:
    write(root, "Notes/Sourdough.md", "Feed it flour and water every day.")
    write(root, "Notes/Bread notes.md", "Tried a sourdough loaf once, feed it flour.")
    hits = ask(root, "sourdough", weights=KEYWORD_ONLY)
    assert paths(hits) == ["Notes/Sourdough.md", "Notes/Bread notes.md"]
    assert hits[0].signals.bm25 < hits[1].signals.bm25 < 0


def test_decay_breaks_ties_between_equally_relevant_memories(root: Path) -> None:
    body = "The kayak club meets at the lake on Thursdays."
    memory(root, "STM/Club A.md", body, days_ago=20)  # faded
    memory(root, "STM/Club B.md", body, days_ago=0)  # fresh
    hits = ask(root, "kayak club")
    assert paths(hits) == ["STM/Club B.md", "STM/Club A.md"]
    assert hits[0].relevance == hits[1].relevance
    assert hits[0].decay > hits[1].decay
    # without decay the tie stands and breaks by path
    assert paths(ask(root, "kayak club", weights=KEYWORD_ONLY)) == ["STM/Club A.md",
                                                                    "STM/Club B.md"]


def test_graph_proximity_lifts_a_linked_note(root: Path) -> None:
    write(root, "Notes/Glacier.md", "Glacier trip plan, see [[Zeta]] and [[Gamma]].")
    write(root, "Notes/Beta.md", "A glacier photo, once.")
    write(root, "Notes/Zeta.md", "A glacier photo, once.")
    write(root, "Notes/Gamma.md", "Ice axes and crampons.")  # no query word: reached by link
    keyword = paths(ask(root, "glacier", weights=KEYWORD_ONLY))
    assert keyword == ["Notes/Glacier.md", "Notes/Beta.md", "Notes/Zeta.md"]
    hits = ask(root, "glacier")
    assert paths(hits)[:3] == ["Notes/Glacier.md", "Notes/Zeta.md", "Notes/Beta.md"]
    by_path = {hit.path: hit for hit in hits}
    assert by_path["Notes/Zeta.md"].signals.linked_to == "Glacier"
    assert by_path["Notes/Zeta.md"].graph > 0 == by_path["Notes/Beta.md"].graph
    gamma = by_path["Notes/Gamma.md"]
    assert gamma.signals.bm25 == 0.0 and gamma.relevance == 0.0 and gamma.graph > 0


def test_review_blending_puts_danger_zone_memories_at_the_seeds_positions(root: Path) -> None:
    # equally relevant, and different enough not to be near-duplicates of each other
    words = ["wind", "tide", "fog", "rain", "hail", "snow", "gulls", "boats", "stars", "ships",
             "waves", "cliffs", "lamps", "ropes", "clouds", "storms", "dunes", "reefs"]
    bodies = [f"The lighthouse keeper logs {a} and {b}."
              for a, b in zip(words[::2], words[1::2], strict=True)]
    for n in range(12):
        memory(root, f"STM/Fresh {n:02d}.md", bodies[n % len(bodies)] if n < 10 else
               f"The lighthouse keeper logs {words[n]} and {words[n + 5]}.")
    memory(root, "STM/Due 1.md", "The lighthouse keeper logs oil and wicks.", days_ago=DANGER_DAYS)
    memory(root, "STM/Due 2.md", "The lighthouse keeper logs gales and swell.",
           days_ago=DANGER_DAYS + 0.5)
    memory(root, "STM/Due elsewhere.md", "The volcano erupted twice.", days_ago=DANGER_DAYS)
    hits = ask(root, "lighthouse keeper", k=10)
    assert [hit.rank for hit in hits if hit.review] == [3, 6]
    assert [hits[2].path, hits[5].path] == ["STM/Due 1.md", "STM/Due 2.md"]
    assert all(0.15 <= (hit.signals.decay_score or 0) <= 0.35 for hit in hits if hit.review)
    assert hits[2].signals.review_priority > 0.9
    assert "STM/Due elsewhere.md" not in paths(hits)  # not relevant to the query
    unblended = ask(root, "lighthouse keeper", k=10, weights={"review_blend": 0.0})
    assert not any(hit.review for hit in unblended)
    assert "STM/Due 1.md" not in paths(unblended)  # its own score puts it below the fresh ones


def test_score_is_the_sum_of_the_contributions_and_order_is_deterministic(root: Path) -> None:
    for n in range(6):
        memory(root, f"STM/Tea {n}.md", f"Green tea with {'lemon ' * n}and honey.", days_ago=n)
    first = ask(root, "tea lemon honey")
    assert first == ask(root, "tea lemon honey")
    for hit in first:
        assert hit.score == pytest.approx(hit.relevance + hit.decay + hit.graph)
    non_review = [hit.score for hit in first if not hit.review]
    assert non_review == sorted(non_review, reverse=True)


def test_narrowing_keeps_rare_words_when_the_match_set_is_over_budget(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(30):
        write(root, f"Notes/Common {n:02d}.md", "weather report for the harbour today")
    write(root, "Notes/Rare.md", "weather report mentions a waterspout")
    monkeypatch.setattr(recall_module, "SCORE_BUDGET", 10)
    assert paths(ask(root, "weather waterspout", weights=KEYWORD_ONLY))[0] == "Notes/Rare.md"
    # every word over budget: still answers, bounded, without error
    assert 0 < len(ask(root, "weather report", k=5)) <= 5


def test_common_stopwords_over_budget_are_matched_unranked(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(30):
        write(root, f"Notes/Line {n:02d}.md", f"the tide and the moon, note {n}")
    monkeypatch.setattr(recall_module, "SCORE_BUDGET", 10)
    hits = ask(root, "the and", k=5, weights=KEYWORD_ONLY)
    assert [hit.signals.bm25 for hit in hits] == [UNRANKED_BM25] * 5
    assert paths(hits) == sorted(paths(hits))  # equal scores: by path
    code, out, err = cli("recall", "--explain", "--k", "1", "--", "the and", root=root)
    assert code == 0, err
    assert "matched common words only: not ranked" in out


# ------------------------------------------------------------------------------ filters
@pytest.fixture
def garden(root: Path) -> Path:
    memory(root, "STM/Basil A.md", "Basil needs sun.", days_ago=1, tags="[garden]")
    memory(root, "LTM/Basil B.md", "Basil grows from cuttings.", days_ago=40, status="promoted",
           layer="semantic", tags="[garden/herbs]")
    memory(root, "Archive/Basil C.md", "Basil froze last winter.", days_ago=100,
           status="archived")
    write(root, "Notes/Basil D.md", "My own basil notes.", status="archived",
          created="2026-01-01T00:00:00")
    return root


@pytest.mark.parametrize(("options", "expected"), [
    ({}, {"STM/Basil A.md", "LTM/Basil B.md", "Notes/Basil D.md"}),
    ({"include_archived": True},
     {"STM/Basil A.md", "LTM/Basil B.md", "Archive/Basil C.md", "Notes/Basil D.md"}),
    ({"status": "promoted"}, {"LTM/Basil B.md"}),
    ({"status": "archived"}, {"Archive/Basil C.md"}),
    ({"layer": "semantic"}, {"LTM/Basil B.md"}),
    ({"tag": "garden"}, {"STM/Basil A.md", "LTM/Basil B.md"}),
    ({"tag": "#Garden/Herbs"}, {"LTM/Basil B.md"}),
    ({"folder": "LTM/"}, {"LTM/Basil B.md"}),
    ({"folder": "Notes"}, {"Notes/Basil D.md"}),
    ({"since": "2026-11-10"}, {"STM/Basil A.md"}),
    ({"since": NOW - dt.timedelta(days=60), "include_archived": True},
     {"STM/Basil A.md", "LTM/Basil B.md"}),
])
def test_filters(garden: Path, options: dict[str, object], expected: set[str]) -> None:
    assert set(paths(ask(garden, "basil", **options))) == expected


def test_unmanaged_notes_have_no_id_and_a_neutral_decay(garden: Path) -> None:
    hits = ask(garden, "basil")
    hit = next(h for h in hits if h.path == "Notes/Basil D.md")
    assert hit.id is None and hit.signals.decay_score is None
    # neutral 0.5, lowered so that it cannot beat a memory matching at least as well
    memories = [h for h in hits if h.signals.decay_score is not None and h.signals.decay_score
                >= 0.05 and h.signals.relevance >= hit.signals.relevance]
    assert memories and hit.signals.decay < 0.5
    assert all(h.score >= hit.score for h in memories)


def test_bad_options_are_input_errors(garden: Path) -> None:
    cases: list[tuple[dict[str, object], str]] = [
        ({"status": "sleeping"}, "status must be one of"),
        ({"since": "soon"}, "since is not a datetime"),
        ({"colour": "red"}, "unknown recall option 'colour'"),
        ({"k": 0}, "k must be a whole number"),
        ({"weights": {"decay": -1}}, "must be a number ≥ 0"),
    ]
    for options, message in cases:
        with pytest.raises(InputError, match=message):
            ask(garden, "basil", **options)


@pytest.mark.parametrize("query", [
    '"', "foo-bar", "a:b", "*", "NEAR(", "ü", "中文", "AND", "OR NOT", "(((",
    "title:basil", '"unbalanced', "-x", "^", "basil*", "NEAR(basil, 2)", "{title}: x", "\x00",
])
def test_hostile_queries_never_raise(garden: Path, query: str) -> None:
    """(An empty or blank query is refused: test_filter_refusals.py.)"""
    hits = ask(garden, query)
    assert isinstance(hits, list)
    code, out, err = cli("recall", "--", query, root=garden)
    assert code == 0, err


def test_operators_and_non_ascii_are_searched_as_text(root: Path) -> None:
    write(root, "Notes/Bar.md", "the foo bar is open")
    write(root, "Notes/Mueller.md", "Frau Müller teaches 中文 on Mondays")
    assert paths(ask(root, "foo-bar")) == ["Notes/Bar.md"]
    assert paths(ask(root, "muller")) == ["Notes/Mueller.md"]  # diacritics folded
    assert paths(ask(root, "中文")) == ["Notes/Mueller.md"]
    assert paths(ask(root, "NEAR(foo")) == ["Notes/Bar.md"]


# ------------------------------------------------------------------------------ CLI
def test_cli_explain_shows_every_signal(garden: Path) -> None:
    code, out, err = cli("recall", "basil", "--explain", root=garden)
    assert code == 0, err
    assert "score = 1×relevance + 0.3×decay + 0.2×graph" in out
    assert "  1. " in out and "  3. " in out and "  4. " not in out
    for signal in ("relevance", "decay", "graph"):
        assert out.count(f"       {signal} ") == 3
    assert "(bm25 -" in out and "(decay score " in out and "(neutral: not a memory)" in out


def test_cli_json_shape(garden: Path) -> None:
    code, out, err = cli("recall", "basil", "--json", "--k", "3", root=garden)
    assert code == 0, err
    data = json.loads(out)["hits"]
    assert len(data) == 3
    for hit in data:
        assert {"rank", "path", "id", "title", "score", "review", "contributions",
                "signals"} <= set(hit)
        assert set(hit["contributions"]) == {"relevance", "decay", "graph"}
        assert {"bm25", "decay_score", "review_priority", "linked_to"} <= set(hit["signals"])
    own = [hit for hit in data if hit["path"] == "Notes/Basil D.md"]
    assert own and own[0]["id"] is None and own[0]["signals"]["decay_score"] is None


def test_cli_plain_output_and_no_match(garden: Path) -> None:
    code, out, _ = cli("recall", "basil", "--folder", "LTM", root=garden)
    lines = out.splitlines()
    assert code == 0 and lines[0].strip().startswith("1.") and lines[0].endswith("LTM/Basil B.md")
    # the hit's one-line excerpt follows, indented under the path
    body = (garden / "LTM/Basil B.md").read_text().split("---\n", 2)[2]
    first_words = " ".join(body.split()[:3])
    assert len(lines) == 2 and lines[1].startswith(" " * 13) and first_words in lines[1]
    code, out, _ = cli("recall", "zucchini", root=garden)
    assert code == 0 and out == "no notes match 'zucchini'\n"
    code, out, err = cli("recall", "basil", "--since", "last week", root=garden)
    assert code == 2 and "is not a datetime" in err


def test_cli_touch_reinforces_the_first_memory_only(garden: Path) -> None:
    code, out, _ = cli("recall", "basil", "--json", root=garden)
    hits = json.loads(out)["hits"]
    memories = [h["path"] for h in hits if h["signals"]["decay_score"] is not None]
    assert len(memories) == 2  # two memories are returned …
    code, out, err = cli("recall", "basil", "--touch", root=garden)
    assert code == 0, err
    assert "reinforced 1 memory: " in err  # … only the first is the one used
    with Vault.open(garden) as vault:
        counts = {p: vault.memory(p, now=NOW).fields.use_count for p in memories}
        assert counts == {memories[0]: 2, memories[1]: 1}
        assert vault.memory("Archive/Basil C.md", now=NOW).fields.use_count == 1  # not returned
    assert "use_count" not in (garden / "Notes/Basil D.md").read_text()
    code, _, _ = cli("recall", "basil", root=garden)  # no --touch: no change
    with Vault.open(garden) as vault:
        assert vault.memory(memories[0], now=NOW).fields.use_count == 2


def test_cli_touch_hit_names_the_hits_and_refuses_others(garden: Path) -> None:
    code, out, err = cli("recall", "basil", "--touch-hit", "Basil B", root=garden)
    assert code == 0, err and "reinforced 1 memory: Basil B" in err
    with Vault.open(garden) as vault:
        assert vault.memory("LTM/Basil B.md", now=NOW).fields.use_count == 2
        assert vault.memory("STM/Basil A.md", now=NOW).fields.use_count == 1
    code, out, err = cli("recall", "basil", "--touch-hit", "99", root=garden)
    assert code == 1 and "'99' is not among the" in err
    code, out, err = cli("recall", "basil", "--touch-hit", "Basil D", root=garden)
    assert code == 1 and "is not a memory; nothing touched" in err


def test_cli_touch_skips_a_memory_it_must_not_write(root: Path) -> None:
    memory(root, "STM/Clean.md", "Pelican colony at the pier.")
    memory(root, "STM/Conflicted.md",
           "<<<<<<< HEAD\nPelican colony moved.\n=======\nPelicans left.\n>>>>>>> other")
    before = (root / "STM/Conflicted.md").read_bytes()
    code, out, err = cli("recall", "pelican", "--touch-hit", "Conflicted", "--touch-hit", "Clean",
                         root=root)
    assert code == 0, err
    assert "warning: not reinforced: STM/Conflicted.md" in err
    assert (root / "STM/Conflicted.md").read_bytes() == before
    assert "use_count: 2" in (root / "STM/Clean.md").read_text()


# ------------------------------------------------------------------------------ review
@pytest.fixture
def due(root: Path) -> Path:
    memory(root, "STM/Peak.md", "At the peak of the zone.", days_ago=DANGER_DAYS)  # ≈ 0.25
    memory(root, "STM/Edge.md", "Near the upper edge.", days_ago=6)  # ≈ 0.33
    memory(root, "STM/Fresh.md", "Used today.", days_ago=0)  # 1.0: not due
    memory(root, "STM/Faded.md", "Long gone.", days_ago=60)  # < 0.15: not due
    memory(root, "Archive/Peak archived.md", "Archived.", days_ago=DANGER_DAYS,
           status="archived")
    return root


def test_review_queue_orders_by_priority(due: Path) -> None:
    with Vault.open(due) as vault:
        rows = vault.review(now=NOW)
    assert [row.path for row in rows] == ["STM/Peak.md", "STM/Edge.md"]
    assert rows[0].review_priority > rows[1].review_priority > 0
    assert all(0.15 <= row.score <= 0.35 for row in rows)


def test_review_cli(due: Path) -> None:
    code, out, err = cli("review", "--json", "--k", "1", root=due)
    assert code == 0, err
    assert [row["path"] for row in json.loads(out)["memories"]] == ["STM/Peak.md"]
    code, out, _ = cli("review", root=due)
    assert code == 0 and out.splitlines()[0].split() == ["priority", "score", "uses", "last",
                                                         "used", "path"]
    assert out.splitlines()[1].endswith("STM/Peak.md")


def test_review_cli_with_nothing_due(root: Path) -> None:
    memory(root, "STM/Fresh.md", "Used today.")
    code, out, _ = cli("review", root=root)
    assert code == 0 and out == "no memories are due for review\n"


# ------------------------------------------------------------------------------ real vault
def test_real_vault_keyword_recall_finds_the_rules_note(copy_vault: object) -> None:
    root = copy_vault("13th-age-srd")  # type: ignore[operator]
    hits = ask(root, "the Escalation Die", weights=KEYWORD_ONLY, k=5)
    assert hits[0].path.endswith("Combat-Sequence/Escalation-Die.md")
    assert all(hit.id is None for hit in hits)  # nothing in the SRD is a managed memory


def test_time_words_are_recognised_in_questions_and_memories() -> None:
    assert asks_when("When did Caroline go to the support group?")
    assert asks_when("what year did she move") and asks_when("How long ago was the trip?")
    assert not asks_when("Where did Caroline go?") and not asks_when("Since when? no")
    assert mentions_time("I went yesterday") and mentions_time("back in May 2022")
    assert mentions_time("a long time ago")
    assert not mentions_time("I went to the support group") and not mentions_time("Mayor")


def test_a_question_asking_when_lifts_the_memory_that_says_when(root: Path) -> None:
    memory(root, "STM/Group A.md", "I went to the support group.")
    memory(root, "STM/Group B.md", "I went to the support group yesterday.")
    plain = ask(root, "Did I go to the support group?")
    assert paths(plain) == ["STM/Group A.md", "STM/Group B.md"]  # shorter: better BM25
    when = ask(root, "When did I go to the support group?")
    assert paths(when) == ["STM/Group B.md", "STM/Group A.md"]
    assert when[0].score == pytest.approx(when[0].relevance + when[0].decay + when[0].graph)
    assert when[0].graph - plain[1].graph == pytest.approx(TIME_LIFT)  # shown as context
    assert when[0].signals.time == TIME_LIFT and when[1].signals.time == 0.0
    code, out, _ = cli("recall", "When did I go to the support group?", "--explain", root=root)
    assert code == 0 and "+ time words 0.300   (the question asks when" in out
    bm25 = {**KEYWORD_ONLY, "episode": 0.0, "vector": 0.0}
    keywords = ask(root, "When did I go to the support group?", weights=bm25)
    assert paths(keywords) == ["STM/Group A.md", "STM/Group B.md"]  # pure BM25 stays BM25
