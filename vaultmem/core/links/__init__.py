"""core/links."""
