"""Which semantic parser a KB gets: the LoRA parser when its adapter is there, else the rules."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from spr.grounding.sexpr import to_text
from spr.parsing.candidate import ParseCandidate, SemanticParser, first_of_each
from spr.parsing.lora import LoRAParser
from spr.parsing.policy_forms import policy_parse
from spr.parsing.rules import RuleParser
from store.layout import KBLayout


class ShapesFirst:
    """The policy-fact shapes (:mod:`spr.parsing.policy_forms`) before a learned parser's beams.

    A shape is a deterministic reading of a question ("By when must …", "What does 'X' mean …")
    that is right whenever it fires; the adapter, trained on a KB's synthesized questions, covers
    what no shape reads. The retriever walks the candidates in order, so a shape that grounds to
    no answer costs only its query and the model's parse follows."""

    def __init__(self, model: SemanticParser):
        self.model = model
        self.name = model.name

    def parse(self, question: str) -> list[ParseCandidate]:
        return first_of_each([*self.shapes(question), *self.model.parse(question)])

    def shapes(self, question: str) -> list[ParseCandidate]:
        return first_of_each([ParseCandidate(e, to_text(e), 1.0) for e in policy_parse(question)])


def parse_stages(parser: SemanticParser, question: str) -> Iterator[list[ParseCandidate]]:
    """A parser's candidates in stages, cheapest first, for a caller that stops at the first that
    answers: for :class:`ShapesFirst` the shapes (well under a millisecond), then the model's
    beams (hundreds of milliseconds to seconds on a CPU) only if asked for; any other parser's
    candidates in one stage. The stages' concatenation is ``parser.parse(question)``."""
    if isinstance(parser, ShapesFirst):
        shapes = parser.shapes(question)
        yield shapes
        seen = {c.text for c in shapes}
        yield [c for c in parser.model.parse(question) if c.text not in seen]
        return
    yield parser.parse(question)


def load_parser(
    kind: str, kb_dir: Path, properties, beams: int, max_new_tokens: int, shapes_first: bool = True, dtype: str = "float32",
    int8_rows: int = 0,
) -> SemanticParser:
    """The configured parser: 'lora' (adapter required), 'rules', or 'auto' (LoRA when an
    adapter was trained for this KB, else the rules). With ``shapes_first``, a LoRA parser is
    preceded by the policy-fact shapes, as the rule parser is. ``dtype``, ``int8_rows``: ``[spr] parser_dtype``,
    ``parser_int8_rows``."""
    adapter = KBLayout(kb_dir).parser
    if kind == "lora" or (kind == "auto" and (adapter / "adapter_config.json").is_file()):
        labels = sorted({text for term in properties.values() for text in term.texts})
        lora = LoRAParser(adapter, beams, max_new_tokens, labels=labels, dtype=dtype, int8_rows=int8_rows)
        return ShapesFirst(lora) if shapes_first else lora
    return RuleParser(properties)
