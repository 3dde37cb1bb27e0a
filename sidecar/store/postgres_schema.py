"""PostgreSQL schema, versioned: append only, each entry moves the schema one version on.

The tables and columns are the SQLite file's (sidecar/state/store.py), in PostgreSQL's
types, so that one SQL text serves both engines. Applied at start under an advisory lock,
so replicas starting together do not race; a replica refuses a newer schema.
"""

from __future__ import annotations

# pg_advisory_xact_lock key: "sidecar" in ASCII, as a bigint.
MIGRATION_LOCK = 0x73696465636172

MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE standing_answers (
        session_id TEXT NOT NULL,
        tool_name TEXT NOT NULL,
        verdict INTEGER NOT NULL,
        decision_id TEXT NOT NULL,
        answered_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (session_id, tool_name)
    );
    CREATE TABLE answer_log (
        id BIGSERIAL PRIMARY KEY,
        session_id TEXT NOT NULL,
        tool_name TEXT NOT NULL,
        tool_call_id TEXT NOT NULL,
        answer TEXT NOT NULL,
        decision_id TEXT NOT NULL,
        answered_at DOUBLE PRECISION NOT NULL,
        arguments_digest TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX answer_log_by_session ON answer_log (session_id);
    CREATE TABLE approval_questions (
        session_id TEXT NOT NULL,
        decision_id TEXT NOT NULL,
        tool_call_id TEXT NOT NULL,
        tool_name TEXT NOT NULL,
        arguments_digest TEXT NOT NULL,
        asked_at DOUBLE PRECISION NOT NULL,
        answer TEXT NOT NULL DEFAULT '',
        answered_at DOUBLE PRECISION,
        PRIMARY KEY (session_id, decision_id, tool_call_id)
    );
    CREATE INDEX approval_questions_by_age ON approval_questions (asked_at);
    CREATE TABLE once_answers (
        session_id TEXT NOT NULL,
        tool_name TEXT NOT NULL,
        arguments_digest TEXT NOT NULL,
        verdict INTEGER NOT NULL,
        decision_id TEXT NOT NULL,
        tool_call_id TEXT NOT NULL,
        answered_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (session_id, decision_id, tool_call_id)
    );
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        provider_managed INTEGER NOT NULL DEFAULT 0,
        context_limit BIGINT NOT NULL DEFAULT 0,
        version BIGINT NOT NULL DEFAULT 0,
        usage_tokens BIGINT NOT NULL DEFAULT 0,
        usage_seq BIGINT NOT NULL DEFAULT 0,
        calibration DOUBLE PRECISION NOT NULL DEFAULT 1.0,
        recoveries INTEGER NOT NULL DEFAULT 0,
        next_seq BIGINT NOT NULL DEFAULT 1,
        created_at DOUBLE PRECISION NOT NULL,
        calibrated_seq BIGINT NOT NULL DEFAULT 0,
        rewrite_seq BIGINT NOT NULL DEFAULT 0,
        last_active_at DOUBLE PRECISION NOT NULL DEFAULT 0,
        view_tokens BIGINT NOT NULL DEFAULT 0,
        result_tokens BIGINT NOT NULL DEFAULT 0
    );
    CREATE INDEX sessions_by_last_active ON sessions (last_active_at);
    CREATE TABLE messages (
        session_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        id TEXT NOT NULL,
        role TEXT NOT NULL,
        kind TEXT NOT NULL,
        response_id TEXT NOT NULL,
        created_at_ms BIGINT NOT NULL,
        user_visible INTEGER NOT NULL,
        agent_visible INTEGER NOT NULL,
        position DOUBLE PRECISION NOT NULL,
        tokens BIGINT NOT NULL,
        replaces TEXT NOT NULL,
        parts TEXT NOT NULL,
        PRIMARY KEY (session_id, seq),
        UNIQUE (session_id, id)
    );
    CREATE INDEX messages_agent_view ON messages (session_id, agent_visible, position, seq);
    CREATE TABLE tool_calls (
        session_id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        PRIMARY KEY (session_id, call_id)
    );
    CREATE TABLE session_facts (
        session_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        key TEXT NOT NULL,
        origin TEXT NOT NULL,
        detail TEXT NOT NULL,
        recorded_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (session_id, kind, key)
    );
    CREATE TABLE streaks (
        session_id TEXT PRIMARY KEY,
        tool_name TEXT NOT NULL,
        digest TEXT NOT NULL,
        count BIGINT NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX streaks_by_age ON streaks (updated_at);
    CREATE TABLE taints (
        session_id TEXT PRIMARY KEY,
        source TEXT NOT NULL,
        tainted_at DOUBLE PRECISION NOT NULL
    );
    """,
    # Tool definitions and injection-aware sessions (issue 15): the SQLite file's
    # last three migrations.
    """
    CREATE TABLE tool_definitions (
        server TEXT NOT NULL,
        name TEXT NOT NULL,
        trusted_fingerprint TEXT NOT NULL,
        trusted_definition TEXT NOT NULL,
        latest_fingerprint TEXT NOT NULL,
        latest_definition TEXT NOT NULL,
        present INTEGER NOT NULL,
        first_seen DOUBLE PRECISION NOT NULL,
        trusted_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (server, name)
    );
    CREATE TABLE tool_trust_log (
        id BIGSERIAL PRIMARY KEY,
        server TEXT NOT NULL,
        name TEXT NOT NULL,
        event TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        previous_fingerprint TEXT NOT NULL,
        asked_in TEXT NOT NULL,
        at DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX tool_trust_log_by_tool ON tool_trust_log (server, name);
    CREATE TABLE session_tools (
        session_id TEXT NOT NULL,
        server TEXT NOT NULL,
        name TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        registered_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (session_id, server, name)
    );
    CREATE TABLE session_taint (
        id BIGSERIAL PRIMARY KEY,
        session_id TEXT NOT NULL,
        message_id TEXT NOT NULL,
        source TEXT NOT NULL,
        state TEXT NOT NULL,
        rules TEXT NOT NULL,
        excerpt TEXT NOT NULL,
        at DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX session_taint_by_session ON session_taint (session_id);
    CREATE TABLE tool_registry (
        id INTEGER PRIMARY KEY,
        version BIGINT NOT NULL
    );
    INSERT INTO tool_registry (id, version) VALUES (1, 0);
    """,
)
