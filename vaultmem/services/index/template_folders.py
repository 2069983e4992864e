"""Template folders: where notes are templates, not memories (docs/user-guide.md, "The vault").

Obsidian's core Templates plugin folder (``.obsidian/templates.json``) and vaultmem's own
``Templates`` folder. A note there is indexed as an ordinary note even when its frontmatter says
``type: memory``, and ``doctor`` does not check its fields or its YAML.
"""

from __future__ import annotations

import json
from pathlib import Path

OWN_TEMPLATES = "Templates"
"""The folder where ``vaultmem init`` puts its own note template (``Templates/Memory.md``)."""


def template_folders(root: Path) -> tuple[str, ...]:
    """Folders of templates: Obsidian's Templates plugin folder (if set) and :data:`OWN_TEMPLATES`.

    Notes there are templates, not memories (see :func:`templates_folder`); ``doctor`` does not
    check their fields or their YAML, which holds ``{{placeholders}}`` until filled in.
    """
    configured = templates_folder(root)
    if configured is None or configured == OWN_TEMPLATES:
        return (OWN_TEMPLATES,)
    return (configured, OWN_TEMPLATES)


def in_templates(path: str, folders: tuple[str, ...]) -> bool:
    """True when vault-relative ``path`` lies inside one of the template ``folders``."""
    return any(path.startswith(folder + "/") for folder in folders)


def templates_folder(root: Path) -> str | None:
    """The folder of Obsidian's core Templates plugin (``.obsidian/templates.json``), if set.

    Notes there are templates, not memories: they are indexed as ordinary notes even when their
    frontmatter says ``type: memory``, so a template never decays, moves or shows up as a memory.
    """
    try:
        config = json.loads((root / ".obsidian" / "templates.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    folder = config.get("folder") if isinstance(config, dict) else None
    return folder.strip("/") if isinstance(folder, str) and folder.strip("/") else None
