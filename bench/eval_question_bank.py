"""Question-bank retrieval vs. plain chunk vectors vs. BM25 on the HotpotQA sample (retrieval only).

The three systems rank chunks of the eval harness's cached HotpotQA KB (994 passages, one document
per passage); chunks map to gold passages exactly as the harness does it (``runner.document_ids`` and
the same ``metrics.dedupe`` over each chunk's document, then ``metrics.recall_at_k``/``mrr_at_k``):

- ``k (question bank)``: the user question against the latent questions of ``reindex questions``.
  ``QuestionBankRetriever.retrieve(q, k)`` returns at most ``k`` chunks (one per chunk among the
  ``k`` nearest latent questions), so ``k`` is doubled from 5 until 5 distinct chunks are found (or
  the whole bank was searched); the first 5 chunks, best first, are kept. Chunks without latent
  questions can never be found.
- ``vector``: the harness's ``vector`` mode (top 5 chunks by chunk-embedding cosine).
- ``bm25``: ``rank_bm25.BM25Okapi`` over the same chunk texts, lower-cased ``\\w+`` tokens.

Every system gets 5 chunks per question; Recall@2/@5 and MRR@5 are over the distinct passages those
chunks belong to. Build the KB once with ``policykb eval hotpotqa`` and refresh its bank with
``policykb --kb ~/.cache/policykb/eval/hotpotqa/kb reindex questions``. Not a timed test. Usage:

    .venv/bin/python bench/eval_question_bank.py [--kb ~/.cache/policykb/eval/hotpotqa/kb] [--depth 5]
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rank_bm25 import BM25Okapi  # noqa: E402

from spr.eval import metrics as m  # noqa: E402
from spr.eval.datasets import load_dataset  # noqa: E402
from spr.eval.runner import document_ids, resolve_contexts  # noqa: E402
from spr.qa import KnowledgeBase  # noqa: E402
from spr.retrieval.question_bank import QuestionBankRetriever  # noqa: E402
from store.vocab import PKB  # noqa: E402

DEFAULT_KB = Path.home() / ".cache" / "policykb" / "eval" / "hotpotqa" / "kb"
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def tokenize(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def ranked_passages(documents: list[str], doc_of: dict[str, str]) -> list[str]:
    """Chunk documents (best first) → distinct passage ids: the harness's mapping in ``runner.score``."""
    return m.dedupe(doc_of.get(d, "") for d in documents)


def bank_chunks(bank: QuestionBankRetriever, question: str, depth: int) -> tuple[list[str], int]:
    """Documents of the first ``depth`` distinct chunks found through latent questions, and the
    number of latent questions searched to find them."""
    total = len(bank.bank.questions)
    k = depth
    while True:
        hits = bank.retrieve(question, k=k)
        if len(hits) >= depth or k >= total:
            return [h.document for h in hits[:depth]], k
        k = min(2 * k, total)


class BM25Chunks:
    def __init__(self, store):
        rows = store.select(f"SELECT ?c ?d ?t WHERE {{ ?c <{PKB}partOfDocument> ?d ; <{PKB}text> ?t }} ORDER BY ?c").rows
        self.docs = [r["d"].value for r in rows]
        self.bm25 = BM25Okapi([tokenize(r["t"].value) for r in rows])

    def retrieve(self, question: str, depth: int) -> list[str]:
        scores = self.bm25.get_scores(tokenize(question))
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:depth]
        return [self.docs[i] for i in order]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kb", type=Path, default=DEFAULT_KB, help="the harness's cached HotpotQA KB")
    ap.add_argument("--data-dir", type=Path, default=DATA)
    ap.add_argument("--depth", type=int, default=5, help="chunks per question and system (MRR cut-off)")
    args = ap.parse_args()

    dataset = load_dataset("hotpotqa", args.data_dir)
    with KnowledgeBase.open(args.kb) as kb:
        doc_of = document_ids(kb.store)
        questions = resolve_contexts(kb.store, dataset.questions, doc_of)
        bank = QuestionBankRetriever(kb.config.kb_dir, kb.embedder, kb.store)
        vector = kb.retriever("vector")
        bm25 = BM25Chunks(kb.store)
        n_chunks = len(bm25.docs)
        covered = len({q.chunk for q in bank.bank.questions.values()})

        def run_vector(q: str) -> list[str]:
            return [e.chunk.document for e in vector.retrieve(q, args.depth) if e.chunk is not None]

        searched: list[int] = []

        def run_bank(q: str) -> list[str]:
            docs, k = bank_chunks(bank, q, args.depth)
            searched.append(k)
            return docs

        systems = {"k (question bank)": run_bank, "vector (chunk embeddings)": run_vector, "bm25 (chunk texts)": lambda q: bm25.retrieve(q, args.depth)}
        for q in questions[:3]:  # warm-up: model load and first-call costs stay out of the timings
            for fn in systems.values():
                fn(q.question)
        searched.clear()
        rows = []
        for name, fn in systems.items():
            r2, r5, mrr, started = [], [], [], time.perf_counter()
            for q in questions:
                ranked = ranked_passages(fn(q.question), doc_of)
                r2.append(m.recall_at_k(ranked, q.gold_passage_ids, 2))
                r5.append(m.recall_at_k(ranked, q.gold_passage_ids, 5))
                mrr.append(m.mrr_at_k(ranked, q.gold_passage_ids, args.depth))
            ms = (time.perf_counter() - started) * 1000 / len(questions)
            rows.append((name, *(sum(x for x in v if x is not None) / sum(x is not None for x in v) for v in (r2, r5, mrr)), ms))

    print("$ " + " ".join(shlex.quote(a) for a in [".venv/bin/python", *sys.argv]))
    print(f"KB {args.kb}: {len(doc_of)} passages, {n_chunks} chunks; {len(questions)} questions, "
          f"{sum(len(q.gold_passage_ids) for q in questions)} gold passages")
    print(f"question bank: {len(bank.bank.questions)} latent questions over {covered}/{n_chunks} chunks; "
          f"latent questions searched to fill {args.depth} chunks: median {sorted(searched)[len(searched) // 2]}, max {max(searched)}")
    print()
    print(f"| {'system':<26} | Recall@2 | Recall@{args.depth} | MRR@{args.depth} | ms/question |")
    print(f"|{'-' * 28}|---------:|---------:|------:|------------:|")
    for name, r2, r5, mrr, ms in rows:
        print(f"| {name:<26} | {r2:8.3f} | {r5:8.3f} | {mrr:5.3f} | {ms:11.1f} |")


if __name__ == "__main__":
    main()
