"""The Model Context Protocol interface: ``vaultmem mcp`` serves one vault to an assistant.

An interface beside the CLI (:mod:`vaultmem.cli`): every tool is a thin layer over one
:class:`~vaultmem.Vault` method. See :mod:`vaultmem.mcp.server`.
"""
