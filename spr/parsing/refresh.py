"""Keep a KB's LoRA parser in step with the KB: train when the KB changed, within a time budget,
resumably (``policykb reindex parser``; after ``ingest`` with ``[spr] train_on_ingest``).

The training data is synthesized from the KB (:mod:`spr.parsing.synth`: relation questions and
the policy-fact shapes); its fingerprint (the examples and the training settings) says whether the
adapter in ``<kb>/parser`` is current. A run trains in ``<kb>/parser.partial`` and stops at the
budget; the next run with the same fingerprint continues from there (same data order and schedule;
the optimizer restarts). Only a finished run replaces ``<kb>/parser`` (by renames, so a crash
leaves either the old adapter or the new one), and only then does the KB's ``auto`` parser change.
Training uses the GPU when torch sees one.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.config import SPRConfig
from store.base import RDFStore
from store.layout import KBLayout

STAMP = "policykb-refresh.json"


@dataclass(frozen=True)
class RefreshReport:
    status: str  # "up to date" | "trained" | "paused" (budget spent; the next run resumes)
    steps_done: int
    steps: int
    examples: int
    dev_exact_match: float  # -1 unless the run finished
    seconds: float

    def line(self) -> str:
        em = f", dev exact match {self.dev_exact_match:.1%}" if self.dev_exact_match >= 0 else ""
        return f"{self.status}: {self.steps_done}/{self.steps} steps on {self.examples} synthesized questions{em} ({self.seconds:.0f} s)"


def training_examples(store: RDFStore, config: SPRConfig, per_form: int = 2):
    """(train, dev) examples synthesized from the KB (relation questions + policy shapes)."""
    from spr.parsing.synth import read_dates, read_facts, read_policy_facts, split_dev, synthesize, synthesize_policy
    from store.vocabulary import read_terms

    examples = synthesize(read_facts(store), read_dates(store), read_terms(store, "property"), read_terms(store, "class"),
                          seed=config.seed, per_form=per_form)  # fmt: skip
    examples += synthesize_policy(read_policy_facts(store), seed=config.seed, per_form=per_form)
    return split_dev(list(dict.fromkeys(examples)), seed=config.seed)


def fingerprint(train, dev, config: SPRConfig, steps: int) -> str:
    settings = {k: getattr(config, k) for k in ("batch_size", "learning_rate", "lora_r", "lora_alpha", "max_seq_tokens", "seed")}
    payload = json.dumps([[e.question, e.sexpr] for e in [*train, *dev]] + [settings, steps], sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:24]


def refresh_parser(store: RDFStore, kb_dir: Path, config: SPRConfig, budget_s: float, steps: int | None = None,
                   progress: Callable[[int, int, float], None] | None = None, dev_limit: int = 50) -> RefreshReport:  # fmt: skip
    """Bring ``<kb>/parser`` up to date with the KB within ``budget_s`` seconds of training (at
    least one step runs, so every refresh makes progress); a finished run reports dev exact match
    on up to ``dev_limit`` held-out questions (0 = skip)."""
    import time

    from spr.parsing.train import train_parser

    started = time.perf_counter()
    steps = steps or config.train_steps
    train, dev = training_examples(store, config)
    if not train:
        return RefreshReport("up to date", 0, 0, 0, -1.0, time.perf_counter() - started)  # nothing to learn from
    key = fingerprint(train, dev, config, steps)
    final = KBLayout(kb_dir).parser
    partial = final.with_name(final.name + ".partial")
    done = _stamp(final)
    if done.get("fingerprint") == key and done.get("steps_done", 0) >= steps:
        return RefreshReport("up to date", steps, steps, len(train), done.get("dev_exact_match", -1.0), time.perf_counter() - started)
    part = _stamp(partial)
    resume = part.get("fingerprint") == key and (partial / "adapter_config.json").is_file()
    start = int(part.get("steps_done", 0)) if resume else 0
    work = partial.with_name(partial.name + ".tmp")
    shutil.rmtree(work, ignore_errors=True)
    budget = budget_s - (time.perf_counter() - started)
    report = train_parser(train, dev, work, config, steps=steps, progress=progress, max_seconds=budget,
                          resume_from=partial if resume else None, start_step=start, evaluate=False)  # fmt: skip
    reached = start + report.steps
    finished = reached >= steps
    dev_em = -1.0
    if finished and dev_limit and dev:
        from spr.parsing.train import evaluate_adapter

        dev_em = evaluate_adapter(work, dev[:dev_limit], config)
    (work / STAMP).write_text(json.dumps({"fingerprint": key, "steps_done": reached, "steps": steps, "dev_exact_match": dev_em}))
    target = final if finished else partial
    _replace(work, target)
    if finished:
        shutil.rmtree(partial, ignore_errors=True)
    return RefreshReport("trained" if finished else "paused", reached, steps, len(train), dev_em, time.perf_counter() - started)


def _stamp(folder: Path) -> dict:
    try:
        return json.loads((folder / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _replace(new: Path, target: Path) -> None:
    """``target`` becomes ``new`` by two renames; the old one is removed afterwards."""
    old = target.with_name(target.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        target.rename(old)
    new.rename(target)
    shutil.rmtree(old, ignore_errors=True)
