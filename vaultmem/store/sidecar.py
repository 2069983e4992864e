"""The sidecar folder ``.vaultmem/``: index, journal, lock — never committed.

See docs/user-guide.md, "The vault".
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from vaultmem.errors import SidecarError

SIDECAR_DIR = ".vaultmem"


def ensure_sidecar(sidecar: Path) -> Path:
    """Create ``sidecar`` if needed, with a ``.gitignore`` of ``*`` inside.

    The sidecar ignores itself, so git never commits it even in a vault whose own
    ``.gitignore`` vaultmem must not edit. Raises :class:`SidecarError` when ``sidecar`` is a
    file or cannot be created; a read-only sidecar is used as it is.
    """
    if sidecar.exists() and not sidecar.is_dir():
        raise SidecarError(
            sidecar,
            "is a file, not vaultmem's sidecar folder; move it away (the index is rebuilt "
            "from the notes)",
        )
    try:
        sidecar.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise SidecarError(sidecar, f"cannot create the sidecar folder: {err.strerror}") from None
    ignore = sidecar / ".gitignore"
    if not ignore.exists():
        try:
            ignore.write_text(
                "# vaultmem's sidecar: a cache rebuilt from the notes; never commit it\n*\n"
            )
        except OSError as err:
            if err.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
                raise SidecarError(ignore, f"cannot write: {err.strerror}") from None
    return sidecar


def is_writable(folder: Path) -> bool:
    """True when this process may create files in ``folder`` (a read-only sidecar is not)."""
    return os.access(folder, os.W_OK)
