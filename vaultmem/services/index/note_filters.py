"""The filters ``list`` and ``recall`` share, checked where they are given: a tag (or one nested
in it), a vault folder, and the choice-valued ones (status, layer). docs/user-guide.md, "Recall"
and "Listing memories".

A filter that was asked for is never dropped: an empty or blank tag or folder, a folder outside
the vault or not in it raise :class:`~vaultmem.errors.InputError` with a one-line message naming
the value, instead of reading as "no filter" or as "nothing matches".
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path, PureWindowsPath

from vaultmem.errors import InputError

__all__ = [
    "checked_choice",
    "checked_tag",
    "folder_condition",
    "folder_parts",
    "tag_condition",
    "vault_folder",
]


def checked_choice(name: str, value: object, choices: Sequence[str]) -> str | None:
    """``value`` when it is one of ``choices`` (``None``: not asked); raises :class:`InputError`
    naming ``name``, the choices and the value otherwise (``""`` included)."""
    if value is None:
        return None
    if not isinstance(value, str) or value not in choices:
        raise InputError(f"{name} must be one of {', '.join(choices)}, not {value!r}")
    return value


def checked_tag(tag: object) -> str:
    """The tag asked for, without surrounding blanks and leading ``#`` (``"#project "`` →
    ``"project"``); raises :class:`InputError` when ``tag`` is not text or nothing is left."""
    if not isinstance(tag, str):
        raise InputError(f"tag must be text, not {tag!r}")
    name = tag.strip().lstrip("#")
    if not name.strip():
        raise InputError(f"tag {tag!r} is empty: give a tag, e.g. project")
    return name


def tag_condition(tag: str) -> tuple[str, list[object]]:
    """A condition over ``notes n``: the note has ``tag`` or a tag nested in it (``project``
    matches ``project/alpha``, not ``projects``), case-insensitively, as Obsidian's tag search.
    ``tag`` as :func:`checked_tag` returns it."""
    return (
        "EXISTS (SELECT 1 FROM tags t WHERE t.nid = n.nid AND (t.tag = ? COLLATE NOCASE "
        "OR (t.tag >= ? COLLATE NOCASE AND t.tag < ? COLLATE NOCASE)))",
        [tag, tag + "/", tag + "0"],  # '0' sorts right after '/': every 'tag/…'
    )


def folder_parts(folder: object) -> tuple[str, ...]:
    """The parts of a vault folder as given (``"./LTM/"`` → ``("LTM",)``), without looking at
    the vault. Raises :class:`InputError` when ``folder`` is not text, names no folder (``""``,
    blanks, ``"/"``, ``"."``), is an absolute path, climbs out with ``..`` or goes into a dot
    folder (never indexed)."""
    if not isinstance(folder, str):
        raise InputError(f"folder must be text, not {folder!r}")
    text = folder.strip()
    parts = tuple(part for part in text.split("/") if part not in ("", "."))
    if not parts:
        raise InputError(f"folder {folder!r} is empty: give a vault folder, e.g. LTM")
    if text.startswith("/") or PureWindowsPath(text).drive:
        raise InputError(
            f"folder {folder!r} is an absolute path: give a folder relative to the vault, e.g. LTM"
        )
    if ".." in parts:
        raise InputError(
            f"folder {folder!r} leads out of the vault: give a folder inside it, e.g. LTM"
        )
    hidden = next((part for part in parts if part.startswith(".")), None)
    if hidden is not None:
        raise InputError(
            f"folder {folder!r} is a dot folder ({hidden}): vaultmem reads no notes there"
        )
    return parts


def vault_folder(root: Path, folder: object) -> str:
    """The vault folder ``folder`` names, vault-relative with ``/`` (``"./LTM/"`` → ``"LTM"``).

    Every part must name a folder of the vault exactly, case included, whatever the file system
    (notes' paths are compared case-sensitively, so ``ltm`` would find nothing in ``LTM``).
    Raises :class:`InputError` for what :func:`folder_parts` refuses and for a folder the vault
    does not have ("no folder 'ltm' in the vault; did you mean 'LTM'?")."""
    parts = folder_parts(folder)
    here = root
    for depth, part in enumerate(parts):
        try:
            names = [e.name for e in os.scandir(here) if e.is_dir() and not e.name.startswith(".")]
        except OSError:
            names = []
        if part not in names:
            near = [name for name in names if name.casefold() == part.casefold()]
            hint = f"; did you mean {'/'.join([*parts[:depth], near[0]])!r}?" if near else ""
            raise InputError(f"no folder {folder!r} in the vault{hint}")
        here = here / part
    return "/".join(parts)


def folder_condition(folder: str) -> tuple[str, list[object]]:
    """A condition over ``notes n``: the note lies under ``folder`` (as :func:`vault_folder`
    returns it), at any depth."""
    prefix = folder + "/"
    return "substr(n.path, 1, ?) = ?", [len(prefix), prefix]
