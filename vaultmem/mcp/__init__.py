"""The Model Context Protocol interface: ``vaultmem mcp`` serves one vault to an assistant.

An interface beside the CLI (:mod:`vaultmem.cli`): every tool is a thin layer over one
:class:`~vaultmem.Vault` method. See :mod:`vaultmem.mcp.server`. This package module imports
nothing of the SDK, so the CLI can name it without the SDK's import cost.
"""

LOCK_WAIT_SECONDS = 2.0
"""How long a write waits for a running pass before the "try again" error (seconds)."""
