"""Planning the lifecycle from columns, pure: promote, expire, forget and prune; boxes and traces
(pass 1, *Seal boxes*); near-duplicate clusters for consolidation (docs/architecture.md).

May import: vaultmem.core.links, vaultmem.core.notes, vaultmem.core.scoring,
vaultmem.core.settings.
"""
