"""Memories one at a time: saving one (:mod:`.memory_saving`, top to bottom: draft → novelty →
links → write) and importing many (:mod:`.remembering`), corrections, editing properties in place
and rewriting text, finding, reading and listing memories, a note's links and pages
(docs/architecture.md).

May import: vaultmem.core, vaultmem.store, vaultmem.services.vault_context,
vaultmem.services.index, vaultmem.services.lifecycle (the plans ``status`` lists, the journal a
rewrite writes), vaultmem.services.semantic (the surprise of a new memory, embedding it).
"""
