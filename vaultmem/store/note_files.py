"""Notes on disk: reading with a fingerprint, atomic writes that refuse to clobber edits, moves.

Spec section 2: writes go to a temporary file in the same folder, are fsynced and
``os.replace``d over the note; before replacing, the note must still match the fingerprint taken
when it was read (size, mtime and, when those differ, the SHA-256 of its bytes). A person's edit
made in between is never overwritten: :class:`~vaultmem.errors.NoteChangedError` is raised.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from vaultmem.errors import NoteChangedError, NoteError, UnsafeNoteError


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """What a note looked like when it was read: ``size`` bytes, ``mtime_ns``, SHA-256 hex."""

    size: int
    mtime_ns: int
    sha256: str


@dataclass(frozen=True, slots=True)
class NoteSnapshot:
    """The text of a note (exact, CRLF and BOM kept) and its :class:`Fingerprint`."""

    path: Path
    text: str
    fingerprint: Fingerprint


def content_hash(data: bytes) -> str:
    """SHA-256 hex digest of a note's bytes (the index's content hash)."""
    return hashlib.sha256(data).hexdigest()


def read_note(path: Path) -> NoteSnapshot:
    """Read ``path`` exactly as stored.

    Raises :class:`NoteError` when it cannot be read and :class:`UnsafeNoteError` when its bytes
    are not UTF-8 (such a note is never written to).
    """
    try:
        with open(path, "rb") as handle:
            data = handle.read()
            info = os.fstat(handle.fileno())
    except FileNotFoundError:
        raise NoteError(path, "no such note") from None
    except OSError as err:
        raise NoteError(path, f"cannot read: {err.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise UnsafeNoteError(path, f"not UTF-8 (byte {err.start}); not written") from None
    return NoteSnapshot(path, text, Fingerprint(len(data), info.st_mtime_ns, content_hash(data)))


def _unchanged(path: Path, expected: Fingerprint) -> bool:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return False
    if info.st_size != expected.size:
        return False
    if info.st_mtime_ns == expected.mtime_ns:
        return True
    return content_hash(path.read_bytes()) == expected.sha256


def write_note(path: Path, text: str, *, expected: Fingerprint | None) -> Fingerprint:
    """Atomically write ``text`` (UTF-8, newlines as given) to ``path``.

    ``expected=None`` creates a new note and refuses if ``path`` exists; otherwise the note must
    still match ``expected`` (:class:`NoteChangedError` if not). The file's permission bits are
    kept. Returns the new fingerprint.
    """
    data = text.encode("utf-8")
    if expected is None:
        if path.exists():
            raise NoteError(path, "already exists; not overwritten")
        mode = None
    else:
        if not _unchanged(path, expected):
            raise NoteChangedError(path, "changed on disk since it was read; not overwritten")
        mode = stat.S_IMODE(os.stat(path).st_mode)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=".vaultmem-tmp", dir=path.parent
    )
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, mode if mode is not None else 0o644)
        if expected is None and path.exists():
            raise NoteError(path, "already exists; not overwritten")
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    fsync_dir(path.parent)
    info = os.stat(path)
    return Fingerprint(len(data), info.st_mtime_ns, content_hash(data))


def move_note(source: Path, destination: Path) -> None:
    """Move a note, creating folders; refuses to replace an existing file at ``destination``."""
    if destination.exists():
        raise NoteError(destination, f"already exists; {source.name} not moved there")
    destination.parent.mkdir(parents=True, exist_ok=True)
    os.rename(source, destination)
    fsync_dir(destination.parent)
    if source.parent != destination.parent:
        fsync_dir(source.parent)


_DEFERRED: ContextVar[set[Path] | None] = ContextVar("deferred_dir_syncs", default=None)


@contextmanager
def batched_dir_syncs() -> Iterator[None]:
    """Within the block, folder fsyncs are collected and done once each at the end.

    A pass that moves thousands of notes would otherwise fsync the same few folders thousands
    of times. Note contents are still fsynced before every rename, so no note is ever torn;
    only the durability of the renames themselves against power loss waits for the end.
    """
    if _DEFERRED.get() is not None:
        yield
        return
    pending: set[Path] = set()
    token = _DEFERRED.set(pending)
    try:
        yield
    finally:
        _DEFERRED.reset(token)
        for folder in sorted(pending):
            fsync_dir(folder)


def fsync_dir(folder: Path) -> None:
    """fsync a folder so a rename or create in it survives a crash (no-op where unsupported)."""
    pending = _DEFERRED.get()
    if pending is not None:
        pending.add(folder)
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
