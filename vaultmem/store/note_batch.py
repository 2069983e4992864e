"""Creating many new notes at once (``import``): one flush to disk per batch, not one per note.

Each note is written to a temporary file beside its final name (the same ``.<name>.….vaultmem-tmp``
names :func:`~vaultmem.store.note_files.write_note` uses, so a kill leaves nothing a later
clean-up does not recognise). :meth:`NewNotes.commit` flushes them all to disk with one
``syncfs`` of the vault's file system (Linux; elsewhere an ``fsync`` per file), then renames
each into place without replacing a file (Linux ``renameat2``; elsewhere a hard link and an
unlink) — so a note someone else created under that name in the meantime is kept and this one
is reported as not written — and fsyncs each folder once.
A note is therefore either absent or complete on disk, never torn.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import itertools
import os
import secrets
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from vaultmem.store.durability import fsync_dir, sync_file_system


def flush_files(folder: Path, files: Sequence[str | Path]) -> None:
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


def _rename_no_replace(tmp: str, path: Path) -> bool:
    """Give ``tmp`` the name ``path`` unless it exists, in one call: Linux ``renameat2`` with
    ``RENAME_NOREPLACE`` (a link and an unlink otherwise: two changes of the folder). True when
    done; False where the call is missing or the file system refuses it (then the caller
    links, :func:`_link_no_replace`). Raises ``FileExistsError`` when ``path`` exists."""
    call = _renameat2()
    if call is None:
        return False
    if call(_AT_FDCWD, os.fsencode(tmp), _AT_FDCWD, os.fsencode(path), _RENAME_NOREPLACE) == 0:
        return True
    code = ctypes.get_errno()
    if code == errno.EEXIST:
        raise FileExistsError(code, os.strerror(code), str(path))
    if code in _NO_RENAMEAT2:
        return False
    raise OSError(code, os.strerror(code), str(path))


_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
_NO_RENAMEAT2 = {errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM}
"""A file system (or a kernel before 3.15) that cannot rename without replacing."""


@functools.cache
def _renameat2() -> Callable[..., int] | None:
    """libc's ``renameat2`` (Linux, glibc 2.28 and later), or ``None``."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        call = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    call.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    call.restype = ctypes.c_int
    found: Callable[..., int] = call
    return found


