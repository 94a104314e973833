"""Answering: the semantic parsing retriever, the question bank retriever, fusion and generation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from spr.records import Answer


def ask(question: str, kb: str | Path = "kb", **kwargs: Any) -> Answer:
    """Answer one question from the KB in ``kb`` (see :meth:`spr.qa.KnowledgeBase.ask` for the
    keywords: ``mode``, ``answer``, ``k``). Imports the answering machinery on first call only."""
    from spr.qa import ask as _ask

    return _ask(question, kb=kb, **kwargs)
