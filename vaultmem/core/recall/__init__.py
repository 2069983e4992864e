"""core/recall."""
