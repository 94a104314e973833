"""PathQuestion (Zhou et al., COLING 2018) as KBQA: the semantic parsing retriever over the RDF KB.

The KB file becomes RDF (entity IRIs with ``skos:prefLabel`` "adelaide of lowenstein" and
``skos:altLabel`` "adelaide_of_lowenstein", the form questions use; relations declared as
``owl:ObjectProperty`` with an ``rdfs:label`` such as "cause of death"; each fact in its own named
graph, so provenance works as for documents). The entity index is built by the real "entities"
stage. Questions are split by gold path (paraphrases of one path stay on one side); the LoRA
parser trains on gold S-expressions of the training paths, e.g. ``(JOIN (R [ gender ]) (JOIN (R
[ children ]) [ abaqa_khan ]))``, within a wall-clock budget; both parsers are then evaluated by
Hits@1 (the first answer returned is a gold answer) and parse exact match on held-out paths.

Not a timed test. Usage:
    .venv/bin/python bench/eval_pathquestion.py --variant pq-2h --train-n 600 --eval-n 100 --steps 200 --budget-s 600 --beams 3
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pyoxigraph import Literal, NamedNode, Quad  # noqa: E402

from kgpipeline.entity_index import EntityIndexStage  # noqa: E402
from policykb.config import EmbedConfig, SPRConfig  # noqa: E402
from policykb.embed import make_embedder  # noqa: E402
from spr.eval.pathquestion import VARIANTS, parse_answers, parse_path, readable  # noqa: E402
from spr.parser import ParseCandidate  # noqa: E402
from spr.retriever import SemanticParsingRetriever  # noqa: E402
from spr.sexpr import Entity, Join, Label, Relation, to_text  # noqa: E402
from spr.synth import Example  # noqa: E402
from store.oxigraph_store import OxigraphStore  # noqa: E402
from store.vocab import OWL, RDF, RDFS, SKOS  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "kbqa" / "pathquestion"
BASE = "https://w3id.org/policykb/pq/"


def entity(name: str) -> NamedNode:
    return NamedNode(BASE + "e/" + quote(name, safe=""))


def relation(name: str) -> NamedNode:
    return NamedNode(BASE + "r/" + quote(name, safe=""))


def load_kb(store: OxigraphStore, kb_file: Path) -> int:
    quads: list[Quad] = []
    names: set[str] = set()
    rels: set[str] = set()
    for n, line in enumerate(kb_file.read_text(encoding="utf-8").splitlines()):
        parts = [p.strip() for p in line.split("\t") if p.strip()]
        if len(parts) != 3:
            continue
        s, r, o = parts
        quads.append(Quad(entity(s), relation(r), entity(o), NamedNode(f"{BASE}fact/{n}")))
        names |= {s, o}
        rels.add(r)
    labels = NamedNode(BASE + "labels")
    for name in sorted(names):
        quads.append(Quad(entity(name), NamedNode(SKOS + "prefLabel"), Literal(readable(name)), labels))
        quads.append(Quad(entity(name), NamedNode(SKOS + "altLabel"), Literal(name), labels))
    for r in sorted(rels):
        quads.append(Quad(relation(r), NamedNode(RDF + "type"), NamedNode(OWL + "ObjectProperty"), labels))
        quads.append(Quad(relation(r), NamedNode(RDFS + "label"), Literal(readable(r)), labels))
    return store.extend(quads)


def gold_sexpr(path: list[str]) -> str:
    """subject#r1#e1#r2#e2 → (JOIN (R [ r2 ]) (JOIN (R [ r1 ]) [ subject ]))."""
    expr = Entity(Label(path[0]))
    for rel in path[1::2]:
        expr = Join(Relation(Label(readable(rel)), reverse=True), expr)
    return to_text(expr)


def load_questions(q_file: Path) -> list[tuple[str, tuple[str, ...], str, str]]:
    out = []
    for line in q_file.read_text(encoding="utf-8").splitlines():
        cols = line.split("\t")
        if len(cols) >= 3:
            out.append((cols[0].strip(), parse_answers(cols[1]), cols[2].strip(), gold_sexpr(parse_path(cols[2]))))
    return out


class Precomputed:
    """A parser whose outputs were decoded in batches beforehand (the LoRA beams)."""

    name = "lora"

    def __init__(self, table: dict[str, list[ParseCandidate]]):
        self.table = table

    def parse(self, question: str) -> list[ParseCandidate]:
        return self.table.get(question, [])


