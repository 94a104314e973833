"""Model set-ups several test modules need."""

from __future__ import annotations

import socket

# A small JSON schema and a chat that asks for it: one fact as subject, relation and object.
TRIPLE = {
    "type": "object",
    "properties": {
        "subject": {"type": "string", "maxLength": 40},
        "relation": {"type": "string", "maxLength": 30},
        "object": {"type": "array", "items": {"type": "string", "maxLength": 40}, "maxItems": 3},
    },
    "required": ["subject", "relation", "object"],
}
ASK_TRIPLE = [
    {"role": "system", "content": "Extract one fact as JSON with subject, relation and object."},
    {"role": "user", "content": "The Energy Act regulates wind farms and solar parks."},
]


def model_endpoint_down(monkeypatch) -> None:
    """Point the [llm] config at an OpenAI-compatible endpoint on a port nobody listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("POLICYKB_LLM__PROVIDER", "openai")
    monkeypatch.setenv("POLICYKB_LLM__BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("POLICYKB_LLM__MODEL", "none")
    monkeypatch.setenv("POLICYKB_LLM__RETRIES", "0")
