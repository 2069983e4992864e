"""The sidecar index kept in step with the vault: the walk (which files are notes and
attachments), incremental sync and the cold bulk load with its worker processes, index stamps,
the live watcher and its heartbeat, the second process that re-indexes what a pass writes, the
small lookups that annotate listed notes, and the tag and folder filters over the index that
``list`` and ``recall`` share (:mod:`.note_filters`). The vault is the truth: everything here can be
rebuilt from it (docs/architecture.md).

May import: vaultmem.core, vaultmem.store, vaultmem.services.vault_context.
"""
