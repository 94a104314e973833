"""A study of the rescoring's next hops (``[retrieval] rescore_link_bonus``), the kept rule and the variants tried.

    .venv/bin/python bench/study_links.py --set hotpotqa --embed all-MiniLM-L6-v2   # or musique, dev-eu, structured-eu, ...

On the cached evaluation KB of bench/eval_retrieval.py, each question's candidates are the
product's ``hybrid`` top 20 rescored with the link bonus off (their scores in [0, 1]); the
variants then reorder those same candidates, so every row reads the same rankings:

- ``no links``: the rescored order (the default before the rule);
- ``links b``: :func:`spr.retrieval.rescore.follow_references` with bonus b (the default: 0.1);
- ``links 0.1, uncapped``: a hop may pass the candidate that names it;
- ``links 0.1, first two name``: the first two candidates' references both count;
- ``article references``: within one act, "Article N" in the first candidate's text names the
  act's document titled "<act> Article N" (a corpus of one article per record), not the title.

docs/retrieval.md "Retrieval" lists what it measured.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.eval_retrieval import ChunkTexts, gold_scores, load  # noqa: E402
from core.cache import user_cache_dir  # noqa: E402
from core.config import Config  # noqa: E402
from kgpipeline.pipeline import ingest_summary, reindex_summary  # noqa: E402
from spr.eval.datasets import default_data_dir  # noqa: E402
from spr.eval.runner import document_ids, prepare_kb, resolve_contexts  # noqa: E402
from spr.qa import KnowledgeBase  # noqa: E402
from spr.retrieval.registry import signals  # noqa: E402
from spr.retrieval.rescore import follow_references  # noqa: E402

Order = Callable[[list[str], list[str], list[str], list[str], list[float]], list[int]]  # iris, docs, texts, titles, scores -> order

_ARTICLE = re.compile(r"\bArticles?\s+(\d+[a-z]?)((?:\s*(?:,|and|or|to)\s*\d+[a-z]?)*)")
_ARTICLE_TITLE = re.compile(r"^(.*?)\s+Article\s+(\d+[a-z]?)$")


def _by_score(scores: Sequence[float]) -> list[int]:
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


def _lifted(scores: list[float], hops: dict[int, int], bonus: float, capped: bool) -> list[int]:
    """The order after each hop (index -> the index of the candidate naming it) gained ``bonus``."""
    new = list(scores)
    for i, head in hops.items():
        new[i] = min(scores[i] + bonus, scores[head]) if capped else scores[i] + bonus
    heads = set(hops.values())
    return sorted(range(len(new)), key=lambda i: (-new[i], i not in heads, i))


def variants(named_by: Callable[[str], set[str]]) -> dict[str, Order]:
    def links(bonus: float) -> Order:
        return lambda iris, docs, texts, titles, scores: follow_references(docs, texts, scores, named_by, bonus)[1]

    def hops_from(heads: Sequence[int], docs: list[str], texts: list[str], order: list[int]) -> dict[int, int]:
        hops: dict[int, int] = {}
        seen = {docs[h] for h in heads}
        for head in heads:
            named = named_by(texts[head]) - seen
            for i in order:
                if docs[i] in named and i not in hops:
                    hops[i] = head
                    seen.add(docs[i])
        return hops

    def uncapped(iris, docs, texts, titles, scores):
        order = _by_score(scores)
        return _lifted(scores, hops_from(order[:1], docs, texts, order), 0.1, capped=False)

    def first_two(iris, docs, texts, titles, scores):
        order = _by_score(scores)
        return _lifted(scores, hops_from(order[:2], docs, texts, order), 0.1, capped=True)

    def articles(iris, docs, texts, titles, scores):
        order = _by_score(scores)
        head = _ARTICLE_TITLE.match(titles[order[0]])
        hops: dict[int, int] = {}
        if head:
            act, number = head.groups()
            cited = set()
            for m in _ARTICLE.finditer(texts[order[0]]):
                cited |= {m.group(1), *re.findall(r"\d+[a-z]?", m.group(2) or "")}
            cited.discard(number)
            taken = set()
            for i in order[1:]:
                other = _ARTICLE_TITLE.match(titles[i])
                if other and other.group(1) == act and other.group(2) in cited and other.group(2) not in taken:
                    hops[i] = order[0]
                    taken.add(other.group(2))
        return _lifted(scores, hops, 0.1, capped=True)

    return {
        "no links": lambda iris, docs, texts, titles, scores: _by_score(scores),
        **{f"links {b:g}" + (" (the default)" if b == 0.1 else ""): links(b) for b in (0.05, 0.1, 0.2)},
        "links 0.1, uncapped": uncapped,
        "links 0.1, first two name": first_two,
        "article references 0.1": articles,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", required=True)
    ap.add_argument("--embed", default="all-MiniLM-L6-v2")
    args = ap.parse_args()
    dataset = load(args.set, default_data_dir(), None)
    config = Config()
    config = config.model_copy(update={
        "embed": config.embed.model_copy(update={"model": args.embed, "dtype": "bfloat16"}),
        "communities": config.communities.model_copy(update={"build": False}),
    })
    kb_config, note = prepare_kb(dataset, config, user_cache_dir() / f"retrieval-{Path(args.embed).name}", ingest_summary, reindex=reindex_summary)
    print(note, flush=True)
    r = kb_config.retrieval
    kb_config = kb_config.model_copy(update={"retrieval": r.model_copy(update={"rescore": True, "rescore_link_bonus": 0.0})})
    with KnowledgeBase.open(kb_config) as kb:
        doc_of = document_ids(kb.store)
        chunk_texts = ChunkTexts.read(kb.store, doc_of)
        graph = next(s for s in signals(kb) if s.name == "graph")
        named_by = graph.graph.documents_named  # type: ignore[attr-defined]
        hybrid = kb.retriever("hybrid")
        orders = variants(named_by)
        sums: dict[str, dict[str, list[float]]] = {name: {} for name in orders}
        for q in resolve_contexts(kb.store, dataset.questions, doc_of):
            if not q.answerable:
                continue
            evidence = [e for e in hybrid.search(q.question, r.rescore_top_n).evidence if e.chunk is not None]
            iris = [e.chunk.iri for e in evidence]  # type: ignore[union-attr]
            docs = [e.chunk.document for e in evidence]  # type: ignore[union-attr]
            texts = [e.text for e in evidence]
            titles = [e.chunk.title for e in evidence]  # type: ignore[union-attr]
            scores = [e.score for e in evidence]
            for name, order in orders.items():
                ranked = [iris[i] for i in order(iris, docs, texts, titles, scores)]
                for key, v in gold_scores(args.set, q, ranked, chunk_texts).items():
                    sums[name].setdefault(key, []).append(v)
    keys = sorted({k for s in sums.values() for k in s}, key=lambda k: (k[:-2].rstrip("@"), int(k.split("@")[1])))
    print(f"{args.set} · {args.embed}")
    print(f"{'variant':<36}" + "".join(f"{k:>8}" for k in keys))
    for name, s in sums.items():
        print(f"{name:<36}" + "".join(f"{sum(s[k]) / len(s[k]):>8.3f}" for k in keys))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
