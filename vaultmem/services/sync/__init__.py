"""services/sync."""
