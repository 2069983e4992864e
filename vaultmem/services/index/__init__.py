"""services/index."""
