"""The inspector chain: typed domain objects, one inspector per module, the runner."""
