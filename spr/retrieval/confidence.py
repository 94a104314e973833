"""How sure the structured retriever is of the facts it returns, in [0, 1].

A fact is only as good as the weakest link of the chain that found it: the parse (its rank score),
every linked entity (cosine of question phrase and surface form; the disambiguation weight only
ranks homonyms, so it is not part of the confidence), and every relation (cosine of the parsed
relation label and the property's labels). The confidence is the product of the parse score
and the weakest entity and relation similarities (each clipped to [0, 1]). ``dual`` admits facts
at or above ``[retrieval] facts_min_confidence``, a threshold chosen on visible data
(``bench/calibrate_facts.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spr.retrieval.semantic_parsing import SPRResult


def _clip(x: float) -> float:
    return max(0.0, min(1.0, float(x)))


def fact_confidence(result: SPRResult) -> float:
    """The confidence of ``result``'s facts; 0 when it found none.

    >>> from spr.retrieval.semantic_parsing import SPRResult
    >>> fact_confidence(SPRResult("q", "rules", ()))
    0.0
    """
    if not result.found:
        return 0.0
    weakest_entity = min((_clip(e.similarity) for e in result.entities), default=1.0)
    weakest_relation = min((_clip(r.similarity) for r in result.relations), default=1.0)
    return round(_clip(result.parse_score) * weakest_entity * weakest_relation, 6)
