"""The services layer: what vaultmem does, on top of ``core`` (pure) and ``store`` (disk,
SQLite), below the interfaces (``cli``, ``mcp``). One package per capability — ``index``,
``memories``, ``lifecycle``, ``recall``, ``semantic``, ``sync`` — each saying in its docstring
what it owns and what it may import; beside them, the Python API (:mod:`.vault`), what a service
needs of an open vault (:mod:`.vault_context`), finding and setting up a vault
(:mod:`.vault_setup`, :mod:`.obsidian_types`) and ``vaultmem demo`` (:mod:`.demo`).
docs/architecture.md draws the layers and says where a new feature goes.
"""
