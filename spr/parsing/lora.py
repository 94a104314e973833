"""Semantic parsers: question → ranked labelled S-expressions.

Two implementations share :class:`SemanticParser`: the rule-based :class:`spr.parsing.rules.RuleParser`
(no model) and :class:`LoRAParser`, SmolLM2-135M (:mod:`spr.parsing.base_model`) with a PEFT LoRA adapter trained by :mod:`spr.parsing.train` and saved in
``<kb>/parser/``. The LoRA parser decodes with beam search and returns the beams that parse as
S-expressions, best first; the retriever walks them in that order. With one beam it decodes
greedily with draft-and-verify (:mod:`spr.parsing.decode`), the fast path on a CPU.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from core.cpu import resolve_dtype, use_torch_threads
from core.errors import ModelError, ModelNotFoundError
from spr.parsing.base_model import load_base
from spr.parsing.candidate import ParseCandidate, parse_outputs
from spr.parsing.grammar import decoding_ends, expression_closed, forced_closing

META_FILE = "policykb-parser.json"
TARGETS_FILE = "policykb-parser-targets.txt"  # training S-expressions: the fast decoder's drafts
PROMPT_VERSION = 1


def prompt(question: str) -> str:
    """The text the model continues with an S-expression (training and inference alike)."""
    return f"Question: {' '.join(question.split())}\nS-expression:"


class LoRAParser:
    """SmolLM2 + LoRA adapter. The model loads on first use; ``parse`` is thread-safe."""

    name = "lora"

    def __init__(
        self, adapter_dir: Path, beams: int, max_new_tokens: int, gguf_path: Path | None = None, model: Any = None,
        tokenizer: Any = None, labels: Sequence[str] = (), dtype: str = "float32", int8_rows: int = 0,
    ):
        self.adapter_dir = Path(adapter_dir)
        if model is None and not (self.adapter_dir / "adapter_config.json").is_file():
            raise ModelNotFoundError(f"no parser adapter in {self.adapter_dir}; run `policykb train-parser`")
        self.beams = beams
        self.max_new_tokens = max_new_tokens
        self.gguf_path = gguf_path
        self._model, self._tokenizer = model, tokenizer
        self._drafter: Any = None
        self._label_tokens: set[int] | None = None
        self.labels = tuple(labels)  # the KB's relation labels: their tokens stay emittable
        self.dtype = resolve_dtype(dtype)  # of decoding; training is always float32
        self.int8_rows = int8_rows  # bfloat16 passes of at most this many tokens use int8 weight copies (0 = none)
        # Greedy decoding's shortcuts that leave its output as it is; off only to measure them (bench/bench_parse.py).
        self.draft_labels = True  # draft the rest of a relation label the KB's labels complete one way
        self.close_by_grammar = True  # write the closing brackets the grammar forces instead of decoding them
        self._lock = threading.Lock()

    @property
    def decoder_name(self) -> str:
        return "greedy, draft-and-verify" if self.beams == 1 else f"beam search, {self.beams} beams"

    def _load(self) -> tuple[Any, Any]:
        if self._model is None:
            from peft import PeftModel

            base, tokenizer = load_base(self.gguf_path)
            try:
                model = PeftModel.from_pretrained(base, str(self.adapter_dir))
            except (OSError, ValueError) as exc:
                raise ModelError(f"cannot load parser adapter {self.adapter_dir}: {exc}") from exc
            # Folding the adapter into the base weights removes the LoRA detour from every step.
            model = model.merge_and_unload()
            if self.dtype != "float32":
                import torch

                # Half the bytes read per step, and bfloat16 matrix units where the CPU has them.
                model = model.to(getattr(torch, self.dtype))
            if self.int8_rows > 0 and self.dtype == "bfloat16":
                # bfloat16 only: with float32 activations PyTorch's int8 kernel made parses 1.5x
                # slower (docs/structured.md "Int8 copies for the narrow passes").
                from spr.parsing.int8 import add_int8_copies

                add_int8_copies(model, self.int8_rows)  # narrow passes read half the bytes
            model.eval()
            self._model, self._tokenizer = model, tokenizer
        return self._model, self._tokenizer

    def drafter(self) -> Any:
        from spr.parsing.decode import LabelDrafter, NgramDrafter

        if self._drafter is None:
            _, tok = self._load()
            path = self.adapter_dir / TARGETS_FILE
            targets = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []

            def ids(text: str) -> list[int]:
                return tok(text, add_special_tokens=False)["input_ids"]

            labels = None
            if self.labels and self.draft_labels:
                labels = LabelDrafter(
                    (ids(" " + label) for label in self.labels), lambda t: tok.decode(t, skip_special_tokens=True),
                    close_reversed=ids(" ])"), close=ids(" ]"),
                )
            self._drafter = NgramDrafter((ids(" " + t) + [tok.eos_token_id] for t in targets if t.strip()), labels=labels)
        return self._drafter

    def parse(self, question: str) -> list[ParseCandidate]:
        if self.beams > 1:
            return self.parse_many([question], self.beams)[0]
        out = self.decode(question)
        return parse_outputs([self._load()[1].decode(out.tokens, skip_special_tokens=True)], [out.mean_prob])

    def decode(self, question: str) -> Any:
        """Greedy draft-and-verify decoding of one question: the tokens, their log-probability and
        the forward passes it took (:class:`spr.parsing.decode.Decoded`)."""
        from spr.parsing.decode import Decoded, greedy_draft_verify

        with self._lock:
            model, tok = self._load()
            drafter = self.drafter()
            use_torch_threads(wide=False)  # passes of 1-12 tokens: half the threads (core/cpu.py)
            ids = tok(prompt(question), add_special_tokens=False)["input_ids"]

            def stop(generated: list[int]) -> bool:
                return decoding_ends(tok.decode(generated, skip_special_tokens=True), self.close_by_grammar)

            # Outputs are restricted to tokens of the training targets, the KB's relation labels and
            # the question (labels are copied from it); without recorded targets all tokens are scored.
            if self._label_tokens is None:
                self._label_tokens = {t for label in self.labels for t in tok(" " + label, add_special_tokens=False)["input_ids"]}
            vocab = (drafter.vocab | self._label_tokens | set(ids) | {tok.eos_token_id}) if drafter.vocab else None
            out = greedy_draft_verify(model, ids, drafter, self.max_new_tokens, stop, tok.eos_token_id, vocab)
            # Brackets the grammar allows nothing else in place of are written, not decoded (a pass saved).
            closing = forced_closing(tok.decode(out.tokens, skip_special_tokens=True)) if self.close_by_grammar else None
            if closing:
                out = Decoded(out.tokens + tok(closing, add_special_tokens=False)["input_ids"], out.logprob, out.forward_passes)
            return out

    def parse_many(self, questions: Sequence[str], beams: int | None = None, batch_size: int = 16) -> list[list[ParseCandidate]]:
        """Valid candidates per question, best first."""
        return [parse_outputs([t for t, _ in out], [s for _, s in out]) for out in self.generate(questions, beams, batch_size)]

    def generate(self, questions: Sequence[str], beams: int | None = None, batch_size: int = 16) -> list[list[tuple[str, float]]]:
        """Raw beams per question: (decoded text, sequence probability), best first. Questions are
        decoded in left-padded batches."""
        import torch

        beams = beams or self.beams
        with self._lock:
            model, tok = self._load()
            use_torch_threads(wide=True)  # batches of questions, beams: all threads
            tok.padding_side = "left"
            results: list[list[tuple[str, float]]] = []
            for start in range(0, len(questions), batch_size):
                part = [prompt(q) for q in questions[start : start + batch_size]]
                enc = tok(part, return_tensors="pt", padding=True).to(model.device)
                search = {"num_beams": beams, "num_return_sequences": beams, "early_stopping": True} if beams > 1 else {}
                stop = _closed_expression(tok, enc["input_ids"].shape[1])
                with torch.no_grad():
                    gen = model.generate(
                        **enc, max_new_tokens=self.max_new_tokens, do_sample=False, output_scores=True,
                        return_dict_in_generate=True, pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
                        stopping_criteria=[stop], **search,
                    )
                texts = tok.batch_decode(gen.sequences[:, enc["input_ids"].shape[1] :], skip_special_tokens=True)
                # Beam scores are length-normalized log-probabilities; greedy output has one beam.
                raw = gen.sequences_scores.tolist() if beams > 1 else [0.0] * len(texts)
                for i in range(len(part)):
                    chunk = slice(i * beams, (i + 1) * beams)
                    results.append([(text, math.exp(score)) for text, score in zip(texts[chunk], raw[chunk])])
            return results


def _closed_expression(tokenizer: Any, prompt_len: int):
    """Stop a sequence once its output holds a complete parenthesized expression or a newline: an
    under-trained adapter may not emit end-of-sequence, and decoding on to the token limit is the
    slowest part of parsing on a CPU."""
    import torch
    from transformers import StoppingCriteria

    class Closed(StoppingCriteria):
        def __call__(self, input_ids, scores, **kwargs):
            done = [expression_closed(tokenizer.decode(row[prompt_len:], skip_special_tokens=True)) for row in input_ids]
            return torch.tensor(done, dtype=torch.bool, device=input_ids.device)

    return Closed()


def adapter_meta(adapter_dir: Path) -> Mapping[str, Any]:
    """What training recorded beside the adapter (steps, dev exact match, ...); {} when absent."""
    path = Path(adapter_dir) / META_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
