"""Matching utilities shared by the layers: glob sets and many RE2 patterns at once."""
