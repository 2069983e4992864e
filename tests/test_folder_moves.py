"""Which folder events make the watcher re-watch the vault (FolderMoves, beside the real
file-system tests in test_watcher.py)."""

from __future__ import annotations

from vaultmem.services.index.folder_moves import NEW_FOLDER_SECONDS, FolderMoves


def test_a_move_into_a_folder_created_moments_before_asks_for_a_rewatch() -> None:
    moves = FolderMoves()
    assert moves.check("created", "Fresh", None, now=100.0) == ""
    reason = moves.check("moved", "Projects", "Fresh/inside/Projects", now=101.0)
    assert reason == "Projects was moved into Fresh, a folder created moments before"


def test_a_move_into_an_old_or_unknown_folder_does_not() -> None:
    moves = FolderMoves()
    moves.check("created", "Fresh", None, now=100.0)
    assert moves.check("moved", "A", "Fresh/A", now=100.0 + NEW_FOLDER_SECONDS + 1) == ""
    assert moves.check("moved", "B", "Elsewhere/B", now=101.0) == ""
    assert moves.check("moved", "C", "C2", now=101.0) == ""  # a rename at the top
    assert moves.check("deleted", "Fresh", None, now=101.0) == ""


def test_a_folder_moved_where_no_watch_sees_it_asks_for_a_rewatch() -> None:
    assert FolderMoves().check("moved", "Projects", None, now=1.0) == (
        "the folder Projects moved where no watch sees it"
    )


def test_a_folder_moved_in_from_outside_counts_as_created() -> None:
    moves = FolderMoves()
    assert moves.check("moved", None, "Inbox", now=10.0) == ""
    assert moves.check("moved", "Notes", "Inbox/Notes", now=11.0).startswith("Notes was moved")


def test_old_creations_are_forgotten_once_many_are_remembered() -> None:
    moves = FolderMoves()
    for n in range(1001):
        moves.check("created", f"F{n}", None, now=0.0)
    moves.check("created", "Late", None, now=NEW_FOLDER_SECONDS + 1)
    assert moves.check("moved", "X", "F3/X", now=NEW_FOLDER_SECONDS + 1) == ""
    assert moves.check("moved", "Y", "Late/Y", now=NEW_FOLDER_SECONDS + 2) != ""
    assert len(moves._created) == 1
