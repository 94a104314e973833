"""The LLM interface: one abstract method, everything else written once on top of it.

A backend implements :meth:`LLM._generate` (one uncached chat completion). :meth:`LLM.complete`
adds what every backend shares: defaults, schema bounding, the response cache and token accounting.
:meth:`LLM.stream` is the same request yielding text pieces as they come (a backend that can
stream implements :meth:`LLM._stream`), sharing that cache and accounting.
:meth:`LLM.complete_json` parses and checks JSON output. :meth:`LLM.yes_probability` scores a
yes/no question from the first answer token's log-probabilities (a backend that can read them
implements :meth:`LLM._first_token_logprobs`).
"""

from __future__ import annotations

import json
import math
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.cache import ResponseCache, stable_hash
from core.errors import ModelError, ModelOutputError
from core.llm.schema import bound_schema
from core.usage import Usage, UsageTracker

Message = Mapping[str, str]  # {"role": "system" | "user" | "assistant", "content": str}
_ROLES = frozenset({"system", "user", "assistant"})
_CACHE_FORMAT = 1  # bump when the cached record or the key recipe changes


@dataclass(frozen=True)
class Completion:
    """One chat completion. ``cached``: served from the response cache, no model call made.
    ``finish_reason``: "stop" (natural end or stop string) or "length" (hit ``max_tokens``)."""

    text: str
    usage: Usage
    cached: bool
    model: str
    finish_reason: str = "stop"


@dataclass(frozen=True)
class Request:
    """Everything that determines an output; all of it goes into the cache key."""

    messages: tuple[tuple[str, str], ...]  # (role, content)
    max_tokens: int
    temperature: float
    stop: tuple[str, ...] = ()
    schema: Mapping[str, Any] | None = None  # already bounded
    end_after: str | None = None  # a regex: the reply may end only where its text ends with a match

    def as_dicts(self) -> list[dict[str, str]]:
        return [{"role": r, "content": c} for r, c in self.messages]


