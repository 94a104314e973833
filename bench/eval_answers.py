"""Answers a reader can trust: abstention, citations, token recall and latency, per answer kind.

    .venv/bin/python bench/eval_answers.py --set dev-eu --kind extractive --kind llm --limit 24 \
        --json bench/out/answers/dev-eu.json

Every question is asked through :meth:`spr.qa.KnowledgeBase.ask_stream` with the defaults
(``[answer] mode``, ``k``; the ``[llm]`` model for ``llm``), with the LLM response cache off so
every LLM answer is a real model call: first-token and total latency are what a reader waits.
Per set and kind: false abstention (answerable questions abstained on), abstention on
unanswerable questions, ALCE citation recall/precision (:mod:`spr.eval.citations`), answer token
recall and ROUGE-L against the reference, latency p50 (first token, total; extractive: after
retrieval too). ``--limit`` samples answerable and unanswerable questions in the set's proportion
(seeded). KBs are the ones bench/eval_retrieval.py caches.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_llm import parse_threads  # noqa: E402
from bench.eval_retrieval import load, with_retrieval  # noqa: E402
from core.cache import user_cache_dir  # noqa: E402
from core.config import Config  # noqa: E402
from kgpipeline.pipeline import ingest_summary, reindex_summary  # noqa: E402
from spr.eval import metrics as m  # noqa: E402
from spr.eval.citations import citation_metrics, plain_text  # noqa: E402
from spr.eval.datasets import default_data_dir  # noqa: E402
from spr.eval.runner import prepare_kb  # noqa: E402
from spr.model_check import DECLINED  # noqa: E402
from spr.qa import KnowledgeBase  # noqa: E402
from spr.records import AnswerDone  # noqa: E402
from spr.verify import SupportChecker  # noqa: E402


def _llm_threads(setting: str | None) -> dict[str, int]:
    if setting is None:
        return {}
    threads, batch = parse_threads(setting)
    return {"threads": threads, "batch_threads": batch}


def p50(xs: list[float]) -> float | None:
    return round(statistics.median(xs), 1) if xs else None


def mean(xs: list[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return round(sum(vals) / len(vals), 3) if vals else None


def pick(questions, limit: int | None, seed: int):
    if not limit or limit >= len(questions):
        return list(questions)
    rng = random.Random(seed)
    return sorted(rng.sample(list(questions), limit), key=lambda q: q.id)


def run(kb: KnowledgeBase, questions, kind: str) -> dict:
    checker = SupportChecker(kb.embedder, kb.config.answer.min_support)
    rows = []
    for q in questions:
        started = time.perf_counter()
        first = None
        answer = None
        for event in kb.ask_stream(q.question, answer=kind):
            if isinstance(event, AnswerDone):
                answer = event.answer
            elif first is None:
                first = (time.perf_counter() - started) * 1000
        total = (time.perf_counter() - started) * 1000
        if answer is None:
            raise RuntimeError(f"{q.id}: the stream ended without an answer")
        pred = m.prediction(plain_text(answer.text), answer.abstained)
        cites = citation_metrics(answer, checker)
        passages = [e.chunk.text for e in answer.evidence if e.kind == "chunk" and e.chunk is not None]
        evidence_qr = m.quote_recall_at_k(passages, q.gold_contexts, len(passages)) if q.answerable and q.gold_contexts else None
        rows.append({
            "id": q.id, "question": q.question, "answerable": q.answerable, "reference": q.answers[:1],
            "text": answer.text, "abstained": not pred, "abstain_reason": answer.abstain_reason, "confidence": answer.confidence,
            "deepened": "looked deeper" in answer.trace.note,
            "translated": "question translated" in answer.trace.note, "evidence_quote_recall": evidence_qr, "draft": answer.draft, "unsupported": list(answer.unsupported),
            "token_recall": m.token_recall(pred, q.answers) if q.answerable and pred else (0.0 if q.answerable else None),
            "rougeL": (m.rouge(pred, q.answers) or {}).get("rougeL") if q.answerable and pred else (0.0 if q.answerable else None),
            **cites, "first_token_ms": first, "total_ms": total, "timings_ms": dict(answer.timings_ms),
            "after_retrieval_ms": total - answer.timings_ms.get("retrieve", 0.0),
            "citations": [{"id": c.id, "title": c.title, "quote": c.quote[:300]} for c in answer.citations],
        })
        print(f"  {q.id} {'A' if q.answerable else 'U'} {'abst' if not pred else 'ans '} {total / 1000:5.1f}s {answer.text[:110]!r}", flush=True)
    ans = [r for r in rows if r["answerable"]]
    una = [r for r in rows if not r["answerable"]]
    return {
        "questions": len(rows), "answerable": len(ans), "unanswerable": len(una),
        "false_abstention": mean([float(r["abstained"]) for r in ans]),
        "abstain_unanswerable": mean([float(r["abstained"]) for r in una]),
        "citation_recall": mean([r.get("citation_recall") for r in rows]),
        "citation_precision": mean([r.get("citation_precision") for r in rows]),
        "token_recall": mean([r["token_recall"] for r in ans]),
        "evidence_quote_recall": mean([r["evidence_quote_recall"] for r in ans]),  # gold quotes in the answer's passages
        "translated": sum(r["translated"] for r in rows),
        "token_recall_answered": mean([r["token_recall"] for r in ans if not r["abstained"]]),
        "rougeL": mean([r["rougeL"] for r in ans]),
        "unsupported_sentences_dropped": sum(len(r["unsupported"]) for r in rows),
        "declined_by_the_answerability_check": {
            side: sum(bool(r["abstain_reason"]) for r in group) for side, group in (("answerable", ans), ("unanswerable", una))
        },
        "declined_by_the_model": {
            side: sum(r["abstain_reason"].startswith(DECLINED) for r in group) for side, group in (("answerable", ans), ("unanswerable", una))
        },
        "looked_deeper": {side: sum(r["deepened"] for r in group) for side, group in (("answerable", ans), ("unanswerable", una))},
        "first_token_ms_p50": p50([r["first_token_ms"] for r in rows if r["first_token_ms"] is not None]),
        "total_ms_p50": p50([r["total_ms"] for r in rows]),
        "after_retrieval_ms_p50": p50([r["after_retrieval_ms"] for r in rows]),
        "rows": rows,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", required=True, help="dev-eu, dev-necp, dev-de, squad2, rag-eurlex, ...")
    ap.add_argument("--kind", action="append", default=[], help="extractive and/or llm (repeatable)")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--embed", default=Config().embed.model)
    ap.add_argument("--embed-dtype", default=Config().embed.dtype, choices=("float32", "bfloat16", "auto"),
                    help="[embed] dtype (float32 reuses the KBs built before bfloat16 was the default)")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--llm-cache", action="store_true",
                    help="keep the KB's LLM cache on: a rerun gets the same replies (to compare what is done with them; its latencies are the cache's)")
    ap.add_argument("--no-check", action="store_true", help="answer with [answer] check_answerable off (the before)")
    ap.add_argument("--model-check", choices=("off", "llm", "all"), default=None,
                    help="[answer] model_check: the [llm] model's yes/no on the quoted evidence (default: the config's)")
    ap.add_argument("--k", type=int, default=None, help="[answer] k: passages retrieved per question (default the config's)")
    ap.add_argument("--deepen", type=int, default=None, help="[answer] deepen_k (0 = never look past the top k)")
    ap.add_argument("--neighbours", type=int, default=None,
                    help="[answer] llm_neighbours and extractive_neighbours (small-to-big: chunks beside each passage)")
    ap.add_argument("--translate", choices=("auto", "off"), default=None, help="[answer] translate_questions")
    ap.add_argument("--llm-threads", default=None, metavar="G/P",
                    help="[llm] threads / batch_threads (generating / reading the prompt; default the config's)")
    ap.add_argument("--list-chars", type=int, default=None, help="[answer] list_chars (extractive: lists quoted whole; 0 = never)")
    ap.add_argument("--evidence-tokens", type=int, default=None, help="[answer] llm_evidence_tokens (LLM answers)")
    ap.add_argument("--llm-fallback", choices=("extractive", "abstain"), default=None,
                    help="[answer] llm_fallback: a reply withheld whole is replaced by the quoted evidence, or abstains (the before)")
    ap.add_argument("--free-end", action="store_true", help="[answer] llm_end_on_citation off: the model may stop uncited (the before)")
    ap.add_argument("--no-choices", action="store_true", help="[retrieval] choices off: no search per option of a choice question (the before)")
    ap.add_argument("--bridges", choices=("on", "off"), default=None, help="[retrieval] bridges (default: the config's)")
    ap.add_argument("--prompt-cache-mb", type=int, default=None, help="[llm] prompt_cache_mb (0 = keep only the last prompt's state)")
    ap.add_argument("--retrieval", action="append", default=[], metavar="KEY=VALUE",
                    help="set a [retrieval] field, e.g. rescore_pull_named=false (repeatable; a KB's policykb.toml is not read here)")
    ap.add_argument("--abbreviations", choices=("on", "off"), default=None, help="[retrieval] abbreviations (default: the config's)")
    args = ap.parse_args()

    dataset = load(args.set, default_data_dir(), None)
    config = Config()
    config = config.model_copy(update={
        "embed": config.embed.model_copy(update={"model": args.embed, "dtype": args.embed_dtype}),
        "llm": config.llm.model_copy(update={"cache": args.llm_cache, **_llm_threads(args.llm_threads),
                                             **({} if args.prompt_cache_mb is None else {"prompt_cache_mb": args.prompt_cache_mb})}),  # by default every LLM answer a real call
        "retrieval": config.retrieval.model_copy(update={
            "choices": config.retrieval.choices and not args.no_choices,
            "bridges": config.retrieval.bridges if args.bridges is None else args.bridges == "on",
            "abbreviations": config.retrieval.abbreviations if args.abbreviations is None else args.abbreviations == "on",
        }),
        "answer": config.answer.model_copy(update={
            "check_answerable": not args.no_check,
            "model_check": args.model_check or config.answer.model_check,
            "k": config.answer.k if args.k is None else args.k,
            "deepen_k": config.answer.deepen_k if args.deepen is None else args.deepen,
            **({} if args.neighbours is None else {"llm_neighbours": args.neighbours, "extractive_neighbours": args.neighbours}),
            "translate_questions": args.translate or config.answer.translate_questions,
            "llm_evidence_tokens": config.answer.llm_evidence_tokens if args.evidence_tokens is None else args.evidence_tokens,
            "list_chars": config.answer.list_chars if args.list_chars is None else args.list_chars,
            "llm_end_on_citation": config.answer.llm_end_on_citation and not args.free_end,
            "llm_fallback": args.llm_fallback or config.answer.llm_fallback,
        }),
    })
    config = with_retrieval(config, args.retrieval)
    kb_config, note = prepare_kb(dataset, config, user_cache_dir() / f"retrieval-{Path(args.embed).name}", ingest_summary, reindex=reindex_summary)
    print(note, flush=True)
    questions = pick(dataset.questions, args.limit, args.seed)
    report = {"set": args.set, "questions": [q.id for q in questions], "kinds": {}}
    with KnowledgeBase.open(kb_config) as kb:
        kb.ask(questions[0].question)  # load the embedder and indexes before timing
        for kind in args.kind or ["extractive"]:
            if kind == "llm" or kb.config.answer.model_check == "all":
                kb.llm.complete("Say OK.", max_tokens=1)  # load the model once (not a reader's wait per question)
            print(f"{args.set} {kind}", flush=True)
            report["kinds"][kind] = run(kb, questions, kind)
            summary = {k: v for k, v in report["kinds"][kind].items() if k != "rows"}
            print(json.dumps(summary, indent=1), flush=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
