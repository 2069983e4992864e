"""core/lifecycle."""
