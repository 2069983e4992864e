"""The sidecar folder ``.vaultmem/`` (spec section 1): index, journal, lock — never committed."""

from __future__ import annotations

from pathlib import Path

SIDECAR_DIR = ".vaultmem"


def ensure_sidecar(sidecar: Path) -> Path:
    """Create ``sidecar`` if needed, with a ``.gitignore`` of ``*`` inside.

    The sidecar ignores itself, so git never commits it even in a vault whose own
    ``.gitignore`` vaultmem must not edit.
    """
    sidecar.mkdir(parents=True, exist_ok=True)
    ignore = sidecar / ".gitignore"
    if not ignore.exists():
        ignore.write_text(
            "# vaultmem's sidecar: a cache rebuilt from the notes; never commit it\n*\n"
        )
    return sidecar
