"""Structured retrieval on a 1M-triple KB: grounding + SPARQL execution vs a plain FAISS chunk search.

The KB is generated in policykb's data model: entities with ``skos:prefLabel`` names built from
word lists ("Northern Solar Bureau of Westmark 812"), one name in ten shared by two entities with a
scope ("Energy Bureau (Nordland)" / "(Westmark)", the homonym case), chunks with text, entities
``pkb:mentionedIn`` chunks, and relation triples among 20 labelled properties in the chunks' named
graphs. The real "weights" and "entities" stages build the priors and the entity index.

Questions are S-expressions over the KB (1-hop, reversed, 2-hop, COUNT) with the labels a parser
would emit; the retriever is given them through a fixed parser, so the timings are grounding
(entity linking + relation matching) and execution, which is what the target covers. The baseline,
in the same process on the same questions: embed the question text and search a FAISS index of
chunk vectors (k = 10), i.e. the dense chunk retrieval of the vector mode. Both embed with the same
MiniLM; every text is new to the embedder's cache. ``--parser DIR`` adds the LoRA parse per question.

Not a timed test. Usage:
    .venv/bin/python bench/bench_spr.py --triples 1000000 --questions 200
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
from pyoxigraph import Literal, NamedNode, Quad  # noqa: E402

from core.config import EmbedConfig, SPRConfig, WeightsConfig  # noqa: E402
from core.embed import make_embedder  # noqa: E402
from kgpipeline.derived.entity_index import EntityIndexStage  # noqa: E402
from kgpipeline.derived.weights import WeightsStage  # noqa: E402
from spr.grounding.sexpr_reader import parse  # noqa: E402
from spr.parsing.candidate import ParseCandidate  # noqa: E402
from spr.retrieval.semantic_parsing import SemanticParsingRetriever  # noqa: E402
from store.layout import KBLayout
from store.oxigraph_store import OxigraphStore  # noqa: E402
from store.vectors import VectorIndex  # noqa: E402
from store.vocab import OWL, PKB, RDF, RDFS, SKOS  # noqa: E402

BASE = "https://w3id.org/policykb/bench/"
ADJ = ["Northern", "Southern", "Central", "National", "Regional", "Coastal", "Rural", "Urban", "Federal", "Joint",
       "Green", "Digital", "Public", "Maritime", "Western", "Eastern"]  # fmt: skip
TOPIC = ["Solar", "Wind", "Energy", "Water", "Transport", "Health", "Housing", "Climate", "Grid", "Fisheries",
         "Forestry", "Mining", "Data", "Labour", "Tax", "Heritage", "Hydrogen", "Waste", "Rail", "Ports"]  # fmt: skip
KIND = ["Bureau", "Agency", "Plan", "Act", "Notice", "Regulation", "Fund", "Programme", "Council", "Directive",
        "Strategy", "Centre"]  # fmt: skip
REGION = ["Nordland", "Westmark", "Ostvik", "Sudheim", "Lakeshire", "Highmoor", "Redcliff", "Bayfield"]
PROPS = ["issues", "supports", "implements", "establishes", "applies to", "amends", "repeals", "funds",
         "supervises", "coordinates with", "reports to", "replaces", "cites", "is part of", "governs",
         "regulates", "finances", "monitors", "publishes", "delegates to"]  # fmt: skip


class Fixed:
    """The parser stand-in: returns the S-expression written for each question."""

    name = "fixed"

    def __init__(self):
        self.table: dict[str, str] = {}

    def parse(self, question: str) -> list[ParseCandidate]:
        text = self.table[question]
        return [ParseCandidate(parse(text), text, 1.0)]


def build(triples: int, seed: int) -> tuple[list[Quad], dict[str, str], list[tuple[str, str, str]]]:
    """(quads, entity IRI → name, relation triples as (s, prop label, o))."""
    rng = random.Random(seed)
    n_entities = max(triples // 50, 200)
    names: dict[str, str] = {}
    quads: list[Quad] = []
    for i in range(n_entities):
        iri = f"{BASE}e/{i}"
        if i % 10 == 1:  # a homonym of the previous entity, told apart by scope
            base_name = names[f"{BASE}e/{i - 1}"].split(" (")[0]
            names[iri] = f"{base_name} ({rng.choice(REGION)})"
        else:
            names[iri] = f"{rng.choice(ADJ)} {rng.choice(TOPIC)} {rng.choice(KIND)} of {rng.choice(REGION)} {i}"
        quads.append(Quad(NamedNode(iri), NamedNode(SKOS + "prefLabel"), Literal(names[iri]), NamedNode(BASE + "labels")))
    props = {label: f"{BASE}p/{label.replace(' ', '_')}" for label in PROPS}
    for label, iri in props.items():
        quads.append(Quad(NamedNode(iri), NamedNode(RDF + "type"), NamedNode(OWL + "ObjectProperty"), NamedNode(BASE + "onto")))
        quads.append(Quad(NamedNode(iri), NamedNode(RDFS + "label"), Literal(label), NamedNode(BASE + "onto")))
    doc = NamedNode(BASE + "doc")
    entity_ids = list(names)
    relations: list[tuple[str, str, str]] = []
    chunk_no = 0
    while len(quads) < triples:
        chunk = NamedNode(f"{BASE}chunk/{chunk_no}")
        chunk_no += 1
        sentences, mentioned = [], set()
        for _ in range(10):
            s, o = rng.choice(entity_ids), rng.choice(entity_ids)
            prop = rng.choice(PROPS)
            quads.append(Quad(NamedNode(s), NamedNode(props[prop]), NamedNode(o), chunk))
            relations.append((s, prop, o))
            sentences.append(f"The {names[s]} {prop} the {names[o]}.")
            mentioned |= {s, o}
        quads += [Quad(NamedNode(e), NamedNode(PKB + "mentionedIn"), chunk, chunk) for e in sorted(mentioned)]
        quads += [
            Quad(chunk, NamedNode(RDF + "type"), NamedNode(PKB + "Chunk"), doc),
            Quad(chunk, NamedNode(PKB + "partOfDocument"), doc, doc),
            Quad(chunk, NamedNode(PKB + "text"), Literal(" ".join(sentences)), doc),
        ]
    return quads, names, relations


def questions(relations, names, n: int, seed: int) -> list[tuple[str, str, str]]:
    """(question text, S-expression, kind): new texts, so no embedding comes from a cache."""
    rng = random.Random(seed + 1)
    by_subject: dict[str, list[tuple[str, str, str]]] = {}
    for r in relations:
        by_subject.setdefault(r[0], []).append(r)
    out = []
    for i in range(n):
        s, p, o = rng.choice(relations)
        kind = ("1-hop", "reversed", "2-hop", "count")[i % 4]
        if kind == "1-hop":
            out.append((f"Which bodies does the {names[s]} {p}? ({i})", f"(JOIN (R [ {p} ]) [ {names[s]} ])", kind))
        elif kind == "reversed":
            out.append((f"Who {p} the {names[o]}? ({i})", f"(JOIN [ {p} ] [ {names[o]} ])", kind))
        elif kind == "2-hop":
            s2, p2, _ = rng.choice(by_subject.get(o) or [(o, p, s)])
            out.append((f"What does what the {names[s]} {p} {p2}? ({i})", f"(JOIN (R [ {p2} ]) (JOIN (R [ {p} ]) [ {names[s]} ]))", kind))
        else:
            out.append((f"How many things does the {names[s]} {p}? ({i})", f"(COUNT (JOIN (R [ {p} ]) [ {names[s]} ]))", kind))
    return out


def pct(values: list[float], q: float) -> float:
    return sorted(values)[int(q * (len(values) - 1))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--triples", type=int, default=1_000_000)
    ap.add_argument("--questions", type=int, default=200)
    ap.add_argument("--chunks", type=int, default=20_000, help="chunk vectors in the baseline FAISS index")
    ap.add_argument("--parser", type=Path, default=None, help="a LoRA adapter folder: time its parse too")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()

    t0 = time.perf_counter()
    quads, names, relations = build(args.triples, args.seed)
    store = OxigraphStore()
    store.extend(quads)
    print(f"KB: {len(quads):,} quads, {len(names):,} entities, {len(relations):,} relation triples "
          f"({time.perf_counter() - t0:.0f} s)", flush=True)  # fmt: skip
    kb_dir = Path(tempfile.mkdtemp(prefix="bench-spr-"))
    try:
        embedder = make_embedder(EmbedConfig(cache=False), KBLayout(kb_dir).embed_cache)
        print("weights:", WeightsStage(WeightsConfig(), BASE).run(store, kb_dir), flush=True)
        print("entities:", EntityIndexStage(embedder).run(store, kb_dir), flush=True)
        fixed = Fixed()
        retriever = SemanticParsingRetriever(store, embedder, kb_dir, SPRConfig(parser="rules"), parser=fixed)
        qs = questions(relations, names, args.questions + 1, args.seed)
        for text, sexpr, _ in qs:
            fixed.table[text] = sexpr
        # The baseline index: chunk vectors (random unit vectors: FAISS's cost does not depend on them).
        rng = np.random.default_rng(args.seed)
        vecs = rng.standard_normal((args.chunks, embedder.dimension)).astype("float32")
        vecs /= (vecs**2).sum(1, keepdims=True) ** 0.5
        chunks = VectorIndex(embedder.dimension)
        chunks.add([f"c{i}" for i in range(args.chunks)], vecs)
        warm, qs = qs[0], qs[1:]  # loads the embedder and the relation/class vectors: not measured
        chunks.search(embedder.embed_many([warm[0]]), 10)
        retriever.retrieve(warm[0])
        structured, ground, execute, faiss_ms, found = [], [], [], [], 0
        per_kind: dict[str, list[float]] = {}
        for text, _, kind in qs:  # alternate the two in one loop: same machine state for both
            t = time.perf_counter()
            chunks.search(embedder.embed_many([text]), 10)
            faiss_ms.append((time.perf_counter() - t) * 1000)
            result = retriever.retrieve(text)
            total = result.timings_ms["total"] - result.timings_ms.get("parse", 0.0)
            structured.append(total)
            ground.append(result.timings_ms.get("ground", 0.0))
            execute.append(result.timings_ms.get("execute", 0.0))
            per_kind.setdefault(kind, []).append(total)
            found += result.found
        print()
        print(f"{len(qs)} questions, answered {found / len(qs):.0%}")
        print("| measure | p50 ms | p95 ms |")
        print("|---|---|---|")
        for name, values in (("grounding (link + relations)", ground), ("SPARQL execution", execute),
                             ("structured retrieval (ground + execute + facts)", structured),
                             ("baseline: embed + FAISS chunk search (k=10)", faiss_ms)):  # fmt: skip
            print(f"| {name} | {statistics.median(values):.1f} | {pct(values, 0.95):.1f} |")
        for kind, values in per_kind.items():
            print(f"| structured, {kind} | {statistics.median(values):.1f} | {pct(values, 0.95):.1f} |")
        ratio = statistics.median(structured) / statistics.median(faiss_ms)
        print(f"structured / FAISS (p50): {ratio:.2f}x")
        if args.parser:
            from spr.parsing.lora import LoRAParser

            lora = LoRAParser(args.parser, beams=1, max_new_tokens=SPRConfig().max_new_tokens)
            lora.parse(qs[0][0])
            times = []
            for text, _, _ in qs[:50]:
                t = time.perf_counter()
                lora.parse(text)
                times.append((time.perf_counter() - t) * 1000)
            print(f"LoRA parse p50 {statistics.median(times):.0f} ms, p95 {pct(times, 0.95):.0f} ms; "
                  f"with parse, structured / FAISS (p50): {(statistics.median(times) + statistics.median(structured)) / statistics.median(faiss_ms):.1f}x")  # fmt: skip
        print(f"total {time.perf_counter() - t0:.0f} s")
    finally:
        shutil.rmtree(kb_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
