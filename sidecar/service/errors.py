"""Bad input is reported as INVALID_ARGUMENT naming the field, never as a crash."""

from __future__ import annotations


class InvalidArgument(Exception):
    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"{field}: {problem}")
