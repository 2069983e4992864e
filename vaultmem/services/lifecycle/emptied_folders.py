"""Folders a pass (or an undo) empties are removed: a promoted box member leaves no empty
``Boxes/YYYY-MM-DD/<box>/`` behind. Only folders strictly inside the memory folders, and only
when empty (``os.rmdir`` refuses otherwise, so a file that appears meanwhile is never lost)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path


def remove_emptied_folders(root: Path, paths: Iterable[str], tops: Iterable[str]) -> list[str]:
    """Remove the empty folders holding ``paths`` (vault-relative), walking up to, not including,
    the memory folder ``tops`` they lie in. Returns the folders removed, vault-relative."""
    top_set = {t.strip("/") for t in tops if t.strip("/")}
    removed: list[str] = []
    folders = {p.rsplit("/", 1)[0] for p in paths if "/" in p}
    for folder in sorted(folders, key=lambda f: -f.count("/")):
        parts = folder.split("/")
        if not any(folder.startswith(top + "/") for top in top_set):
            continue
        while len(parts) > 1 and "/".join(parts) not in top_set:
            here = "/".join(parts)
            try:
                os.rmdir(root / here)
            except OSError:  # not empty, gone already, or not ours to remove
                if (root / here).exists():
                    break
            else:
                removed.append(here)
            parts.pop()
    return removed
