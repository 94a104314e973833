"""What every semantic parser returns and the one method it implements."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from core.errors import InputError
from spr.grounding.sexpr import Expr, to_text
from spr.grounding.sexpr_reader import parse


@dataclass(frozen=True)
class ParseCandidate:
    """A parser output: the S-expression (labels), its canonical text, and a rank score in [0, 1]
    (for the LoRA parser the beam's sequence probability; the rule parser gives 1.0 then 0.5)."""

    expr: Expr
    text: str
    score: float


class SemanticParser(Protocol):
    name: str

    def parse(self, question: str) -> list[ParseCandidate]:
        """Ranked candidates, best first; empty when the question is not understood."""
        ...


def first_of_each(candidates: Sequence[ParseCandidate]) -> list[ParseCandidate]:
    """``candidates`` without repeats of a text, each kept where (and with the score) it first
    occurs: a shape's reading keeps its 1.0 when a learned parser repeats it with less."""
    out: dict[str, ParseCandidate] = {}
    for c in candidates:
        out.setdefault(c.text, c)
    return list(out.values())


def parse_outputs(texts: Sequence[str], scores: Sequence[float]) -> list[ParseCandidate]:
    """Decoded beams → valid, de-duplicated candidates, best first (invalid ones are dropped)."""
    out: dict[str, ParseCandidate] = {}
    for text, score in sorted(zip(texts, scores), key=lambda x: -x[1]):
        line = text.strip().split("\n")[0].strip()
        try:
            expr = parse(line)
        except InputError:
            continue
        canonical = to_text(expr)
        out.setdefault(canonical, ParseCandidate(expr, canonical, round(float(score), 6)))
    return list(out.values())
