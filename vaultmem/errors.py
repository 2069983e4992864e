"""Errors vaultmem raises, with messages fit to show a person.

Every error the library raises on purpose is a :class:`VaultmemError`; the CLI turns
them into a one-line message and exit code 1. Subclasses carry structured fields
(``path``, ``key``, ``candidates``) so callers can act on them without parsing text.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


class VaultmemError(Exception):
    """Base of every error vaultmem raises on purpose; ``str(err)`` is one line for a person."""


class VaultNotFoundError(VaultmemError):
    """No vault was given and none was found from the current folder upward."""


class ConfigError(VaultmemError):
    """``vaultmem.toml`` cannot be read or holds a value of the wrong type."""

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{path}: {problem}")


class NoteError(VaultmemError):
    """A note cannot be read or written; ``path`` names it, ``problem`` says why."""

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{path}: {problem}")


class UnsafeNoteError(NoteError):
    """The note has unparsable YAML, conflict markers, non-UTF-8 bytes or a value vaultmem cannot
    read (``use_count: "3"``): it is never written."""


class NoteChangedError(NoteError):
    """The note changed on disk after it was read; the write was refused to keep that edit."""


class FrontmatterError(VaultmemError, ValueError):
    """The frontmatter cannot be read or safely edited.

    ``str(err)`` is one line for a person: ``"STM/Foo.md: frontmatter is not valid YAML:
    mapping values are not allowed here (line 5, column 8)"``. Fields: ``problem`` (the message
    without path and position), ``path`` (may be ``""``), ``line`` and ``column`` (1-based,
    counted in the whole note; ``None`` when unknown).
    """

    def __init__(
        self, problem: str, *, path: str = "", line: int | None = None, column: int | None = None
    ) -> None:
        self.problem, self.path, self.line, self.column = problem, path, line, column
        where = f"{path}: " if path else ""
        at = "" if line is None else f" (line {line}" + (f", column {column})" if column else ")")
        super().__init__(f"{where}{problem}{at}")


class NoteNotFoundError(VaultmemError):
    """No note matches the given id or title; ``what`` names what was looked for (``read_note``,
    which reads any note: ``"note with id, title or path"``)."""

    def __init__(
        self, ref: str, suggestions: Sequence[str] = (), *, what: str = "memory with id or title"
    ) -> None:
        self.ref = ref
        self.suggestions = tuple(suggestions)
        hint = ""
        if self.suggestions:
            hint = "; did you mean " + " or ".join(repr(s) for s in self.suggestions) + "?"
        super().__init__(f"no {what} {ref!r}{hint}")


class AmbiguousNoteError(VaultmemError):
    """More than one note matches a title; ``candidates`` lists their vault-relative paths.

    The remedy named is the path (it always works), and the id too when every candidate has one
    (``with_ids``; a person's own notes have none)."""

    def __init__(self, ref: str, candidates: Sequence[str], *, with_ids: bool = True) -> None:
        self.ref = ref
        self.candidates = list(candidates)
        listed = ", ".join(self.candidates)
        remedy = "use the id or the path" if with_ids else "use the path"
        super().__init__(f"{len(self.candidates)} notes are named {ref!r}: {listed} — {remedy}")


class DuplicateNameError(VaultmemError):
    """A managed note's base name would clash (case-insensitively) with another note's."""

    def __init__(self, name: str, existing: str) -> None:
        self.name = name
        self.existing = existing
        super().__init__(f"a note named {name!r} already exists at {existing}")


class InputError(VaultmemError):
    """A value given on the command line or to the API is not acceptable."""


class LockedError(VaultmemError):
    """Another vaultmem process holds the vault's lock (a pass is running)."""


class UnsafePathError(VaultmemError):
    """A path vaultmem was asked to write, move or delete lies outside the vault or in a dot-dir."""

    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{path}: {problem}; refused")


class JournalError(VaultmemError):
    """A journal line is damaged or asks for something vaultmem never journals; nothing was done."""

    def __init__(self, path: Path | str, line: int, problem: str) -> None:
        self.path = str(path)
        self.line = line
        self.problem = problem
        super().__init__(
            f"{path}:{line}: {problem}; refused, nothing was changed "
            "(move that journal out of .vaultmem/journal/ to go on without it)"
        )


class InterruptedRunError(VaultmemError):
    """Ctrl-C (SIGINT) or SIGTERM stopped a pass or an undo between two steps."""


class SidecarError(VaultmemError):
    """The sidecar folder ``.vaultmem/`` or a file in it (index, lock, journal) is unusable.

    ``path`` names it and ``problem`` says why and what to do (one line).
    """

    def __init__(self, path: Path | str, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{path}: {problem}")


class JournalWriteError(SidecarError, InterruptedRunError):
    """A journal line could not be written (a full disk): the pass or undo stopped before its
    next step, as after Ctrl-C; the next command finishes or reverts it."""


class IndexDamagedError(SidecarError):
    """``index.db`` is damaged; ``vaultmem index --rebuild`` replaces it (notes are unaffected)."""


class IndexBusyError(SidecarError):
    """Another connection (a thread or process) holds ``index.db``'s lock: the file is sound and in
    use, so it is never discarded for this; trying again later succeeds."""
