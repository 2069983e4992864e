"""Decay and the decay score, importance and review priority, reinforcement: the formulas written
once, for Python floats and for numpy columns (docs/architecture.md, docs/user-guide.md "Scores").

May import: vaultmem.core.notes, vaultmem.core.settings.
"""
