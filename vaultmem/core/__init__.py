"""The core layer: pure functions and types, no file, database or network I/O. One package per
subject — ``notes``, ``links``, ``scoring``, ``lifecycle``, ``recall`` — each saying in its
docstring what it owns and what it may import; beside them, the settings of a vault
(:mod:`.settings`), paths as people write them (:mod:`.user_paths`), lazily compiled expressions
(:mod:`.lazy_patterns`) and pausing the garbage collector during bulk work (:mod:`.collector`).
docs/architecture.md draws the layers.
"""
