"""Creating many new notes at once (``import``): one flush to disk per batch, not one per note.

Each note is written to a temporary file beside its final name (the same ``.<name>.….vaultmem-tmp``
names :func:`~vaultmem.store.note_files.write_note` uses, so a kill leaves nothing a later
clean-up does not recognise). :meth:`NewNotes.commit` flushes them all to disk with one
``syncfs`` of the vault's file system (Linux; elsewhere an ``fsync`` per file), then links each
into place — a link never replaces a file, so a note someone else created under that name in
the meantime is kept and this one is reported as not written — and fsyncs each folder once.
A note is therefore either absent or complete on disk, never torn.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from pathlib import Path

from vaultmem.store.durability import fsync_dir, sync_file_system


def flush_files(folder: Path, files: list[Path]) -> None:
    """Make ``files`` (on the file system holding ``folder``) durable: one ``syncfs`` on Linux,
    else an ``fsync`` per file (a file gone meanwhile is passed over)."""
    if not files or sync_file_system(folder):
        return
    for path in files:
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            continue
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _link_no_replace(tmp: str, path: Path) -> None:
    """Give ``tmp`` the name ``path`` unless it exists (a hard link; where the file system has
    none — FAT, exFAT — a rename after a check)."""
    try:
        os.link(tmp, path)
    except OSError as err:
        if isinstance(err, FileExistsError) or err.errno not in _NO_LINKS:
            raise
        if os.path.lexists(path):
            raise FileExistsError(path) from None
        os.rename(tmp, path)


_NO_LINKS = {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK}


class NewNotes:
    """A batch of new notes: :meth:`add` each, then :meth:`commit` (or :meth:`discard`)."""

    def __init__(self) -> None:
        self._pending: list[tuple[Path, str]] = []  # (final path, temporary path)
        self._folders: set[Path] = set()  # made (or found) already
        self._written: dict[Path, tuple[str, int, int]] = {}  # path → (text, size, mtime_ns)
        self.linked: dict[Path, tuple[str, int, int]] = {}
        """After :meth:`commit`: each note it made visible → (text, size in bytes, mtime_ns as
        written), so the caller can index the text without reading the note back."""

    def __len__(self) -> int:
        return len(self._pending)

    def add(self, path: Path, text: str) -> None:
        """Write ``text`` (UTF-8) to a temporary file beside ``path``; not yet durable or visible.

        Raises ``FileExistsError`` when ``path`` already exists.
        """
        if os.path.lexists(path):
            raise FileExistsError(path)
        if path.parent not in self._folders:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._folders.add(path.parent)
        while True:
            tmp = os.path.join(path.parent, f".{path.name}.{secrets.token_hex(4)}.vaultmem-tmp")
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                break
            except FileExistsError:
                continue
        try:
            with os.fdopen(fd, "wb") as handle:
                os.fchmod(fd, 0o644)  # whatever the umask, like every note vaultmem writes
                handle.write(text.encode("utf-8"))
                handle.flush()
                info = os.fstat(fd)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
        self._pending.append((path, tmp))
        self._written[path] = (text, info.st_size, info.st_mtime_ns)

    def commit(self) -> dict[Path, str]:
        """Make every added note durable and visible; returns ``{path: why}`` of those not written.

        One ``syncfs`` (or an ``fsync`` per file) before any note appears, one ``fsync`` per
        folder after. A name taken meanwhile by another writer keeps that writer's file.
        """
        pending, self._pending = self._pending, []
        written, self._written = self._written, {}
        self.linked = {}
        if not pending:
            return {}
        flush_files(pending[0][0].parent, [Path(tmp) for _, tmp in pending])
        failed: dict[Path, str] = {}
        folders: set[Path] = set()
        for path, tmp in pending:
            try:
                _link_no_replace(tmp, path)
                folders.add(path.parent)
                self.linked[path] = written[path]
            except FileExistsError:
                failed[path] = "already exists (written by someone else meanwhile); not overwritten"
            except OSError as err:
                failed[path] = f"cannot write: {err.strerror}"
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
        for folder in sorted(folders):
            fsync_dir(folder)
        return failed

    def discard(self) -> None:
        """Remove the temporary files of notes added and not committed."""
        pending, self._pending = self._pending, []
        self._written = {}
        for _, tmp in pending:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
