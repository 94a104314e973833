"""Shared fixtures. The autouse fixture isolates every test from the user's KB and env."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def isolated_kb(tmp_path, monkeypatch):
    """Run each test in its own working directory with no POLICYKB_* overrides."""
    import os

    for key in list(os.environ):
        if key.startswith("POLICYKB_"):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    return tmp_path / "kb"
