"""core/notes."""
