"""Git and repair: ``.gitattributes`` and the merge driver, committing exactly a pass's changes,
memories at two paths and notes git left unmerged, and ``doctor`` (docs/architecture.md).

May import: vaultmem.core, vaultmem.store, vaultmem.services.vault_context,
vaultmem.services.index, vaultmem.services.lifecycle (undo, placement, the run a commit
describes), vaultmem.services.memories (writing the merged note).
"""
