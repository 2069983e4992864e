"""Notes on disk: reading with a fingerprint, atomic writes that refuse to clobber edits, moves.

A vault has many writers at once (Obsidian, sync, scripts), so vaultmem *owns* a note before
it replaces, moves or deletes it: the new text is written and fsynced to a temp file beside the
note (or was written ahead with a batch and flushed with it, :func:`stage_text`); the note is
renamed aside to a private name in its folder (no other writer can reach it there) and its
bytes compared with those that were read; the new file is then linked at the note's (new)
name, which never replaces a file; and only after a last check of the aside copy is it
removed. A save or delete racing the write makes vaultmem back off — the person's version
is put back untouched and :class:`~vaultmem.errors.NoteChangedError` raised — and a kill at any
point leaves files ``recover_interrupted_writes`` (:mod:`vaultmem.store.interrupted_writes`)
finishes. See docs/user-guide.md.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import functools
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vaultmem.core.notes.content_hash import content_hash
from vaultmem.core.notes.note_text import field_changes, set_fields
from vaultmem.errors import NoteChangedError, NoteError, UnsafeNoteError, VaultmemError
from vaultmem.store.durability import defer_close, fsync_dir
from vaultmem.store.late_writes import LateSave, hold
from vaultmem.store.note_temps import (
    ASIDE_SUFFIX,
    MAX_NAME_BYTES,
    TEMP_SUFFIX,
    StagedText,
    discard_staged,
    open_staged,
    read_sized,
    set_mode,
    stage_text,
)
from vaultmem.store.note_temps import temp_names as _temp_names
from vaultmem.store.note_temps import write_temp as _write_temp
from vaultmem.store.raw_reads import oversized, read_to_end

__all__ = [
    "ASIDE_SUFFIX",
    "MAX_NAME_BYTES",
    "TEMP_SUFFIX",
    "Fingerprint",
    "NoteSnapshot",
    "StagedText",
    "add_note",
    "content_hash",
    "create_note",
    "delete_note",
    "discard_staged",
    "move_note",
    "put_back",
    "read_note",
    "read_sized",
    "replace_note",
    "stage_text",
    "write_note",
]

_NO_LINKS = {
    code
    for code in (
        getattr(errno, name, None)
        for name in ("EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV", "EMLINK", "EACCES")
    )
    if code is not None
}


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
    mode: int = 0o644
    """The file's permission bits when it was read (a text written ahead for it takes them)."""


