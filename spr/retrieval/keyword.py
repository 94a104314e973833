"""BM25 over the retrieval units: the signal ``bm25`` of the fused stage, and alone the mode
``bm25``. Exact words matter in policy text — act numbers ("2024/1689"), defined terms, amounts —
where dense vectors blur; the index is built by the derived stage ``bm25``
(:mod:`kgpipeline.derived.bm25`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from spr.retrieval.fusion import Ranked
from store.layout import KBLayout

if TYPE_CHECKING:
    from store.keyword_index import KeywordIndex


class KeywordSignal:
    """Chunks by BM25 score of the question's words (scores are BM25's, not cosines); with
    ``expand``, also of the short form of each abbreviation the KB's texts define that the
    question spells out."""

    name = "bm25"

    def __init__(self, index: KeywordIndex | Callable[[], KeywordIndex], expand: bool = True):
        self._index = index  # or a loader: the index is read on first use
        self.expand = expand

    @property
    def index(self) -> KeywordIndex:
        if callable(self._index):
            self._index = self._index()
        return self._index

    def explain(self, question: str) -> str:
        """How BM25 read ``question`` beyond its words: the abbreviations it also searched for."""
        if not self.expand:
            return ""
        forms = self.index.abbreviations.expansions(question)
        return f"BM25 also searched for the documents' abbreviations: {', '.join(forms)}" if forms else ""

    def rank(self, question: str, depth: int) -> list[Ranked]:
        return [Ranked(h.id, h.score) for h in self.index.search(question, depth, expand=self.expand)]


def load_keyword_index(kb_dir: Path) -> KeywordIndex:
    from store.keyword_index import KeywordIndex

    return KeywordIndex.load(KBLayout(kb_dir).index("bm25"))
