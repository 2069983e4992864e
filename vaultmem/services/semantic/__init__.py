"""Embeddings: the providers (a local ONNX model, Ollama over HTTP), embedding notes and searching
their vectors, embedding in the background while the watcher runs, and consolidation of
near-duplicate memories (docs/architecture.md).

May import: vaultmem.core, vaultmem.store, vaultmem.services.vault_context,
vaultmem.services.index, vaultmem.services.lifecycle (consolidation is journaled like a pass),
vaultmem.services.memories (the memory view).
"""
