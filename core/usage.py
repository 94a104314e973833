"""Token accounting for model calls, per call and per run.

A :class:`UsageTracker` is created by whoever owns a run (the CLI, a pipeline, a test) and handed to
each model by constructor injection, so every stage can read the same counts; there is no global.

A tracker is shared by every thread that uses its models, so "totals after minus totals before"
mixes in the calls other threads made meanwhile. What one request caused is a
:class:`UsageScope`: while ``scope.active()`` is entered, every tracker also records into it, for
the calls made in that thread (a context variable, so a server thread sees only its own request).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class Usage:
    """Tokens of one LLM call (or a sum of calls). Counts are as reported by the backend."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )


@dataclass(frozen=True)
class CallRecord:
    """One LLM request: ``cached`` = answered from the response cache (no model call made)."""

    model: str
    usage: Usage
    cached: bool
    seconds: float


@dataclass(frozen=True)
class UsageTotals:
    """A snapshot of a tracker. Cached calls are counted apart: their tokens cost nothing."""

    calls: int = 0  # requests that reached a model
    cache_hits: int = 0  # requests answered from the cache
    usage: Usage = Usage()  # tokens actually processed by models
    saved: Usage = Usage()  # tokens the cache hits would have cost
    seconds: float = 0.0  # wall time spent in model calls (cache hits excluded)
    texts_embedded: int = 0  # texts an embedder actually encoded
    embed_cache_hits: int = 0  # texts whose vector came from the cache

    @property
    def requests(self) -> int:
        return self.calls + self.cache_hits


@dataclass
class UsageTracker:
    """Thread-safe running totals plus the per-call records of one run."""

    keep_records: bool = True
    _totals: UsageTotals = field(default_factory=UsageTotals, init=False)
    _records: list[CallRecord] = field(default_factory=list, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def record(self, model: str, usage: Usage, *, cached: bool, seconds: float = 0.0) -> None:
        with self._lock:
            self._totals = _add_call(self._totals, usage, cached, seconds)
            if self.keep_records:
                self._records.append(CallRecord(model, usage, cached, seconds))
        for scope in _ACTIVE.get():
            scope.record(usage, cached=cached, seconds=seconds)

    def record_embeddings(self, *, computed: int, cached: int) -> None:
        with self._lock:
            self._totals = _add_embeddings(self._totals, computed, cached)
        for scope in _ACTIVE.get():
            scope.record_embeddings(computed=computed, cached=cached)

    @property
    def totals(self) -> UsageTotals:
        with self._lock:
            return self._totals

    @property
    def records(self) -> tuple[CallRecord, ...]:
        with self._lock:
            return tuple(self._records)

    def summary(self) -> str:
        """One line for run summaries, e.g. ``LLM: 3 calls, 420 prompt + 96 completion tokens ...``."""
        t = self.totals
        line = (
            f"LLM: {t.calls} calls, {t.usage.prompt_tokens:,} prompt + "
            f"{t.usage.completion_tokens:,} completion tokens in {t.seconds:.1f}s; "
            f"{t.cache_hits} cache hits (saved {t.saved.total_tokens:,} tokens)"
        )
        if t.texts_embedded or t.embed_cache_hits:
            line += f"; embeddings: {t.texts_embedded} computed, {t.embed_cache_hits} cached"
        return line


class UsageScope:
    """The model use of one unit of work (one question), whatever trackers its calls went to.

    Enter :meth:`active` around each stretch of the work (it may be entered again later, e.g. for
    every step of a stream); calls made meanwhile *in this thread* (or in a context copied from
    it) are added here. Scopes nest: an outer one sees its inner ones' calls too."""

    def __init__(self) -> None:
        self._totals = UsageTotals()
        self._lock = threading.Lock()  # a copied context may record from another thread

    @contextmanager
    def active(self) -> Iterator[UsageScope]:
        token = _ACTIVE.set((*_ACTIVE.get(), self))
        try:
            yield self
        finally:
            _ACTIVE.reset(token)

    def record(self, usage: Usage, *, cached: bool, seconds: float = 0.0) -> None:
        with self._lock:
            self._totals = _add_call(self._totals, usage, cached, seconds)

    def record_embeddings(self, *, computed: int, cached: int) -> None:
        with self._lock:
            self._totals = _add_embeddings(self._totals, computed, cached)

    @property
    def totals(self) -> UsageTotals:
        with self._lock:
            return self._totals


# The scopes active in this context, innermost last. A tuple, never mutated: set() a new one.
_ACTIVE: ContextVar[tuple[UsageScope, ...]] = ContextVar("policykb_usage_scopes", default=())


def _add_call(t: UsageTotals, usage: Usage, cached: bool, seconds: float) -> UsageTotals:
    if cached:
        return replace(t, cache_hits=t.cache_hits + 1, saved=t.saved + usage)
    return replace(t, calls=t.calls + 1, usage=t.usage + usage, seconds=t.seconds + seconds)


def _add_embeddings(t: UsageTotals, computed: int, cached: int) -> UsageTotals:
    return replace(t, texts_embedded=t.texts_embedded + computed, embed_cache_hits=t.embed_cache_hits + cached)