def evaluate(retriever: SemanticParsingRetriever, questions, parses: dict[str, list[ParseCandidate]] | None = None) -> dict:
    hits = em = found = 0
    ms = []
    for q, answers, _path, gold in questions:
        result = retriever.retrieve(q)
        gold_set = {a.casefold() for a in answers}
        if result.answers and result.answers[0].label.casefold() in gold_set:
            hits += 1
        found += bool(result.found)
        top = (parses or {}).get(q) or []
        em += (top[0].text if top else (result.parses[0] if result.parses else "")) == gold
        ms.append(result.timings_ms.get("total", 0.0))
    n = len(questions)
    return {"n": n, "hits@1": hits / n, "parse_em": em / n, "answered": found / n, "ms_per_q": sum(ms) / max(n, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variant", default="pq-2h", choices=sorted(VARIANTS))
    ap.add_argument("--train-n", type=int, default=600, help="training questions (from training paths)")
    ap.add_argument("--eval-n", type=int, default=100, help="held-out questions evaluated")
    ap.add_argument("--steps", type=int, default=300, help="LoRA steps (the schedule's length)")
    ap.add_argument("--budget-s", type=float, default=420.0, help="wall-clock limit of LoRA training")
    ap.add_argument("--beams", type=int, default=3)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--skip-lora", action="store_true")
    ap.add_argument("--out", type=Path, default=None, help="write the figures as JSON here")
    ap.add_argument("--keep-kb", action="store_true", help="keep the temporary KB (entity index, adapter)")
    args = ap.parse_args()
    started = time.perf_counter()

    q_file, kb_file = (DATA / f for f in VARIANTS[args.variant])
    store = OxigraphStore()
    quads = load_kb(store, kb_file)
    questions = load_questions(q_file)
    paths = sorted({p for _, _, p, _ in questions})
    random.Random(args.seed).shuffle(paths)
    held = set(paths[: len(paths) // 5])
    rng = random.Random(args.seed)
    train_q = [q for q in questions if q[2] not in held]
    eval_q = [q for q in questions if q[2] in held]
    train_q = rng.sample(train_q, min(args.train_n, len(train_q)))
    eval_q = rng.sample(eval_q, min(args.eval_n, len(eval_q)))
    print(f"{args.variant}: KB {quads} quads; {len(questions)} questions on {len(paths)} paths; "
          f"{len(held)} paths held out; train {len(train_q)}, eval {len(eval_q)} questions")  # fmt: skip

    kb_dir = Path(tempfile.mkdtemp(prefix="pq-kb-"))
    try:
        run(args, store, kb_dir, train_q, eval_q, started)
    finally:
        if args.keep_kb:
            print(f"KB kept in {kb_dir}")
        else:
            shutil.rmtree(kb_dir, ignore_errors=True)


def run(args, store, kb_dir: Path, train_q, eval_q, started: float) -> None:
    embedder = make_embedder(EmbedConfig(), kb_dir)
    print("entities:", EntityIndexStage(embedder).run(store, kb_dir))
    config = SPRConfig(parser="fallback", parser_beams=args.beams, max_new_tokens=64, max_seq_tokens=96, seed=args.seed)
    retriever = SemanticParsingRetriever(store, embedder, kb_dir, config)
    rows = {"fallback": evaluate(retriever, eval_q)}
    print("fallback:", json.dumps(rows["fallback"]))

    train_info = {}
    if not args.skip_lora:
        from spr.parser import LoRAParser
        from spr.train import train_parser

        examples = [Example(q, gold, "pq") for q, _, _, gold in train_q]

        def progress(step: int, total: int, loss: float) -> None:
            if step == 1 or step % 10 == 0:
                print(f"  step {step}  loss {loss:.4f}  {time.perf_counter() - started:.0f} s", flush=True)

        report = train_parser(examples, [], kb_dir / "parser", config, steps=args.steps, progress=progress, max_seconds=args.budget_s)
        train_info = {k: getattr(report, k) for k in ("steps", "train_examples", "first_loss", "final_loss", "train_seconds")}
        print("trained:", json.dumps(train_info))
        t0 = time.perf_counter()
        lora = LoRAParser(kb_dir / "parser", beams=args.beams, max_new_tokens=64)
        decoded = lora.parse_many([q for q, *_ in eval_q])
        decode_s = time.perf_counter() - t0
        table = {q: out for (q, *_), out in zip(eval_q, decoded)}
        retriever.parser = Precomputed(table)
        rows["lora"] = evaluate(retriever, eval_q, table)
        rows["lora"]["decode_s_per_q"] = decode_s / max(len(eval_q), 1)
        print("lora:", json.dumps(rows["lora"]))

    print()
    print("| parser | Hits@1 | parse EM | answered | ms/query (retrieval) |")
    print("|---|---|---|---|---|")
    for name, r in rows.items():
        print(f"| {name} | {r['hits@1']:.1%} | {r['parse_em']:.1%} | {r['answered']:.1%} | {r['ms_per_q']:.0f} |")
    print(f"total {time.perf_counter() - started:.0f} s")
    if args.out:
        args.out.write_text(json.dumps({"variant": args.variant, "rows": rows, "training": train_info, "args": vars(args)}, default=str, indent=2))


if __name__ == "__main__":
    main()
