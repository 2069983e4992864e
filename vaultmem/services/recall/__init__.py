"""Recall: the filters, the candidates (FTS5 words, dates, vectors) and their neighbours (links,
episodes), the ranking in four steps read top to bottom in :func:`.ranking.rank` (candidates →
signals → fusion → page), and the review queue (docs/architecture.md).

May import: vaultmem.core, vaultmem.services.vault_context, vaultmem.services.index,
vaultmem.services.memories, vaultmem.services.semantic.
"""
