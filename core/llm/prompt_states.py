"""The embedded model's states after its last few prompts ([llm] prompt_cache_mb), so that a
prompt beginning like one of them is read from where they part.

llama.cpp keeps one state, the last prompt's, and re-reads whatever a new prompt does not share
with it. An LLM answer alternates two prompts — the model's check (its instruction first) and the
reply (its system prompt first) — so each re-read the other's ~70-token head every question, ~1.5 s
on two AVX2 cores. Kept here, each finds its own head again (docs/answers.md#prompt-states).

llama-cpp-python asks ``Llama.cache`` for the state with the longest common prefix before a
completion and stores the new state after it; this is that cache, bounded by what the states
really hold in memory (their KV cells and the copy of the logits buffer each carries), least
recently used out first. Duck-typed to llama-cpp-python's ``BaseLlamaCache`` so that importing it
does not import llama.cpp.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

MIN_SHARED = 16  # tokens: a shorter common head (the chat template's first tokens) is not worth a state copy


def state_bytes(state: Any) -> int:
    """Memory a ``llama_cpp.LlamaState`` holds: llama.cpp's state (the KV cells) and its copies
    of the logits buffer and the token ids."""
    return int(state.llama_state_size) + int(state.scores.nbytes) + int(state.input_ids.nbytes)


class PromptStates:
    """Up to ``max_bytes`` of model states, keyed by the tokens that made them."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._states: OrderedDict[tuple[int, ...], Any] = OrderedDict()
        self.hits = 0  # lookups that found a state (llama-cpp-python loads it where it shares more than the current one)

    def __bool__(self) -> bool:  # llama-cpp-python tests ``if self.cache:``; an empty one must count
        return True

    def _best(self, tokens: Sequence[int]) -> tuple[int, ...] | None:
        from llama_cpp import Llama  # loaded already: only a loaded model asks its cache

        best, shared = None, MIN_SHARED - 1
        for key in self._states:
            if (n := Llama.longest_token_prefix(key, tokens)) > shared:
                best, shared = key, n
        return best

    def __contains__(self, tokens: Sequence[int]) -> bool:
        return self._best(tokens) is not None

    def __getitem__(self, tokens: Sequence[int]) -> Any:
        key = self._best(tokens)
        if key is None:
            raise KeyError("no state shares the prompt's head")
        self._states.move_to_end(key)
        self.hits += 1
        return self._states[key]

    def __setitem__(self, tokens: Sequence[int], state: Any) -> None:
        key = tuple(int(t) for t in tokens)
        self._states.pop(key, None)
        self._states[key] = state
        while self._states and self.nbytes > self.max_bytes:
            self._states.popitem(last=False)

    @property
    def nbytes(self) -> int:
        return sum(state_bytes(s) for s in self._states.values())

    def __len__(self) -> int:
        return len(self._states)
