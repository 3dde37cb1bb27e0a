"""Every Prometheus metric the sidecar exports, in one place, on one registry."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Info

from sidecar import __version__
from sidecar.observability.hot_metrics import HotMetrics

# Sub-millisecond buckets: local inspectors take tens of microseconds.
INSPECTOR_BUCKETS = (
    0.00001,
    0.000025,
    0.00005,
    0.0001,
    0.00025,
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
)
MAX_SERVER_LABELS = 100
RPC_BUCKETS = (
    0.0001,
    0.00025,
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
)


class Metrics:
    """Created once by the server and passed to the parts that record."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        hot = HotMetrics(r)  # series updated on every call; see hot_metrics.py
        # go-grpc-prometheus names, so existing dashboards work.
        self.rpc_started = hot.counter(
            "grpc_server_started",
            "RPCs started on the server.",
            ["grpc_type", "grpc_service", "grpc_method"],
        )
        self.rpc_handled = hot.counter(
            "grpc_server_handled",
            "RPCs completed on the server, whatever their status.",
            ["grpc_type", "grpc_service", "grpc_method", "grpc_code"],
        )
        self.rpc_seconds = hot.histogram(
            "grpc_server_handling_seconds",
            "Time to handle an RPC until the response is sent.",
            ["grpc_type", "grpc_service", "grpc_method"],
            RPC_BUCKETS,
        )
        self.inspector_seconds = hot.histogram(
            "sidecar_inspector_duration_seconds",
            "Time one inspector took for one batch.",
            ["inspector"],
            INSPECTOR_BUCKETS,
        )
        self.inspector_failures = Counter(
            "sidecar_inspector_failures",
            "Inspector runs that raised or timed out.",
            ["inspector", "reason"],
            registry=r,
        )
        self.inspector_verdicts = hot.counter(
            "sidecar_inspector_verdicts",
            "Per-call verdicts each inspector reached.",
            ["inspector", "verdict"],
        )
        self.decisions = hot.counter(
            "sidecar_decisions",
            "Final per-call verdicts returned by Inspect.",
            ["verdict"],
        )
        self.findings = hot.counter(
            "sidecar_findings",
            "Findings by rule, including ones that did not block.",
            ["inspector", "rule_id"],
        )
        self.recorded_answers = Counter(
            "sidecar_recorded_answers",
            "People's answers to approval prompts.",
            ["answer"],
            registry=r,
        )
        self.refused_answers = Counter(
            "sidecar_refused_answers",
            "RecordDecision calls refused: missing or wrong approval token, or an answer "
            "to a question that was not asked, already answered, expired or about another tool.",
            ["reason"],
            registry=r,
        )
        self.policy_info = Gauge(
            "sidecar_policy_info",
            "The policy revision being served (value 1).",
            ["revision"],
            registry=r,
        )
        self.policy_reloads = Counter(
            "sidecar_policy_reloads", "Policy reload attempts.", ["result"], registry=r
        )
        self.policy_last_reload_success = Gauge(
            "sidecar_policy_last_reload_success_timestamp_seconds",
            "When a policy last loaded successfully (Unix time).",
            registry=r,
        )
        self.shadow_disagreements = Counter(
            "sidecar_shadow_disagreements",
            "Calls the shadow candidate policy judged differently from the active one.",
            ["active_verdict", "candidate_verdict"],
            registry=r,
        )
        self.shadow_dropped = Counter(
            "sidecar_shadow_dropped",
            "Shadow evaluations skipped because too many were pending.",
            registry=r,
        )
        self.shadow_info = Gauge(
            "sidecar_shadow_policy_info",
            "The shadow candidate's revision (value 1), when one is loaded.",
            ["revision"],
            registry=r,
        )
        self.compactions = Counter(
            "sidecar_compactions",
            "Context compactions.",
            ["trigger", "result"],
            registry=r,
        )
        self.tool_pair_summaries = Counter(
            "sidecar_tool_pair_summaries",
            "Background tool-pair summaries: applied, stale (history changed), failed.",
            ["result"],
            registry=r,
        )
        self.summarizer_seconds = Histogram(
            "sidecar_summarizer_duration_seconds",
            "Time to write one summary (model or fallback).",
            ["summarizer"],
            buckets=RPC_BUCKETS,
            registry=r,
        )
        self.summarizer_failures = Counter(
            "sidecar_summarizer_failures",
            "Model summaries that failed (the deterministic fallback was used).",
            registry=r,
        )
        self.projected_tokens = Histogram(
            "sidecar_projected_tokens",
            "Tokens of the agent-visible view returned by Project.",
            buckets=(1_000, 4_000, 16_000, 32_000, 64_000, 128_000, 200_000, 500_000, 1_000_000),
            registry=r,
        )
        self.sessions_deleted = Counter(
            "sidecar_context_sessions_deleted",
            "Sessions deleted with everything they stored: on request or by retention.",
            ["reason"],
            registry=r,
        )
        self.context_cache_bytes = Gauge(
            "sidecar_context_cache_bytes",
            "Memory held by the session cache and the encoded-view cache (estimated).",
            ["cache"],
            registry=r,
        )
        self.store_seconds = Histogram(
            "sidecar_store_operation_duration_seconds",
            "Time of one state-store operation (SQLite or PostgreSQL), by operation.",
            ["op"],
            buckets=INSPECTOR_BUCKETS,
            registry=r,
        )
        # The state store (sidecar/store/): errors, the pool, whether it can be used.
        self.store_errors = Counter(
            "sidecar_store_errors",
            "State-store operations that failed, by operation and reason: unavailable "
            "(the database cannot be reached or used) or conflict (another replica or "
            "worker wrote first; the call is retried).",
            ["op", "reason"],
            registry=r,
        )
        self.store_pool_connections = Gauge(
            "sidecar_store_pool_connections",
            "PostgreSQL pool connections by state: in_use, idle.",
            ["state"],
            registry=r,
        )
        self.store_pool_waiting = Gauge(
            "sidecar_store_pool_waiting",
            "Calls waiting for a PostgreSQL pool connection.",
            registry=r,
        )
        self.store_up = Gauge(
            "sidecar_store_up",
            "1 while the state store answers, 0 while it cannot be reached (Inspect fails "
            "closed, context calls answer UNAVAILABLE).",
            registry=r,
        )
        self.inspect_state_unavailable = Counter(
            "sidecar_inspect_state_unavailable",
            "Inspect calls judged without the session's stored state (the store could not "
            "be read or written), by the policy applied: require_approval, deny, unavailable.",
            ["policy"],
            registry=r,
        )
        # Bounded work per request (sidecar/shell/limits.py, isolation.py, chain.py).
        self.shell_not_analysed = Counter(
            "sidecar_shell_not_analysed",
            "Shell calls whose command line was not fully analysed (they need approval), "
            "by reason: too_large, too_complex, timeout, memory, busy.",
            ["reason"],
            registry=r,
        )
        self.analysis_worker_restarts = Counter(
            "sidecar_analysis_worker_restarts",
            "Shell analysis processes replaced: killed past their budget, or died (memory cap).",
            ["reason"],
            registry=r,
        )
        self.offloaded_batches = Counter(
            "sidecar_offloaded_batches",
            "Inspect batches heavy enough to run their inspectors off the event loop.",
            registry=r,
        )
        self.decision_log_failures = Counter(
            "sidecar_decision_log_failures",
            "Decision-log records that could not be written as they were (the call still "
            "answered; the record was written in a safe encoding when possible).",
            registry=r,
        )
        # Tool integrity and injection-aware sessions (issue 15). Server names come from
        # clients: past MAX_SERVER_LABELS distinct ones they are counted as "other".
        self._server_labels: set[str] = set()
        self.tool_drift = Counter(
            "sidecar_tool_drift",
            "Tool definitions registered that differ from the trusted one (each new "
            "definition counted once), by server.",
            ["server"],
            registry=r,
        )
        self.tool_poisoned = Counter(
            "sidecar_tool_poisoned_descriptions",
            "Tool definitions whose description or schemas hold instructions aimed at the "
            "model (a sign of high risk or more; each new definition counted once), by server.",
            ["server"],
            registry=r,
        )
        self.tool_changes_accepted = Counter(
            "sidecar_tool_changes_accepted",
            "Changed tool definitions accepted as trusted (AcceptToolChange), by server.",
            ["server"],
            registry=r,
        )
        self.sessions_tainted = Counter(
            "sidecar_sessions_tainted",
            "Sessions that read untrusted input (their first flagged message), by where it "
            "was seen: append, inspect (recent_tool_outputs), classifier.",
            ["source"],
            registry=r,
        )
        self.injection_flagged = Counter(
            "sidecar_injection_flagged_messages",
            "Tool results and fetched content that looked like a prompt injection.",
            ["source"],
            registry=r,
        )
        self.injection_classifier = Counter(
            "sidecar_injection_classifier",
            "Answers of the injection classifier model: clean, injection, failed.",
            ["result"],
            registry=r,
        )
        self.log_lines_dropped = Counter(
            "sidecar_log_lines_dropped",
            "Log lines dropped because their reader fell behind (a full queue); log is "
            "'decision' or 'server'. The log itself says how many, once lines flow again.",
            ["log"],
            registry=r,
        )
        self.build_info = Info("sidecar_build", "Build information.", registry=r)
        self.build_info.info({"version": __version__})

    def server_label(self, server: str) -> str:
        """A client-given server name as a label value, bounded in length and number."""
        label = server[:64] or "(runtime)"
        if label in self._server_labels:
            return label
        if len(self._server_labels) >= MAX_SERVER_LABELS:
            return "other"
        self._server_labels.add(label)
        return label

    def set_policy_revision(self, revision: str) -> None:
        self.policy_info.clear()
        self.policy_info.labels(revision=revision).set(1)

    def set_shadow_revision(self, revision: str) -> None:
        self.shadow_info.clear()
        self.shadow_info.labels(revision=revision).set(1)


class WorkerMetrics:
    """The supervisor's own series when `--workers N` runs several server processes; the
    workers' series are merged into the same exposition (sidecar/workers.py)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry
        self.workers = Gauge(
            "sidecar_workers",
            "Server processes (workers) by state: running, or expected (--workers).",
            ["state"],
            registry=registry,
        )
        self.restarts = Counter(
            "sidecar_worker_restarts",
            "Workers that exited unexpectedly and were started again.",
            registry=registry,
        )
        self.scrape_failures = Counter(
            "sidecar_worker_scrape_failures",
            "Scrapes in which a worker's metrics could not be read (its series are missing "
            "from that scrape).",
            ["worker"],
            registry=registry,
        )
