"""Paper search with human checkpoints (seed 003)."""
