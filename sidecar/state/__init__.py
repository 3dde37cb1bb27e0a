"""Persistent state: people's answers to approval prompts (and, later, sessions)."""
