"""The maths of recall, pure: query words, the signals and their fusion, diversity of a page,
time and date words in a query, the vector signal and quantised vectors, and what comes from how
memories relate (episodes, corrections) (docs/architecture.md, docs/user-guide.md "Recall").

May import: vaultmem.core.settings.
"""