class LLM(ABC):
    """A chat model. Capabilities are class attributes, so callers check them instead of probing.

    ``supports_schema``: the backend constrains output to a JSON schema itself. When False,
    :meth:`complete_json` describes the schema in the prompt and only checks the result.

    ``supports_streaming``: :meth:`stream` yields pieces as the model produces them. When False it
    still works, yielding the whole text once the model is done.

    ``supports_end_after``: the backend can keep the model from ending its reply until the text
    ends with a match of a regex (``end_after``; the in-process llama.cpp model, by masking its
    end-of-generation tokens). When False, an ``end_after`` passed to :meth:`complete` or
    :meth:`stream` is not applied (callers must check the output anyway) and does not enter the
    cache key. ``max_tokens`` still ends a reply anywhere.
    """

    supports_schema: bool = True  # may be set per instance (an endpoint in 'prompt' mode)
    supports_streaming: bool = False
    supports_end_after: bool = False

    def __init__(
        self,
        model_id: str,
        *,
        max_tokens: int = 512,
        temperature: float = 0.0,
        schema_max_items: int = 16,
        schema_max_length: int = 300,
        cache: ResponseCache | bool | None = None,
        tracker: UsageTracker | None = None,
    ):
        self.model_id = model_id  # identity for the cache key: name plus whatever pins the weights
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.schema_max_items = schema_max_items
        self.schema_max_length = schema_max_length
        # cache=False (or None) turns caching off for this instance, e.g. the CLI's --no-cache.
        self.cache = cache if isinstance(cache, ResponseCache) else None
        self.tracker = tracker if tracker is not None else UsageTracker()

    @abstractmethod
    def _generate(self, request: Request) -> Completion:
        """Run one completion on the model (no cache). Raise a :class:`ModelError` subclass."""

    def complete(
        self,
        messages: Sequence[Message] | str,
        *,
        schema: Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: Sequence[str] | str | None = None,
        end_after: str | None = None,
    ) -> Completion:
        """Chat completion; a plain string is one user message. Identical requests (same model,
        messages, parameters and schema) are answered from the cache when one is attached."""
        request = self._request(messages, schema, max_tokens, temperature, stop, end_after)
        key = self._cache_key(request) if self.cache is not None else ""
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            done = _from_record(hit, self.model_id)
            if done is not None:
                self.tracker.record(self.model_id, done.usage, cached=True)
                return done
        started = time.perf_counter()
        done = self._generate(request)
        self.tracker.record(self.model_id, done.usage, cached=False, seconds=time.perf_counter() - started)
        if self.cache is not None:
            self.cache.put(key, _to_record(done))
        return done

    def stream(
        self,
        messages: Sequence[Message] | str,
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: Sequence[str] | str | None = (),
        end_after: str | None = None,
    ) -> Iterator[str]:
        """The text of :meth:`complete` for the same request, in pieces as the model produces them
        (``"".join`` of the pieces is the completion's text). It shares everything with
        :meth:`complete`: defaults, the cache key (a hit yields the cached text as one piece, no
        model call; a finished stream is stored so a later :meth:`complete` or :meth:`stream` of
        the same request hits) and the tracker (one call per stream, with the backend's token
        counts). Messages are checked at once; the model is called on the first ``next()``.

        A consumer that stops early should ``close()`` the iterator (``contextlib.closing``, or a
        ``for`` loop over the call itself, which drops it on ``break``): that ends the backend's
        call (the embedded model is held for the whole stream) and stores nothing in the cache.
        A failure is raised from the iteration as a :class:`ModelError` subclass."""
        request = self._request(messages, None, max_tokens, temperature, stop, end_after)
        return self._stream_shared(request)

    def _stream_shared(self, request: Request) -> Iterator[str]:
        key = self._cache_key(request) if self.cache is not None else ""
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            done = _from_record(hit, self.model_id)
            if done is not None:
                self.tracker.record(self.model_id, done.usage, cached=True)
                if done.text:
                    yield done.text
                return
        started = time.perf_counter()
        pieces: list[str] = []
        backend = self._stream(request)
        while True:
            try:
                piece = next(backend)
            except StopIteration as end:
                finished = end.value if isinstance(end.value, Completion) else None
                break
            if not piece:
                continue
            pieces.append(piece)
            try:
                yield piece
            except BaseException:  # the consumer closed the stream (or threw into it) mid-way
                backend.close()  # ends the backend's call and releases what it holds
                # The call reached the model; its counts died with the backend: pieces ~ tokens.
                self.tracker.record(self.model_id, Usage(0, len(pieces)), cached=False, seconds=time.perf_counter() - started)
                raise  # nothing goes into the cache: the text is partial
        usage = finished.usage if finished is not None else Usage(0, len(pieces))
        reason = finished.finish_reason if finished is not None else "stop"
        done = Completion("".join(pieces), usage, False, self.model_id, reason)
        self.tracker.record(self.model_id, usage, cached=False, seconds=time.perf_counter() - started)
        if self.cache is not None:
            self.cache.put(key, _to_record(done))

    def _stream(self, request: Request) -> Generator[str, None, Completion | None]:
        """Run one completion on the model (no cache), yielding text pieces as they come, and
        return the finished :class:`Completion` (its usage and finish reason are what the tracker
        and the cache record; its text is ignored: the pieces are the text). Closed early, it must
        end the call and release what it holds. The default yields :meth:`_generate`'s text once."""
        done = self._generate(request)
        if done.text:
            yield done.text
        return done

    def complete_json(
        self,
        messages: Sequence[Message] | str,
        schema: Mapping[str, Any],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Any:
        """Completion constrained to ``schema``, parsed. Raises :class:`ModelOutputError` when the
        output is not JSON or misses the schema's top-level type or required keys."""
        msgs = _normalize(messages)
        if not self.supports_schema:
            msgs = _with_schema_instruction(msgs, self._bounded(schema))
        done = self.complete(msgs, schema=schema, max_tokens=max_tokens, temperature=temperature)
        value = parse_json(done.text, model=self.model_id, truncated=done.finish_reason == "length")
        check_shape(value, schema, model=self.model_id)
        return value

    def generate(self, prompt: str, *, system: str | None = None, **kwargs: Any) -> str:
        """Text for one prompt: the shortest way to use a model."""
        messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
        return self.complete(messages, **kwargs).text

    def yes_probability(self, messages: Sequence[Message] | str, *, max_tokens: int = 1) -> float:
        """How likely the model's next token answers "yes" rather than "no", in [0, 1]:
        P(yes) / (P(yes) + P(no)) over the first generated token, each side summed over its case
        and leading-space variants (" Yes", "yes", "YES", ...); 0.5 when neither is among the
        log-probabilities the backend returns. Always greedy (temperature 0); ``max_tokens`` is
        what the request asks for (only the first token is read). Cached like :meth:`complete`.
        Raises :class:`ModelError` (a subclass) when the model fails or cannot return logprobs."""
        request = self._request(messages, None, max_tokens, 0.0, None)
        key = stable_hash({"kind": "yes_probability", "v": _YES_NO_FORMAT, "request": self._cache_key(request)})
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            try:
                p, usage = float(hit["p_yes"]), Usage(int(hit["prompt_tokens"]), int(hit["completion_tokens"]))
            except (KeyError, TypeError, ValueError):
                pass  # an older record: a miss
            else:
                self.tracker.record(self.model_id, usage, cached=True)
                return p
        started = time.perf_counter()
        logprobs, usage = self._first_token_logprobs(request)
        self.tracker.record(self.model_id, usage, cached=False, seconds=time.perf_counter() - started)
        p = yes_share(logprobs)
        if self.cache is not None:
            self.cache.put(key, {"p_yes": p, "prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens})
        return p

    def _first_token_logprobs(self, request: Request) -> tuple[dict[str, float], Usage]:
        """The first generated token's candidates as text → natural-log probability (at least the
        top few; more is better), and the call's usage. No cache. Backends that can read
        log-probabilities override this."""
        raise ModelError(f"{type(self).__name__} ({self.model_id}) cannot return token log-probabilities")

    def _bounded(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        return bound_schema(schema, self.schema_max_items, self.schema_max_length)

    def _request(self, messages, schema, max_tokens, temperature, stop, end_after=None) -> Request:
        stops = (stop,) if isinstance(stop, str) else tuple(stop or ())
        return Request(
            messages=tuple((m["role"], m["content"]) for m in _normalize(messages)),
            max_tokens=self.max_tokens if max_tokens is None else max_tokens,
            temperature=self.temperature if temperature is None else temperature,
            stop=stops,
            schema=None if schema is None else self._bounded(schema),
            end_after=end_after if self.supports_end_after else None,
        )

    def _cache_key(self, request: Request) -> str:
        return stable_hash(
            {
                "v": _CACHE_FORMAT,
                "model": self.model_id,
                "backend": type(self).__name__,
                "schema_in_prompt": not self.supports_schema,
                "messages": request.messages,
                "max_tokens": request.max_tokens,
                "temperature": request.temperature,
                "stop": request.stop,
                "schema": request.schema,
                # only when set: the keys of every request without one stay as they were
                **({"end_after": request.end_after} if request.end_after is not None else {}),
            }
        )


_YES_NO_FORMAT = 1  # bump when yes_share or a backend's logprob recipe changes
YES_NO_TOP_LOGPROBS = 20  # top log-probabilities asked for (OpenAI's API allows at most 20)


def yes_no_word(token: str) -> str | None:
    """ "yes" or "no" when ``token`` is a case or space variant of one, else None."""
    word = token.strip().lower()
    return word if word in ("yes", "no") else None


def yes_share(logprobs: Mapping[str, float]) -> float:
    """P(yes) / (P(yes) + P(no)) from first-token log-probabilities (token text → ln p), each side
    summed over its variants; 0.5 when neither appears.

    >>> round(yes_share({" Yes": math.log(0.3), "yes": math.log(0.1), "No": math.log(0.2), "The": -1.0}), 3)
    0.667
    >>> yes_share({"The": -0.1})
    0.5
    """
    mass = {"yes": 0.0, "no": 0.0}
    for token, logprob in logprobs.items():
        word = yes_no_word(token)
        if word is not None and math.isfinite(logprob):
            mass[word] += math.exp(logprob)
    total = mass["yes"] + mass["no"]
    return mass["yes"] / total if total > 0 else 0.5


def _normalize(messages: Sequence[Message] | str) -> list[dict[str, str]]:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    out = []
    for m in messages:
        role, content = m.get("role"), m.get("content")
        if role not in _ROLES or not isinstance(content, str):
            raise ModelError(f"invalid chat message (role {role!r}); need role in {sorted(_ROLES)}")
        out.append({"role": role, "content": content})
    if not out:
        raise ModelError("no messages to complete")
    return out


def _with_schema_instruction(messages: list[dict[str, str]], schema: Mapping[str, Any]) -> list[dict[str, str]]:
    # For endpoints that cannot constrain output, the schema is the best instruction we can give.
    note = "Reply with one JSON value only, no prose, matching this JSON schema: " + json.dumps(schema)
    if messages[0]["role"] == "system":
        return [{"role": "system", "content": messages[0]["content"] + "\n\n" + note}, *messages[1:]]
    return [{"role": "system", "content": note}, *messages]


_FENCE = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.DOTALL)


def parse_json(text: str, *, model: str = "model", truncated: bool = False) -> Any:
    """Parse model output as JSON, accepting one surrounding Markdown code fence and raw line
    breaks inside strings (small models write them; ``strict=False``)."""
    candidates = [text.strip()]
    if (fenced := _FENCE.search(text)) is not None:
        candidates.append(fenced.group(1))
    for candidate in candidates:
        try:
            return json.loads(candidate, strict=False)
        except json.JSONDecodeError:
            continue
    why = " (output hit max_tokens)" if truncated else ""
    snippet = text.strip().replace("\n", " ")[:80]
    raise ModelOutputError(f"{model} returned malformed JSON{why}: {snippet!r}")


_JSON_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def check_shape(value: Any, schema: Mapping[str, Any], *, model: str = "model") -> None:
    """Check the top-level type and required keys: a cheap guard for endpoints without grammars."""
    kind = schema.get("type")
    if isinstance(kind, str) and kind in _JSON_TYPES and not isinstance(value, _JSON_TYPES[kind]):
        raise ModelOutputError(f"{model} returned JSON {type(value).__name__}, schema wants {kind}")
    if isinstance(value, dict):
        missing = [k for k in schema.get("required", ()) if k not in value]
        if missing:
            raise ModelOutputError(f"{model} returned JSON without required keys: {', '.join(missing)}")


def _to_record(done: Completion) -> dict[str, Any]:
    return {
        "text": done.text,
        "prompt_tokens": done.usage.prompt_tokens,
        "completion_tokens": done.usage.completion_tokens,
        "finish_reason": done.finish_reason,
    }


def _from_record(record: Mapping[str, Any], model: str) -> Completion | None:
    try:
        usage = Usage(int(record["prompt_tokens"]), int(record["completion_tokens"]))
        return Completion(str(record["text"]), usage, True, model, str(record["finish_reason"]))
    except (KeyError, TypeError, ValueError):
        return None  # a record from an older format is a miss
