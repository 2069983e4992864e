"""Dates named in a recall query: parsed into windows, matched against ``created``."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultmem.cli import main
from vaultmem.core.recall.recall_dates import DATE_LIFT, dates_asked
from vaultmem.services.vault import Vault

NOW = dt.datetime(2023, 12, 1, 12, 0, tzinfo=dt.UTC)


def days(query: str) -> list[tuple[str, str]]:
    """The windows of ``query`` as (first day, day after the last) ISO dates."""
    return [(dt.datetime.fromtimestamp(a, dt.UTC).date().isoformat(),
             dt.datetime.fromtimestamp(b, dt.UTC).date().isoformat())
            for a, b in dates_asked(query, NOW)]


@pytest.mark.parametrize(("query", "expected"), [
    ("What did Gina find on 1 February, 2023?", [("2023-01-31", "2023-02-03")]),
    ("Who did Maria have dinner with on May 3, 2023?", [("2023-05-02", "2023-05-05")]),
    ("the 3rd of June 2023", [("2023-06-02", "2023-06-05")]),
    ("notes from 2023-07-07", [("2023-07-06", "2023-07-09")]),
    ("What did Maria donate in December 2023?", [("2023-12-01", "2024-01-01")]),
    ("When did Melanie go camping in June?", [("2023-06-01", "2023-07-01")]),
    ("What did I plan in December?", [("2023-12-01", "2024-01-01")]),  # begun today
    ("the party on December 25", [("2022-12-24", "2022-12-27")]),  # not yet: last year's
    ("How often did she go to the beach in 2023?", [("2023-01-01", "2024-01-01")]),
    ("between August 11 and Aug 15, 2023",
     [("2023-08-10", "2023-08-13"), ("2023-08-14", "2023-08-17")]),
])
def test_dates_named_in_a_query_become_windows(query: str, expected: list[tuple[str, str]]) -> (
        None):
    assert days(query) == expected


@pytest.mark.parametrize("query", [
    "what may I do tomorrow", "Where did Caroline go?", "the March of progress", "in 1066",
    "a score of 2023 points", "the 12:30 meeting", "",
])
def test_queries_without_a_date_have_no_window(query: str) -> None:
    assert dates_asked(query, NOW) == ()


def test_an_impossible_day_is_not_read_as_that_day() -> None:
    assert days("31 February 2023") == [("2023-02-01", "2023-03-01")]  # only its month remains
    assert days("February 29") == []  # no 29 February in 2023 or 2022: not read
    late = dt.datetime(9999, 12, 31, 23, tzinfo=dt.UTC)  # its window would pass year 9999
    assert dates_asked("on December 31", late) == ()
    assert len(dates_asked("on December 20", late)) == 1


def import_dated(root: Path, lines: list[tuple[str, str]]) -> Vault:
    vault, _ = Vault.init(root)
    rows = [json.dumps({"content": text, "created": created}) for text, created in lines]
    report = vault.import_jsonl(rows, now=NOW)
    assert not report.errors and len(report.imported) == len(lines)
    return vault


def test_a_memory_created_on_the_named_day_comes_first(tmp_path: Path) -> None:
    vault = import_dated(tmp_path / "v", [
        ("We had dinner with the neighbours and talked about the garden fence.",
         "2023-05-10T19:00:00"),
        ("Dinner with Anna at the new noodle place.", "2023-05-03T20:00:00"),
        ("Dinner dinner dinner: the dinner party list.", "2023-06-20T18:00:00"),
    ])
    plain = vault.recall("Who did I have dinner with?", k=3, now=NOW, sync=False)
    assert "Anna" not in plain[0].text  # without the date the word counts decide
    hits = vault.recall("Who did I have dinner with on May 3, 2023?", k=3, now=NOW, sync=False)
    assert "Anna" in hits[0].text
    assert hits[0].signals.date == DATE_LIFT
    assert all(hit.signals.date == 0.0 for hit in hits[1:])
    pure = vault.recall("Who did I have dinner with on May 3, 2023?", k=3, now=NOW, sync=False,
                        weights={"decay": 0, "graph": 0, "review_blend": 0, "episode": 0,
                                 "vector": 0})
    assert all(hit.signals.date == 0.0 for hit in pure)  # BM25 stays BM25
    vault.close()


def test_a_memory_sharing_no_word_joins_when_created_in_the_month(tmp_path: Path) -> None:
    vault = import_dated(tmp_path / "v", [
        ("I went to Woodhaven, a small town in the Midwest.", "2022-07-14T10:00:00"),
        ("We plan to travel to Lisbon someday.", "2022-09-02T10:00:00"),
    ])
    plain = vault.recall("Where did I travel?", k=5, now=NOW, sync=False)
    assert [hit.text for hit in plain] == ["We plan to travel to Lisbon someday."]
    hits = vault.recall("Where did I travel in July 2022?", k=5, now=NOW, sync=False)
    found = {hit.text.split(",")[0]: hit for hit in hits}
    assert set(found) == {"I went to Woodhaven", "We plan to travel to Lisbon someday."}
    woodhaven = found["I went to Woodhaven"]
    assert woodhaven.signals.bm25 == 0.0 and woodhaven.signals.date == DATE_LIFT
    vault.close()


def test_explain_names_the_date_lift(tmp_path: Path) -> None:
    root = tmp_path / "v"
    import_dated(root, [("Dinner with Anna at the new noodle place.", "2023-05-03T20:00:00"),
                        ("Dinner with the team.", "2023-04-01T20:00:00")]).close()
    result = CliRunner().invoke(main, ["recall", "--vault", str(root), "--now",
                                       "2023-12-01T12:00:00", "dinner on 3 May 2023", "--explain"])
    assert result.exit_code == 0, result.output
    assert f"+ date {DATE_LIFT:.3f}   (created on a date the question names)" in result.output


def test_notes_in_the_window_matching_no_word_join_by_closeness_else_oldest_first(
        tmp_path: Path) -> None:
    from vaultmem.services.recall.recall import RecallFilters
    from vaultmem.services.recall.recall_candidates import dated_candidates

    lines = [(f"Chore {n}: swept the porch.", f"2022-07-{n:02d}T09:00:00") for n in range(1, 9)]
    lines += [("Dinner at the harbour.", "2022-08-02T09:00:00")]  # outside July
    vault = import_dated(tmp_path / "v", lines)
    try:
        conn = vault.index.conn
        july = dates_asked("in July 2022", NOW)
        paths = {str(p) for (p,) in conn.execute("SELECT path FROM notes")}
        chores = sorted(p for p in paths if "Chore" in p)
        known = {chores[0]}
        rows, bm25 = dated_candidates(conn, [], RecallFilters(), july, known, 3)
        oldest = [str(row[0]) for row in rows]
        assert oldest == chores[1:4] and bm25 == [0.0] * 3  # oldest first, never the known one

        def closeness(pool: list[str]) -> list[float]:  # the later the chore, the closer
            return [float("nan") if p == chores[5] else float(p.count("8") + p.count("7"))
                    for p in pool]

        rows, _ = dated_candidates(conn, [], RecallFilters(), july, known, 2, closeness)
        assert {str(row[0]) for row in rows} == {chores[7], chores[6]}
        matched, scores = dated_candidates(conn, ["porch"], RecallFilters(), july, known, 2)
        assert len(matched) == 2 and all(s < 0 for s in scores)  # word matches come first
    finally:
        vault.close()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["in", "of", "since", "during", "mid", "-", " ", ",", ".", "3", "07", "2023", "1999",
             "May", "mAr", "sept", "ſeptember", "Jan.", "July", "12th", "coffee", "İ", "K", "\n"]
        )
        | st.text(max_size=4),
        max_size=12,
    ).map("".join)
)
def test_a_query_the_quick_check_passes_over_names_no_date(query: str) -> None:
    """dates_asked skips its patterns for a query without a digit or a month's first letters;
    running every pattern over such a query finds nothing either."""
    from vaultmem.core.recall import recall_dates

    now = dt.datetime(2026, 12, 4, tzinfo=dt.UTC)
    if recall_dates._MAY_NAME_A_DATE.search(query) is None:
        assert not any(p.search(query) for _, p in recall_dates._patterns()), query
        assert dates_asked(query, now) == ()
