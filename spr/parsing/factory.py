"""Which semantic parser a KB gets: the LoRA parser when its adapter is there, else the rules."""

from __future__ import annotations

from pathlib import Path

from spr.parsing.candidate import SemanticParser
from spr.parsing.lora import LoRAParser
from spr.parsing.rules import RuleParser
from store.layout import KBLayout


def load_parser(kind: str, kb_dir: Path, properties, beams: int, max_new_tokens: int) -> SemanticParser:
    """The configured parser: 'lora' (adapter required), 'rules', or 'auto' (LoRA when an
    adapter was trained for this KB, else the rules)."""
    adapter = KBLayout(kb_dir).parser
    if kind == "lora" or (kind == "auto" and (adapter / "adapter_config.json").is_file()):
        labels = sorted({text for term in properties.values() for text in term.texts})
        return LoRAParser(adapter, beams, max_new_tokens, labels=labels)
    return RuleParser(properties)
