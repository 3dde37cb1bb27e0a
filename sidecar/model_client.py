"""A small client for OpenAI-compatible chat-completions endpoints.

Shared by the adversary inspector and (later) the context summariser. The API
key is read from an environment variable or a file, never logged, and never
part of an error message.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import httpx


class ModelError(Exception):
    """The model could not give an answer (HTTP error, timeout, malformed reply)."""


@dataclass(frozen=True, slots=True)
class ModelSettings:
    base_url: str  # e.g. http://127.0.0.1:8000/v1
    model: str
    api_key_env: str | None = None
    api_key_file: Path | None = None
    timeout_seconds: float = 5.0
    retries: int = 1
    max_tokens: int = 256


def read_api_key(settings: ModelSettings) -> str | None:
    if settings.api_key_file is not None:
        try:
            return settings.api_key_file.read_text(encoding="utf-8").strip() or None
        except OSError as error:
            raise ModelError(f"cannot read the API key file: {error.strerror}") from None
    if settings.api_key_env:
        return os.environ.get(settings.api_key_env) or None
    return None


class Endpoint(Protocol):
    """Where a model is and how to authenticate (the policy's ModelEndpoint)."""

    @property
    def base_url(self) -> str | None: ...
    @property
    def model(self) -> str | None: ...
    @property
    def api_key_env(self) -> str | None: ...
    @property
    def api_key_file(self) -> Path | None: ...
    @property
    def retries(self) -> int: ...


class ChatModelClient:
    @classmethod
    def for_endpoint(
        cls, endpoint: Endpoint, timeout_seconds: float, max_tokens: int = 256
    ) -> ChatModelClient:
        if not endpoint.base_url or not endpoint.model:
            raise ModelError("the endpoint needs base_url and model")
        return cls(
            ModelSettings(
                base_url=endpoint.base_url,
                model=endpoint.model,
                api_key_env=endpoint.api_key_env,
                api_key_file=endpoint.api_key_file,
                timeout_seconds=timeout_seconds,
                retries=endpoint.retries,
                max_tokens=max_tokens,
            )
        )

    def __init__(self, settings: ModelSettings) -> None:
        self._settings = settings
        headers = {"Content-Type": "application/json"}
        key = read_api_key(settings)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self._http = httpx.AsyncClient(
            base_url=settings.base_url.rstrip("/") + "/",
            headers=headers,
            timeout=settings.timeout_seconds,
        )

    async def complete(self, messages: list[dict[str, str]]) -> str:
        """The assistant's reply text; retries transient failures with a short backoff."""
        body: dict[str, Any] = {
            "model": self._settings.model,
            "messages": messages,
            "temperature": 0,
            "max_tokens": self._settings.max_tokens,
        }
        last: Exception | None = None
        for attempt in range(self._settings.retries + 1):
            if attempt:
                await asyncio.sleep(min(0.1 * 2**attempt, 1.0))
            try:
                response = await self._http.post("chat/completions", json=body)
            except httpx.TimeoutException:
                last = ModelError("the model did not answer in time")
                continue
            except httpx.HTTPError as error:
                last = ModelError(f"cannot reach the model: {type(error).__name__}")
                continue
            if response.status_code >= 500 or response.status_code == 429:
                last = ModelError(f"the model answered HTTP {response.status_code}")
                continue
            if response.status_code != 200:
                raise ModelError(f"the model answered HTTP {response.status_code}")
            return _reply_text(response)
        raise last or ModelError("no answer")

    async def close(self) -> None:
        await self._http.aclose()


def _reply_text(response: httpx.Response) -> str:
    try:
        content = response.json()["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise ModelError("the model's reply is not a chat completion") from None
    if not isinstance(content, str):
        raise ModelError("the model's reply has no text")
    return content
