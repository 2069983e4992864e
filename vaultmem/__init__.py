"""vaultmem: a memory for AI assistants that lives in an Obsidian vault.

>>> from vaultmem import Vault
>>> vault = Vault.open("path/to/vault")          # doctest: +SKIP
>>> vault.remember("Prefers dark themes", tags=["ui"])  # doctest: +SKIP
"""

from __future__ import annotations

__version__ = "0.1.0"

from typing import TYPE_CHECKING

from vaultmem.errors import VaultmemError

if TYPE_CHECKING:
    from vaultmem.services.vault import Vault

__all__ = ["Vault", "VaultmemError", "__version__"]


def __getattr__(name: str) -> object:
    """``vaultmem.Vault`` is imported on first use: ``vaultmem --version`` stays fast."""
    if name == "Vault":
        from vaultmem.services.vault import Vault

        return Vault
    raise AttributeError(f"module 'vaultmem' has no attribute {name!r}")
