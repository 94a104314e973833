"""Entity linking: an S-expression label → ranked KB entities (similarity × disambiguation weight).

The label is embedded and searched in the entity index (``store.entity_labels``: one vector per
normalized surface form). Every hit is a *known* surface form ``s`` with cosine similarity ``sim``;
each entity ``e`` that ``s`` may denote gets

    score(e) = max(sim, 0) · w(s, e)

and an entity reached through several forms keeps its best score. So when the label is not itself
a known form ("the national energy bureau"), the weight used is that of the nearest known form(s)
FAISS returns — the form the label most likely is.

``w(s, e)`` (:func:`surface_weights`) is the fused weight w_f · w_i of the weights stage for (s, e).
Entities that ``s`` may denote but the weights never saw as its sense get the smallest weight on
record for ``s`` (never observed ≠ impossible); forms without any record (or no weights stage yet)
give 1.0. With ``relative`` (the default), weights are divided by the best weight of the same form:
the weight then only arbitrates between homonyms, and an exact unique match is never beaten by a
fuzzy match to a more central entity merely because its own centrality is low.

Case is evidence the casefolded key throws away: when exactly one of a form's entities is named
with the label's own casing ("BELIEVE" the album vs "Believe" the song), that entity is not
arbitrated down by the weights (:func:`case_exact`). Homonyms spelled identically ("Energy
Bureau" of two countries) are still told apart by the weights alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from core.config import SPRConfig
from core.embed import Embedder
from store.disambiguation import LinkWeight, links_by_surface, normalize_surface
from store.entity_labels import INDEX_NAME, EntityLabels, load_entity_index
from store.layout import KBLayout
from store.vectors import VectorIndex


@dataclass(frozen=True)
class EntityCandidate:
    """A KB entity for a label. ``similarity``: cosine of label and ``surface`` in [-1, 1];
    ``weight``: disambiguation weight in [0, 1] (1.0 without weights); ``score`` =
    max(similarity, 0) · weight, in [0, 1], higher is better."""

    label: str
    entity: str
    name: str
    surface: str
    similarity: float
    weight: float
    score: float


def combine(similarity: float, weight: float) -> float:
    """The linking score. Negative cosines count as no evidence, not as inverted evidence."""
    return max(similarity, 0.0) * weight


def surface_weights(
    entities: Sequence[str], links: Sequence[LinkWeight], relative: bool = True
) -> dict[str, float]:
    """w(s, e) for every entity a surface form may denote, given that form's weight records."""
    if not links:
        return {e: 1.0 for e in entities}
    recorded = {w.entity: w.fused for w in links}
    floor = min(recorded.values())
    raw = {e: recorded.get(e, floor) for e in entities}
    for entity, fused in recorded.items():
        raw.setdefault(entity, fused)
    if not relative:
        return raw
    best = max(raw.values())
    return {e: (v / best if best > 0 else 1.0) for e, v in raw.items()}


def case_exact(label: str, entities: Sequence[str], names: Mapping[str, str]) -> str | None:
    """The one entity among ``entities`` whose name is ``label`` with the same casing (whitespace
    collapsed), or None when none or several are.

    >>> case_exact("BELIEVE", ["e:album", "e:song"], {"e:album": "BELIEVE", "e:song": "Believe"})
    'e:album'
    >>> case_exact("Energy Bureau", ["e:a", "e:b"], {"e:a": "Energy Bureau", "e:b": "Energy Bureau"}) is None
    True
    """
    wanted = " ".join(label.split())
    exact = [e for e in entities if " ".join(names.get(e, "").split()) == wanted]
    return exact[0] if len(exact) == 1 else None


def rank_candidates(
    label: str,
    hits: Sequence[tuple[str, float]],
    labels: EntityLabels,
    links: Mapping[str, Sequence[LinkWeight]],
    top_k: int,
    use_weights: bool = True,
    relative: bool = True,
) -> list[EntityCandidate]:
    """Pure ranking: (surface form, similarity) hits → top-k entities, best first."""
    best: dict[str, EntityCandidate] = {}
    for surface, similarity in hits:
        entities = labels.surfaces.get(surface, ())
        weights = surface_weights(entities, links.get(surface, ()) if use_weights else (), relative)
        exact = case_exact(label, list(weights), labels.names) if len(weights) > 1 else None
        if exact is not None:
            weights[exact] = max(weights.values())
        for entity, weight in weights.items():
            candidate = EntityCandidate(
                label=label,
                entity=entity,
                name=labels.names.get(entity, surface),
                surface=surface,
                similarity=round(float(similarity), 6),
                weight=round(float(weight), 6),
                score=round(combine(similarity, weight), 6),
            )
            kept = best.get(entity)
            if kept is None or (candidate.score, candidate.similarity) > (kept.score, kept.similarity):
                best[entity] = candidate
    ranked = sorted(best.values(), key=lambda c: (-c.score, -c.similarity, c.entity))
    return ranked[:top_k]


@dataclass(frozen=True)
class LinkOptions:
    """How labels are linked; the values come from ``[spr]`` (:meth:`from_config`).

    ``top_k``: candidates kept per label (k1); ``search_k``: surface forms fetched from FAISS per
    label; ``use_weights``: multiply similarity by the disambiguation weight; ``relative``: divide
    weights by the best weight of the same surface form (only homonyms compete)."""

    top_k: int
    search_k: int
    use_weights: bool
    relative: bool

    @classmethod
    def from_config(cls, config: SPRConfig) -> LinkOptions:
        return cls(config.entity_top_k, config.surface_search_k, config.use_weights, config.relative_weights)


class EntityLinker:
    """Links labels against a loaded entity index. Weights are read once, at construction."""

    def __init__(
        self, index: VectorIndex, labels: EntityLabels, embedder: Embedder, weights: Sequence[LinkWeight], options: LinkOptions
    ):
        self.index = index
        self.labels = labels
        self.embedder = embedder
        self.links = links_by_surface(list(weights))
        self.top_k = options.top_k
        self.search_k = options.search_k
        self.use_weights = options.use_weights
        self.relative = options.relative

    @classmethod
    def from_kb(cls, kb_dir: Path, embedder: Embedder, weights: Sequence[LinkWeight], options: LinkOptions) -> EntityLinker:
        index, labels = load_entity_index(KBLayout(kb_dir).index(INDEX_NAME))
        return cls(index, labels, embedder, weights, options)

    @property
    def has_weights(self) -> bool:
        return bool(self.links)

    def link(self, label: str, wide: int = 0) -> list[EntityCandidate]:
        """Top-k entity candidates for a label, best first (empty for an empty index); with
        ``wide``, the top ``wide`` instead (relation-constrained linking filters those)."""
        text = normalize_surface(label)
        if not text or not len(self.index):
            return []
        hits = self.index.search(self.embedder.embed(text), max(self.search_k, wide))[0]
        pairs = [(h.id, h.score) for h in hits]
        # An exact form always competes, even when FAISS ranks near-duplicates above it.
        if text in self.labels.surfaces and text not in {s for s, _ in pairs}:
            pairs.append((text, 1.0))
        return rank_candidates(label, pairs, self.labels, self.links, wide or self.top_k, self.use_weights, self.relative)
