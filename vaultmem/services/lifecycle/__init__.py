"""services/lifecycle."""
