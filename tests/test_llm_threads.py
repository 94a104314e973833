"""Threads of the embedded model: one count generates, another reads the prompt.

Generation meets at a barrier per token, so it gets half the CPUs by default; reading the prompt
gets all of them (docs/answers.md "Speed and the thread count"). Checked on the loaded llama.cpp context
itself, with the tiny SmolLM2 model.
"""

from __future__ import annotations

import os

from core.config import LLMConfig
from core.llm import SMOLLM2, LlamaCppLLM, make_llm


def test_the_prompt_is_read_by_every_cpu_and_generation_by_half_of_them():
    llm = LlamaCppLLM(SMOLLM2, cache=False)
    cpus = os.cpu_count() or 1
    assert (llm.threads, llm.batch_threads) == (max(1, cpus // 2), cpus)
    params = llm.llama.context_params
    assert (params.n_threads, params.n_threads_batch) == (llm.threads, llm.batch_threads)
    assert llm.complete("Say OK.", max_tokens=2).text is not None


def test_the_config_sets_both_counts():
    llm = make_llm(LLMConfig(model_path=SMOLLM2, threads=1, batch_threads=1), None)
    assert isinstance(llm, LlamaCppLLM)
    params = llm.llama.context_params
    assert (params.n_threads, params.n_threads_batch) == (1, 1)
