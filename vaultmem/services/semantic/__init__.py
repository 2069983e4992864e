"""services/semantic."""
