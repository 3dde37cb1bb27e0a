"""Agent policy sidecar: inspects AI agents' tool calls before they run."""

__version__ = "0.1.0"
