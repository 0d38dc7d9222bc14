"""Everything that chooses actions: baselines and trained policies (to come)."""
