"""The state store: one interface, two engines.

SQLite (`sqlite.py`) is the embedded default: `make serve`, sidecar mode, the CLI.
PostgreSQL (`postgres.py`) is shared by many replicas and workers: selected by a
`--state postgresql://…` (or `postgres://…`) value. Both hold the same tables
(people's answers and their audit log, approval questions, sessions, messages,
compaction state and summaries, data-flow facts, repetition streaks, taint, tool
definitions and the trust in them, sessions that read a prompt injection) and run the
same SQL (`sql.py`); `states.py` is the Inspect path's view of it, `open.py` picks one.
"""
