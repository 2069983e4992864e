"""When a folder event means watchdog's watches may have gone wrong (see :class:`FolderMoves`).

The watcher (:mod:`vaultmem.services.index.watcher`) asks :meth:`FolderMoves.check` about every
folder event; a reason back means: replace the observer and sync the whole vault.
"""

from __future__ import annotations

NEW_FOLDER_SECONDS = 5.0
"""A folder moved into a folder whose creation event arrived at most this many seconds earlier
asks for a new observer."""
_REMEMBERED_FOLDERS = 1000
"""Past this many remembered creations, those older than :data:`NEW_FOLDER_SECONDS` are
forgotten."""


class FolderMoves:
    """Folder events that can leave a folder unwatched, and why.

    watchdog (7.1) walks a new folder when its creation event arrives. A folder moved in before
    that walk gets a second entry for its kernel watch, and the move's event then removes that
    watch through the stale entry: the moved folder's later edits send no events at all. The
    move shows up either as a move into a folder created moments before, or, when the
    destination was not watched yet, as a folder moved away with no destination (observers
    asked for full events report it so). Real vaults rarely do either, so re-watching costs
    little. One thread only (the observer's).
    """

    def __init__(self) -> None:
        self._created: dict[str, float] = {}  # vault-relative folder → monotonic time created

    def check(self, kind: str, src: str | None, dest: str | None, now: float) -> str:
        """The reason to re-watch the vault after a folder event, or "" when there is none.

        ``kind``: watchdog's event type ("created", "moved", …); ``src``/``dest``: the
        vault-relative folder paths (``None`` outside the vault, or no destination); ``now``:
        ``time.monotonic()``. A creation, or a move in from outside, is remembered.
        """
        created = self._created
        if kind == "created" or (kind == "moved" and src is None):
            folder = dest if dest is not None else src
            if folder is None:
                return ""
            if len(created) > _REMEMBERED_FOLDERS:
                for old in [f for f, at in created.items() if now - at > NEW_FOLDER_SECONDS]:
                    del created[old]
            created[folder] = now
            return ""
        if kind != "moved" or src is None:
            return ""
        if dest is None:
            return f"the folder {src or '(the vault)'} moved where no watch sees it"
        parent = dest.rpartition("/")[0]
        while parent:
            at = created.get(parent)
            if at is not None and now - at <= NEW_FOLDER_SECONDS:
                return f"{src} was moved into {parent}, a folder created moments before"
            parent = parent.rpartition("/")[0]
        return ""
