"""Any OpenAI-compatible chat endpoint (OpenAI, Ollama, vLLM, llama.cpp server, LM Studio, ...).

Retries are ours, not the SDK's (``max_retries=0``), so that every failure ends in one precise
policykb error: transient ones (connection refused, timeouts, 429, 5xx) are retried with exponential
backoff and then raise :class:`ModelUnavailableError`; other 4xx fail at once. A stream is retried
only until its response starts; a failure after that (the connection drops, the server sends an
error event) ends it with the same errors, unretried: its first pieces are already out.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Generator
from typing import Any, Literal

from core.errors import ConfigError, ModelError, ModelNotFoundError, ModelOutputError, ModelUnavailableError
from core.llm.base import LLM, YES_NO_TOP_LOGPROBS, Completion, Request
from core.usage import Usage

SchemaMode = Literal["json_schema", "json_object", "prompt"]
_DUMMY_KEY = "not-needed"  # local servers ignore the key, but the SDK refuses to start without one
_BACKOFF_FIRST_S = 0.5
_BACKOFF_MAX_S = 8.0


class OpenAICompatLLM(LLM):
    """Chat completions over HTTP with the ``openai`` SDK pointed at ``base_url``.

    ``schema_mode`` says how the endpoint takes a JSON schema: ``"json_schema"`` (the OpenAI
    form), ``"json_object"`` with a ``schema`` key (llama-cpp-python's server), or ``"prompt"``
    for endpoints that cannot constrain output (then ``supports_schema`` is False).
    Streams use the ``stream: true`` server-sent-events protocol.
    """

    supports_streaming = True

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        schema_mode: SchemaMode = "json_schema",
        timeout_s: float = 120.0,
        retries: int = 3,
        sleep: Callable[[float], None] = time.sleep,
        **kwargs: Any,
    ):
        if not base_url:
            raise ConfigError("llm.base_url is empty; set the OpenAI-compatible endpoint URL")
        super().__init__(f"openai:{base_url.rstrip('/')}:{model}", **kwargs)
        self.base_url = base_url.rstrip("/")
        self.model = model or "default"  # llama.cpp server and LM Studio accept any name
        self.api_key_env = api_key_env
        self.schema_mode = schema_mode
        self.supports_schema = schema_mode != "prompt"
        self.timeout_s = timeout_s
        self.retries = retries
        self._sleep = sleep
        self._client: Any = None

    @property
    def client(self) -> Any:
        if self._client is None:
            import openai

            self._client = openai.OpenAI(
                base_url=self.base_url,
                api_key=os.environ.get(self.api_key_env) or _DUMMY_KEY,
                timeout=self.timeout_s,
                max_retries=0,
            )
        return self._client

    def _chat_kwargs(self, request: Request) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": request.as_dicts(),
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
        }
        if request.stop:
            kwargs["stop"] = list(request.stop)
        if request.schema is not None and self.schema_mode == "json_schema":
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "response", "schema": dict(request.schema)},
            }
        elif request.schema is not None and self.schema_mode == "json_object":
            kwargs["response_format"] = {"type": "json_object", "schema": dict(request.schema)}
        return kwargs

    def _generate(self, request: Request) -> Completion:
        kwargs = self._chat_kwargs(request)
        response = self._with_retries(lambda: self.client.chat.completions.create(**kwargs))
        if not getattr(response, "choices", None):
            raise ModelOutputError(f"LLM endpoint {self.base_url} returned no choices")
        choice = response.choices[0]
        usage = getattr(response, "usage", None)  # some servers omit it; count 0 rather than guess
        return Completion(
            text=choice.message.content or "",
            usage=Usage(
                int(getattr(usage, "prompt_tokens", 0) or 0),
                int(getattr(usage, "completion_tokens", 0) or 0),
            ),
            cached=False,
            model=self.model_id,
            finish_reason=choice.finish_reason or "stop",
        )

    def _stream(self, request: Request) -> Generator[str, None, Completion]:
        """``stream: true``: content deltas as they arrive. ``stream_options.include_usage`` asks
        for a last chunk with the call's usage (OpenAI, vLLM, Ollama and llama.cpp's own server
        send it); a server that ignores it gets its content chunks counted as completion tokens
        (one token each on those servers) and 0 prompt tokens."""
        import openai

        kwargs = {**self._chat_kwargs(request), "stream": True, "stream_options": {"include_usage": True}}
        stream = self._with_retries(lambda: self.client.chat.completions.create(**kwargs))
        usage: Any = None
        reason = "stop"
        chunks = 0
        try:
            iterator = iter(stream)
            while True:
                try:
                    chunk = next(iterator)
                except StopIteration:
                    break
                except (openai.APITimeoutError, openai.APIConnectionError) as exc:
                    raise ModelUnavailableError(
                        f"LLM endpoint {self.base_url} stream broke off: {_reason(exc, self.timeout_s)}"
                    ) from exc
                except openai.OpenAIError as exc:  # an error event inside the stream
                    raise ModelError(f"LLM endpoint {self.base_url} failed mid-stream: {_detail(exc)}") from exc
                except ValueError as exc:  # a data line that is not JSON
                    raise ModelOutputError(f"LLM endpoint {self.base_url} sent an invalid stream: {_short(str(exc))}") from exc
                usage = getattr(chunk, "usage", None) or usage
                for choice in getattr(chunk, "choices", None) or ():
                    reason = getattr(choice, "finish_reason", None) or reason
                    piece = getattr(getattr(choice, "delta", None), "content", None)
                    if piece:
                        chunks += 1
                        yield piece
        finally:
            stream.close()  # releases the connection, also when the consumer stops early
        if usage is None:
            return Completion("", Usage(0, chunks), False, self.model_id, reason)
        counted = Usage(int(getattr(usage, "prompt_tokens", 0) or 0), int(getattr(usage, "completion_tokens", 0) or 0))
        return Completion("", counted, False, self.model_id, reason)

    def _first_token_logprobs(self, request: Request) -> tuple[dict[str, float], Usage]:
        """``logprobs=True, top_logprobs=20`` (OpenAI's maximum): the first token's top list."""
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": request.as_dicts(),
            "max_tokens": max(1, request.max_tokens),
            "temperature": 0.0,
            "logprobs": True,
            "top_logprobs": YES_NO_TOP_LOGPROBS,
        }
        response = self._with_retries(lambda: self.client.chat.completions.create(**kwargs))
        if not getattr(response, "choices", None):
            raise ModelOutputError(f"LLM endpoint {self.base_url} returned no choices")
        content = getattr(getattr(response.choices[0], "logprobs", None), "content", None)
        if not content:
            raise ModelOutputError(f"LLM endpoint {self.base_url} returned no logprobs; it cannot score yes/no")
        first = content[0]
        found: dict[str, float] = {}
        for item in [*(getattr(first, "top_logprobs", None) or ()), first]:
            token, logprob = getattr(item, "token", None), getattr(item, "logprob", None)
            if isinstance(token, str) and isinstance(logprob, (int, float)):
                found.setdefault(token, float(logprob))  # the chosen token is in the top list too
        usage = getattr(response, "usage", None)
        return found, Usage(int(getattr(usage, "prompt_tokens", 0) or 0), int(getattr(usage, "completion_tokens", 0) or 0))

    def _with_retries(self, call: Callable[[], Any]) -> Any:
        import openai

        attempt = 0
        while True:
            try:
                return call()
            except (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError) as exc:
                failure = exc
            except openai.APIStatusError as exc:
                if exc.status_code < 500:
                    raise self._client_error(exc) from exc
                failure = exc  # any other 5xx: transient too
            except openai.APIResponseValidationError as exc:
                raise ModelOutputError(f"LLM endpoint {self.base_url} sent an invalid response: {exc}") from exc
            except openai.OpenAIError as exc:
                raise ModelError(f"LLM endpoint {self.base_url}: {exc}") from exc
            if attempt >= self.retries:
                verb = "unreachable" if isinstance(failure, openai.APIConnectionError) else "failing"
                raise ModelUnavailableError(
                    f"LLM endpoint {self.base_url} {verb} after {self.retries} retries: {_reason(failure, self.timeout_s)}"
                ) from failure
            self._sleep(min(_BACKOFF_FIRST_S * 2**attempt, _BACKOFF_MAX_S))
            attempt += 1

    def _client_error(self, exc: Any) -> ModelError:
        detail = _detail(exc)
        if exc.status_code == 404:
            return ModelNotFoundError(f"LLM endpoint {self.base_url} has no model {self.model!r} (HTTP 404): {detail}")
        return ModelError(f"LLM endpoint {self.base_url} rejected the request (HTTP {exc.status_code}): {detail}")


def _detail(exc: Any) -> str:
    """The server's own error message, without the SDK's "Error code: 500 - " prefix."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        text = inner.get("message") if isinstance(inner, dict) else inner
        if text:
            return _short(str(text))
    return _short(re.sub(r"^Error code: \d+ - ", "", str(getattr(exc, "message", "") or exc)))


def _reason(exc: BaseException, timeout_s: float) -> str:
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return f"timed out after {timeout_s:g}s"
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}: {_detail(exc)}"
    seen: BaseException | None = exc
    while seen is not None:  # the root cause sits a few exceptions down the chain
        if isinstance(seen, ConnectionRefusedError):
            return "connection refused"
        if "refused" in str(seen).lower():
            return "connection refused"
        seen = seen.__cause__ or seen.__context__
    return _short(str(exc)) or type(exc).__name__


def _short(text: str, limit: int = 160) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
