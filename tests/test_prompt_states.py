"""The embedded model keeps its states after its last prompts ([llm] prompt_cache_mb), so two
prompts that take turns — the model's check and an LLM answer — each find their own head again.

The cache's bookkeeping is checked on small state records; the behaviour on the real llama.cpp
context of the tiny SmolLM2 model: the same outputs as without the cache, from kept states.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from core.config import LLMConfig
from core.llm import SMOLLM2, LlamaCppLLM, make_llm
from core.llm.prompt_states import MIN_SHARED, PromptStates, state_bytes


@dataclass
class _State:  # the fields of llama_cpp.LlamaState that the cache reads
    llama_state_size: int
    scores: np.ndarray
    input_ids: np.ndarray


def _state(kv_bytes: int) -> _State:
    return _State(kv_bytes, np.zeros((2, 4), dtype=np.float32), np.zeros(4, dtype=np.intc))


def test_the_state_sharing_the_longest_head_is_returned():
    cache = PromptStates(1 << 20)
    head = list(range(MIN_SHARED))
    short, long = _state(10), _state(10)
    cache[head + [100]] = short
    cache[head + [200, 201, 202]] = long
    assert cache[head + [200, 201, 7]] is long
    assert cache[head + [100, 5]] is short
    assert cache.hits == 2


def test_a_head_shorter_than_the_minimum_is_a_miss():
    cache = PromptStates(1 << 20)
    cache[list(range(MIN_SHARED + 5))] = _state(10)
    assert list(range(MIN_SHARED - 1)) + [999] not in cache
    with pytest.raises(KeyError):
        cache[list(range(MIN_SHARED - 1)) + [999]]
    assert cache  # an empty or missing cache must still read as present to llama-cpp-python
    assert PromptStates(1)


def test_the_least_recently_used_states_leave_first_within_the_memory_bound():
    one = state_bytes(_state(1000))
    cache = PromptStates(2 * one)
    a, b, c = ([i] * MIN_SHARED for i in (1, 2, 3))
    cache[a], cache[b] = _state(1000), _state(1000)
    _ = cache[a]  # a used again: b is now the oldest
    cache[c] = _state(1000)
    assert len(cache) == 2 and a in cache and c in cache and b not in cache
    assert cache.nbytes <= cache.max_bytes
    cache[[9] * MIN_SHARED] = _state(10 * one)  # larger than the bound on its own: nothing is kept
    assert len(cache) == 0


def _turns() -> list[tuple[str, int]]:
    """Two prompts with long heads of their own, taking turns, as the check and an answer do."""
    check = "Read the text and the question. If the text contains the answer, answer yes; if not, answer no. " * 3
    answer = "You answer questions about policy documents using only the numbered evidence you are given. " * 3
    turns = []
    for q in ("Who signs the act?", "When does it apply?", "Which body checks it?"):
        turns += [
            (f"{check}\nText: The Council signs.\nQuestion: {q}", 4),
            (f"{answer}\nEvidence: [1] The Council signs.\nQuestion: {q}", 6),
        ]
    return turns


def test_prompts_taking_turns_are_read_from_kept_states_with_the_same_outputs():
    kept = LlamaCppLLM(SMOLLM2, cache=False, prompt_cache_mb=64)
    outputs = [kept.complete(prompt, max_tokens=n).text for prompt, n in _turns()]
    # each prompt read whole by a model with no state yet, loaded the same way
    afresh = [LlamaCppLLM(SMOLLM2, cache=False, prompt_cache_mb=64).complete(prompt, max_tokens=n).text for prompt, n in _turns()]
    assert outputs == afresh
    states = kept.llama.cache
    assert isinstance(states, PromptStates)
    assert states.hits >= 4  # every prompt after the first of its kind found its head
    assert 0 < states.nbytes <= 64 << 20
    assert LlamaCppLLM(SMOLLM2, cache=False, prompt_cache_mb=0).llama.cache is None


def test_the_config_sets_the_memory_and_zero_keeps_only_the_last_state():
    llm = make_llm(LLMConfig(model_path=SMOLLM2, prompt_cache_mb=8), None)
    assert isinstance(llm, LlamaCppLLM) and llm.llama.cache.max_bytes == 8 << 20
    assert make_llm(LLMConfig(model_path=SMOLLM2, prompt_cache_mb=0), None).llama.cache is None
