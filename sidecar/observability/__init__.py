"""Metrics, RPC interceptors and the decision log."""
