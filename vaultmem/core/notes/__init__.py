"""A note's text, pure: where its frontmatter is and what it holds (fast path, YAML), the memory
fields and the one table of properties with their merge rules, surgical edits, the three-way
merge of notes, names, timestamps, content hashes and excerpts (docs/architecture.md).

May import: vaultmem.core.lazy_patterns, vaultmem.core.links.
"""
