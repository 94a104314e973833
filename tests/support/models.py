"""Model set-ups several test modules need."""

from __future__ import annotations

import socket


def model_endpoint_down(monkeypatch) -> None:
    """Point the [llm] config at an OpenAI-compatible endpoint on a port nobody listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("POLICYKB_LLM__PROVIDER", "openai")
    monkeypatch.setenv("POLICYKB_LLM__BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("POLICYKB_LLM__MODEL", "none")
    monkeypatch.setenv("POLICYKB_LLM__RETRIES", "0")
