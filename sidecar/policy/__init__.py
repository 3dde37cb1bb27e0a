"""Policy documents: schema, loading and merging."""
