"""core/scoring."""
