"""Finding a vault and giving it vaultmem's files: ``--vault`` discovery and ``vaultmem init``.

See docs/user-guide.md, "The vault".
"""

from __future__ import annotations

from pathlib import Path

from vaultmem.errors import VaultNotFoundError
from vaultmem.store.settings_file import SETTINGS_FILE


def is_vault(folder: Path) -> bool:
    """True when ``folder`` holds ``vaultmem.toml`` or ``.obsidian/`` (a vault or an Obsidian
    vault)."""
    return (folder / SETTINGS_FILE).is_file() or (folder / ".obsidian").is_dir()


def require_vault(folder: Path) -> None:
    """Raise :class:`VaultNotFoundError` unless ``folder`` is an existing vault (``--vault``
    names a folder that ``vaultmem init`` has not made a vault: nothing is written there).

    A folder inside a vault (``d/LTM``) is named with its enclosing vault ("pass --vault d"),
    never told to run ``vaultmem init`` there, which would nest a vault inside the vault."""
    if folder.is_dir() and not is_vault(folder):
        enclosing = _enclosing_vault(folder)
        if enclosing is not None:
            raise VaultNotFoundError(
                f"{folder} lies inside the vault {enclosing}: pass --vault {enclosing}"
            )
        raise VaultNotFoundError(
            f"{folder} is not a vault (no vaultmem.toml or .obsidian/); "
            f"run `vaultmem init {folder}` first"
        )


def _enclosing_vault(folder: Path) -> Path | None:
    """The nearest vault above ``folder`` (:func:`discover_vault` from its parent), written as
    ``folder`` is (relative to the current folder when ``folder`` is relative), or None."""
    import os

    try:
        found = discover_vault(Path(os.path.abspath(folder)).parent)
    except VaultNotFoundError:
        return None
    return found if folder.is_absolute() else Path(os.path.relpath(found))


def discover_vault(start: Path) -> Path:
    """The vault holding ``start``: nearest folder upward with vaultmem.toml or .obsidian/."""
    here = start.resolve()
    for folder in (here, *here.parents):
        if is_vault(folder):
            return folder
    raise VaultNotFoundError(
        f"no vault found from {here} upward (no vaultmem.toml or .obsidian/); "
        "pass --vault PATH, set VAULTMEM_VAULT, or run `vaultmem init`"
    )


def template_root() -> Path:
    """The bundled vault template (``vault-template/`` of the repository)."""
    from importlib import resources  # init only: opening a vault does not need it

    return Path(str(resources.files("vaultmem") / "template"))


def _copy_missing(template: Path, root: Path, skip: str) -> list[str]:
    """Copy the template's files that ``root`` lacks, but ``skip`` (vault-relative); never
    touches an existing file."""
    import shutil

    created: list[str] = []
    for source in sorted(template.rglob("*")):
        target = root / source.relative_to(template)
        if source.is_dir() or target.exists() or source.name == "__init__.py":
            continue
        if source.relative_to(template).as_posix() == skip:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        created.append(source.relative_to(template).as_posix())
    return created


def install_template(root: Path) -> tuple[list[str], list[str]]:
    """Give ``root`` (created if missing) the template's files it lacks and vaultmem's property
    types missing from ``.obsidian/types.json``; returns (created, warnings).

    No existing file is changed except ``.obsidian/types.json``, which only gains entries; a
    type the vault declares otherwise is kept, and a key its notes use with another kind of
    value is not declared — each named in a warning
    (:func:`~vaultmem.services.obsidian_types.merge_property_types`).
    """
    from vaultmem.services.obsidian_types import TYPES_FILE, merge_property_types, template_types

    root.mkdir(parents=True, exist_ok=True)
    had_types = (root / TYPES_FILE).is_file()
    created = _copy_missing(template_root(), root, skip=TYPES_FILE)
    types = merge_property_types(root, template_types(template_root()))
    if not had_types and (root / TYPES_FILE).is_file():
        created.append(TYPES_FILE)
    elif types.added:
        created.append(f"{TYPES_FILE}: {', '.join(types.added)}")
    return created, list(types.warnings)


__all__ = ["discover_vault", "install_template", "is_vault", "require_vault", "template_root"]