def read_note(path: Path) -> NoteSnapshot:
    """Read ``path`` exactly as stored (the fingerprint's mtime: from just before the read).

    Raises :class:`NoteError` when it cannot be read and :class:`UnsafeNoteError` when its bytes
    are not UTF-8 or it is over the note size limit (such a note is never written to).
    """
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            info = os.fstat(fd)
            if problem := oversized(info.st_size):
                raise UnsafeNoteError(path, problem)
            data = read_sized(fd, info.st_size)
        finally:
            os.close(fd)
    except FileNotFoundError:
        raise NoteError(path, "no such note") from None
    except OSError as err:
        raise NoteError(path, f"cannot read: {err.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise UnsafeNoteError(path, f"not UTF-8 (byte {err.start}); not written") from None
    fingerprint = Fingerprint(len(data), info.st_mtime_ns, content_hash(data))
    return NoteSnapshot(path, text, fingerprint, stat.S_IMODE(info.st_mode))


def _place(source: Path, destination: Path, *, keep_source: bool) -> None:
    """Give ``source``'s file the name ``destination``, never replacing an existing file.

    A hard link is the no-replace primitive (``FileExistsError`` if ``destination`` exists).
    Where links are not supported (some FUSE, exFAT, SMB and Android storage), the name is
    claimed with an exclusive create and ``source`` renamed over that claim (``source`` is then
    consumed whatever ``keep_source`` says).
    """
    try:
        os.link(source, destination, follow_symlinks=False)
    except FileExistsError:
        raise
    except OSError as err:
        if err.errno not in _NO_LINKS:
            raise
        fd = os.open(destination, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
        try:
            os.replace(source, destination)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(destination)  # our own empty claim
            raise
        return
    if not keep_source:
        os.unlink(source)


@dataclass(frozen=True, slots=True)
class _Owned:
    """A note renamed aside and checked (:func:`_own`): a descriptor of its file, the
    ``fstat`` taken before it was read, and the hash its bytes had then."""

    fd: int
    seen: os.stat_result
    sha256: str


def _own(path: Path, aside: Path, expected_sha256: str | None) -> _Owned:
    """Take ``path`` away from every other writer (rename it to ``aside``) and check it
    (``expected_sha256`` ``None``: take the bytes as they are). The caller closes the descriptor
    (:func:`_drop_aside` does).

    Raises :class:`NoteChangedError` (the note put back untouched) when it was deleted, or its
    bytes are no longer those that were read.
    """
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        raise NoteChangedError(path, "deleted since it was read; left alone") from None
    try:
        fd = os.open(aside, os.O_RDONLY)
    except BaseException:
        with contextlib.suppress(OSError):
            put_back(aside, path)
        raise
    try:
        seen = os.fstat(fd)  # before the read: a write landing after it changes the next one
        sha = content_hash(read_sized(fd, seen.st_size))
        if expected_sha256 is not None and sha != expected_sha256:
            os.close(fd)
            fd = -1
            put_back(aside, path)
            raise NoteChangedError(path, "changed on disk since it was read; left alone")
    except BaseException:
        if fd >= 0:
            os.close(fd)
            put_back(aside, path)
        raise
    return _Owned(fd, seen, sha)


def put_back(aside: Path, path: Path) -> None:
    """Return an aside file to its name; if a new file took the name meanwhile, keep both."""
    try:
        _place(aside, path, keep_source=False)
    except FileExistsError:
        _settle_aside(aside, path)


def _settle_aside(aside: Path, path: Path) -> None:
    """``path`` exists again (someone saved anew) and ``aside`` holds an older version."""
    if _sha_of(aside) == _sha_of(path):
        os.unlink(aside)
        return
    _place_copy(aside, path)


def _place_copy(source: Path, path: Path) -> Path:
    """Give ``source``'s file a conflicted copy's name beside ``path`` (a free one); that name."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d%H%M%S")
    stem = path.name.removesuffix(".md")[:150]
    copy = path.with_name(f"{stem} (Conflicted copy vaultmem {stamp}).md")
    n = 1
    while True:
        try:
            _place(source, copy, keep_source=False)
            return copy
        except FileExistsError:
            n += 1
            copy = path.with_name(f"{stem} (Conflicted copy vaultmem {stamp} {n}).md")


def _sha_of(path: Path) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        return content_hash(read_to_end(fd))
    finally:
        os.close(fd)


def write_note(path: Path, text: str, *, expected: Fingerprint | None) -> Fingerprint:
    """Atomically write ``text`` (UTF-8, newlines as given) to ``path``.

    ``expected=None`` creates a new note and refuses (:class:`NoteError`) if ``path`` exists;
    otherwise the note must still hold the bytes ``expected`` was taken from
    (:class:`NoteChangedError` if not, the note left untouched). The file's permission bits are
    kept. Returns the new fingerprint.
    """
    if expected is None:
        return create_note(path, text)
    return replace_note(path, text, expected_sha256=expected.sha256)


def create_note(path: Path, text: str, *, staged: StagedText | None = None) -> Fingerprint:
    """Write a new note at ``path``; :class:`NoteError` if a file is there (never replaced).

    ``staged``: ``text`` already written and flushed beside ``path`` (:func:`stage_text`).
    """
    add_note(path, text, staged=staged)
    return _fingerprint_of(path, text.encode("utf-8"))


def add_note(path: Path, text: str, *, staged: StagedText | None = None) -> None:
    """:func:`create_note` without working out the new note's fingerprint (a pass's step)."""
    if os.path.lexists(path):
        if staged is not None:
            discard_staged(staged)
        raise NoteError(path, "already exists; not overwritten")
    ready = open_staged(staged, path, text)
    if ready is not None:  # (its folder is there: the temp file is in it)
        assert staged is not None
        temp = staged.temp
        set_mode(*ready, 0o644)
    else:
        if not os.path.isdir(path.parent):  # one stat, not a mkdir, when it is there
            path.parent.mkdir(parents=True, exist_ok=True)
        temp, _aside = _temp_names(path)
        _write_temp(temp, text.encode("utf-8"), 0o644)
    try:
        _place(temp, path, keep_source=False)
    except FileExistsError:
        raise NoteError(path, "already exists; not overwritten") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
    fsync_dir(path.parent)


def replace_note(
    path: Path, text: str, *, expected_sha256: str, staged: StagedText | None = None
) -> Fingerprint:
    """Replace the note at ``path`` by ``text`` if its bytes still hash to ``expected_sha256``.

    The note is owned before it is replaced (renamed aside, checked, the new text linked in
    place without replacing anything, the aside checked again, then dropped), so a save or a
    delete racing the write makes vaultmem back off instead of losing it:
    :class:`NoteChangedError`, the person's version left in place.
    """
    move_note(path, path, text=text, expected_sha256=expected_sha256, staged=staged)
    return _fingerprint_of(path, text.encode("utf-8"))


def move_note(
    source: Path,
    destination: Path,
    *,
    text: str | None = None,
    expected_sha256: str | None = None,
    staged: StagedText | None = None,
    free: bool = False,
) -> None:
    """Move a note (and, with ``text``, give it that text in the same step), owning it first.

    ``destination`` may equal ``source`` (an edit). A new place must be free (:class:`NoteError`
    otherwise, nothing done). With ``expected_sha256`` the note must still hold those bytes
    (:class:`NoteChangedError` otherwise, the note left where and as it was); without it, the
    bytes found are moved as they are. The note is never under two visible names: it is at
    ``source`` until it is owned, then only under its private aside name until the new file is
    linked at ``destination`` (after a kill in between, ``recover_interrupted_writes`` puts
    it back). Any failure after it was owned puts it back too. ``staged``: ``text`` already
    written and flushed beside ``source`` (:func:`stage_text`), so no fsync is needed here.
    ``free``: the caller found ``destination`` free just before (it is not looked at again
    first: the link that gives the note its new name never replaces a file either way, and one
    found there then puts the note back and raises the same :class:`NoteError`).
    """
    # folders as strings: a Path made and compared per note costs more than the checks
    src, dst = os.fspath(source), os.fspath(destination)
    source_folder, target_folder = os.path.dirname(src), os.path.dirname(dst)
    moving = os.path.normcase(dst) != os.path.normcase(src)
    if moving and not free and os.path.lexists(destination):
        if staged is not None:
            discard_staged(staged)
        raise NoteError(destination, f"already exists; {source.name} not moved there")
    ready = None if text is None else open_staged(staged, source, text)
    if ready is not None:  # its mode is set from the note's once the note is owned
        assert staged is not None
        temp, aside = staged.temp, staged.aside
    else:
        if staged is not None:
            discard_staged(staged)
        try:
            mode = stat.S_IMODE(os.stat(source).st_mode)
        except FileNotFoundError:
            raise NoteChangedError(source, "deleted since it was read; left alone") from None
        temp, aside = _temp_names(source)
        if text is not None:
            _write_temp(temp, text.encode("utf-8"), mode)
    try:
        try:
            owned = _own(source, aside, expected_sha256)
        except BaseException:
            if ready is not None:
                os.close(ready[0])
            raise
        try:
            if ready is not None:
                set_mode(*ready, stat.S_IMODE(owned.seen.st_mode))
            _place_into(temp if text is not None else aside, destination, target_folder)
        except FileExistsError:
            os.close(owned.fd)
            put_back(aside, source)
            if destination == source:
                raise NoteChangedError(
                    source, "saved anew while it was written; left alone"
                ) from None
            raise NoteError(destination, f"already exists; {source.name} not moved there") from None
        except BaseException:
            os.close(owned.fd)
            if os.path.lexists(aside):
                put_back(aside, source)
            raise
        if text is None:
            # the note's own file now has its new name: a late write lands there, not lost
            os.close(owned.fd)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(aside)
        else:
            keep = functools.partial(_rescue_late, source, destination, text)
            late = _drop_aside(aside, owned, keep)
            if late is not None:  # a writer with the note open wrote after it was checked
                sha = staged.sha256 if staged is not None and ready is not None else None
                _withdraw(temp, destination, sha or content_hash(text.encode("utf-8")))
                _restore(aside, late, source)
                raise NoteChangedError(source, "changed on disk while it was written; left alone")
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
    fsync_dir(target_folder)
    if source_folder != target_folder:
        fsync_dir(source_folder)


def _place_into(source: Path, destination: Path, folder: str) -> None:
    """:func:`_place` (keeping ``source``) making ``destination``'s ``folder`` first if it is
    missing (looked at only then: a pass links thousands of notes into folders that exist)."""
    try:
        _place(source, destination, keep_source=True)
    except FileNotFoundError:
        if os.path.isdir(folder):
            raise
        os.makedirs(folder, exist_ok=True)
        _place(source, destination, keep_source=True)


def _withdraw(temp: Path, destination: Path, sha256: str) -> None:
    """Take back a text (hashing to ``sha256``) just linked at ``destination`` (if nobody
    changed it since)."""
    same = os.path.exists(temp) and os.path.samefile(temp, destination)
    if same and _sha_of(destination) == sha256:
        os.unlink(destination)


def delete_note(path: Path, *, expected_sha256: str) -> None:
    """Delete the note at ``path`` if it still holds the bytes read (owned first, like a write).

    Raises :class:`NoteChangedError` (the note left in place) when it changed or is gone.
    """
    _temp, aside = _temp_names(path)
    owned = _own(path, aside, expected_sha256)
    late = _drop_aside(aside, owned, functools.partial(_rescue_late, path, path, None))
    if late is not None:
        _restore(aside, late, path)
        raise NoteChangedError(path, "changed on disk while it was deleted; left alone")
    fsync_dir(path.parent)


def _drop_aside(
    aside: Path, owned: _Owned, keep: Callable[[bytes, bytes], LateSave] | None = None
) -> bytes | None:
    """Remove an owned note's old file if it still holds the bytes read; else its bytes now.

    The file is read again through the handle :func:`_own` opened (and closes it), removed,
    and checked again through that handle against the ``fstat`` :func:`_own` took before its
    own read, so a write landing at any time since, even after the removal, is caught (and its
    bytes returned). Inside :func:`~vaultmem.store.late_writes.watch_late_writes` the handle is
    kept and checked once more later: a write landing by then is given to ``keep`` (the bytes
    read, the bytes then). Inside :func:`batched_dir_syncs` the descriptor of a removed file is
    closed later, on a helper thread (closing the last one frees the file, which waits on the
    file system).
    """
    fd, before = owned.fd, owned.seen
    deferred = False
    try:
        data = os.pread(fd, before.st_size + 1, 0)
        if len(data) != before.st_size:
            os.lseek(fd, 0, os.SEEK_SET)
            return read_to_end(fd)  # another size than it had when owned: written meanwhile
        if content_hash(data) != owned.sha256:
            return data
        os.unlink(aside)
        after = os.fstat(fd)
        if (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns):
            held = keep is not None and hold(fd, after, functools.partial(keep, data))
            deferred = held or defer_close(fd)
            return None
        os.lseek(fd, 0, os.SEEK_SET)
        return read_to_end(fd)
    finally:
        if not deferred:
            os.close(fd)


def _rescue_late(
    note: Path, destination: Path, written: str | None, before: bytes, late: bytes
) -> LateSave:
    """Keep a save that landed in ``note``'s old file after vaultmem removed it: the file held
    ``before`` when it was checked and ``late`` now; vaultmem had written ``written`` at
    ``destination`` (``None``: the note was deleted).

    The saved text gets the properties vaultmem changed (a surgical edit,
    :func:`~vaultmem.core.notes.note_text.field_changes`) and replaces the new version, as an
    owned write, if that is still as vaultmem wrote it. Where that cannot be (the new version
    changed since, a text is not UTF-8, a frontmatter does not parse, the saved text holds
    conflict markers), the saved bytes are kept as they landed: a deleted note gets its name
    back if it is free, otherwise they go to a conflicted copy beside ``destination``.
    Raises ``OSError`` only when no file at all could be written.
    """
    if written is not None:
        try:
            merged = set_fields(late.decode(), field_changes(before.decode(), written))
            replace_note(destination, merged, expected_sha256=content_hash(written.encode()))
            return LateSave(note, destination, merged=True)
        except (ValueError, TypeError, VaultmemError, OSError):  # (FrontmatterError, decoding)
            pass
    temp, _aside = _temp_names(destination)
    _write_temp(temp, late, 0o644)
    try:
        if written is None:
            with contextlib.suppress(FileExistsError):
                _place(temp, destination, keep_source=False)
                return LateSave(note, destination, merged=False)
        return LateSave(note, _place_copy(temp, destination), merged=False)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        fsync_dir(destination.parent)


def _restore(aside: Path, late: bytes, path: Path) -> None:
    """Give a person's version back its name: the aside file if still there, else ``late``."""
    if os.path.lexists(aside):
        put_back(aside, path)
        return
    temp, spare = _temp_names(path)
    _write_temp(temp, late, 0o644)
    os.replace(temp, spare)
    put_back(spare, path)


def _fingerprint_of(path: Path, data: bytes) -> Fingerprint:
    info = os.stat(path)
    return Fingerprint(len(data), info.st_mtime_ns, content_hash(data))
