"""services/memories."""
