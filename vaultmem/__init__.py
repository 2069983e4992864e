"""vaultmem: a memory for AI assistants that lives in an Obsidian vault.

>>> from vaultmem import Vault
>>> vault = Vault.open("path/to/vault")          # doctest: +SKIP
>>> vault.remember("Prefers dark themes", tags=["ui"])  # doctest: +SKIP
"""

from __future__ import annotations

__version__ = "0.1.0"

from vaultmem.errors import VaultmemError
from vaultmem.services.vault import Vault

__all__ = ["Vault", "VaultmemError", "__version__"]
