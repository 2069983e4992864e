"""Lifecycle passes: planned from one table of the index (:mod:`.lifecycle`), applied move by
move as owned, journaled steps (:mod:`.pass_session`), undone exactly (:mod:`.undo`); pass 1's
boxes (:mod:`.boxing`), placement checks, the one-memory commands (promote, forget, gc),
progress reporting and the folders a pass empties (docs/architecture.md).

May import: vaultmem.core, vaultmem.store, vaultmem.services.vault_context,
vaultmem.services.index, vaultmem.services.memories (the memory view and lookup),
vaultmem.services.sync (memories at two paths are held back; ``--commit``).
"""
