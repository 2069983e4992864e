"""The watchdog observer a :class:`~vaultmem.services.index.watcher.VaultWatcher` listens to:
which events it asks the OS for, and how they reach the watcher."""

from __future__ import annotations

import inspect
from collections.abc import Callable

from watchdog import events as wd_events
from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

_EVENT_NAMES = (
    "FileCreatedEvent FileModifiedEvent FileClosedEvent FileAttribEvent FileDeletedEvent "
    "FileMovedEvent DirCreatedEvent DirDeletedEvent DirMovedEvent"
)
_EVENT_FILTER: list[type[FileSystemEvent]] = [
    cls for name in _EVENT_NAMES.split() if (cls := getattr(wd_events, name, None)) is not None
]
"""What the OS is asked for (no FileAttribEvent before watchdog 5). Never opens or closes without
a write (the worker's own reads would wake it), nor folder modifications (a folder's mtime says
nothing about its notes)."""
_FULL_EVENTS = "generate_full_events" in inspect.signature(Observer).parameters
"""Whether this platform's observer reports moves in and out of the watch as moves (inotify)."""


class _Handler(FileSystemEventHandler):
    """Runs on watchdog's observer thread; only forwards to :meth:`VaultWatcher._on_event`."""

    def __init__(self, on_event: Callable[[FileSystemEvent], None]) -> None:
        super().__init__()
        self._on_event = on_event

    def on_any_event(self, event: FileSystemEvent) -> None:
        self._on_event(event)


def start_observer(root: str, on_event: Callable[[FileSystemEvent], None]) -> BaseObserver:
    """A started observer of the folder ``root`` and everything below it, calling ``on_event``
    on its own thread for each event of :data:`_EVENT_FILTER`.

    Where the platform offers them (inotify), full move events: a folder moved where no watch
    sees it arrives as a move without a destination, not as a deletion (see
    :class:`~vaultmem.services.index.folder_moves.FolderMoves`). Raises ``OSError`` when the
    OS refuses the watches (e.g. inotify's limits).
    """
    make: Callable[..., BaseObserver] = Observer
    observer = make(generate_full_events=True) if _FULL_EVENTS else make()
    observer.schedule(_Handler(on_event), root, recursive=True, event_filter=_EVENT_FILTER)
    observer.start()
    return observer
