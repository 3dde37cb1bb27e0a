"""Sessions: the persisted history, the model's view of it, and compaction."""