def _write_temp(path: Path, data: bytes) -> tuple[str, int, int]:
    """Write ``data`` to a new temp file beside ``path``: (temp path, size, mtime_ns as written).

    Plain descriptor calls (open, write, fstat, close): a Python file object around the
    descriptor would add an ``lseek``, an ``ioctl`` and an ``fstat`` per note. The mode is set
    to 0o644 only when the umask left it otherwise. The temp names count up from a random
    start (no ``getrandom`` per note); ``O_EXCL`` makes each one new whatever another process
    chose."""
    folder, name = os.path.split(path)
    while True:
        number = next(_TEMP_NUMBERS) & 0xFFFFFFFF
        tmp = os.path.join(folder, f".{name}.{number:08x}.vaultmem-tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            break
        except FileExistsError:
            continue
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        info = os.fstat(fd)
        if info.st_mode & 0o7777 != 0o644:  # whatever the umask, like every note vaultmem writes
            os.fchmod(fd, 0o644)
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    try:
        os.close(fd)
    except OSError:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return tmp, info.st_size, info.st_mtime_ns


_TEMP_NUMBERS = itertools.count(secrets.randbits(32))
"""The numbers in the names of a batch's temp files (8 hex digits, as every writer's)."""


Written = tuple[str, int, int] | Exception
"""A temp file written: (temp path, size, mtime_ns as written), or the error writing it."""


class NewNotes:
    """A batch of new notes: :meth:`add` each, then :meth:`commit` (or :meth:`discard`).

    Each temp file is written when its note is added, in the caller's thread: a writer thread
    beside it cost more than it saved (creating a file is kernel CPU here, not a wait, and the
    second core indexes the batches written before). An error writing one is raised by
    :meth:`commit`, so nothing is linked unless every text of the batch is written and flushed.
    """

    def __init__(self) -> None:
        self._pending: list[tuple[Path, str, str]] = []  # (final path, name, text), in order
        self._outcomes: list[Written] = []  # of each write, in the same order
        self._folders: set[str] = set()  # made (or found) already
        self.linked: dict[str, tuple[str, int, int, int]] = {}
        """After :meth:`commit`: the name (see :meth:`add`) of each note it made visible →
        (text, size in bytes, mtime_ns as
        written, the wall clock in ns just before the batch's first note got its name), so the
        caller can index the text without reading the note back: a write to the note after
        that moment leaves another mtime, unless the mtime written is within a clock tick of it
        (see :mod:`~vaultmem.services.index.index_stamps`)."""

    def __len__(self) -> int:
        return len(self._pending)

    def add(self, path: Path, text: str, name: str | None = None) -> None:
        """Have ``text`` (UTF-8) written to a temporary file beside ``path``; not yet durable
        or visible. ``name``: the caller's name for the note in :attr:`linked` (default: the
        path as a string). Raises ``FileExistsError`` when ``path`` already exists (an error
        writing the temp file is raised by :meth:`commit`)."""
        full = os.fspath(path)  # (strings: a Path's parent is a new Path each time)
        if os.path.lexists(full):
            raise FileExistsError(path)
        folder = os.path.dirname(full)
        if folder not in self._folders:
            os.makedirs(folder, exist_ok=True)
            self._folders.add(folder)
        try:
            outcome: Written = _write_temp(path, text.encode("utf-8"))
        except Exception as err:  # noqa: BLE001 - raised by commit, the batch cleaned up first
            outcome = err
        self._outcomes.append(outcome)
        self._pending.append((path, os.fspath(path) if name is None else name, text))

    def _written(self) -> list[tuple[Path, str, str, str, int, int]]:
        """(path, name, text, temp, size, mtime_ns) of each note, in order. If a write failed,
        every temp file of the batch is removed and the first error raised."""
        outcomes, self._outcomes = self._outcomes, []
        pending, self._pending = self._pending, []
        done: list[tuple[Path, str, str, str, int, int]] = []
        failure: BaseException | None = None
        for note, outcome in zip(pending, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                failure = failure or outcome
            else:
                done.append((*note, *outcome))
        if failure is not None:
            for _, _, _, tmp, _, _ in done:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
            raise failure
        return done

    def commit(self) -> dict[Path, str]:
        """Make every added note durable and visible; returns ``{path: why}`` of those not written.

        One ``syncfs`` (or an ``fsync`` per file) before any note appears, one ``fsync`` per
        folder after. A name taken meanwhile by another writer keeps that writer's file.
        Raises the error of a temp file that could not be written (none of the batch appears).
        """
        self.linked = {}
        pending = self._written()
        if not pending:
            return {}
        flush_files(pending[0][0].parent, [tmp for _, _, _, tmp, _, _ in pending])
        failed: dict[Path, str] = {}
        folders: set[str] = set()
        visible_ns = time.time_ns()  # before any name is given: no other write to a note is older
        for path, name, text, tmp, size, mtime_ns in pending:
            renamed = False
            try:
                renamed = _rename_no_replace(tmp, path)
                if not renamed:
                    _link_no_replace(tmp, path)
                folders.add(os.path.dirname(tmp))
                self.linked[name] = (text, size, mtime_ns, visible_ns)
            except FileExistsError:
                failed[path] = "already exists (written by someone else meanwhile); not overwritten"
            except OSError as err:
                failed[path] = f"cannot write: {err.strerror}"
            finally:
                if not renamed:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(tmp)
        for folder in sorted(folders):
            fsync_dir(Path(folder))
        return failed

    def discard(self) -> None:
        """Remove the temporary files of notes added and not committed."""
        with contextlib.suppress(Exception):  # a failed write left no file
            for _, _, _, tmp, _, _ in self._written():
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
