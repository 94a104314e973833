"""Extractive answers: which sentences to pick, and when to abstain, calibrated on visible data.

    .venv/bin/python bench/calibrate_answers.py --set squad2 --set dev-eu --set dev-necp --set dev-de \
        --json bench/out/answers/calibration.json

For every question the default retrieval (``[answer] mode``, ``k``) runs and the context is packed
as ``ask`` packs it; then every candidate sentence is scored (embedding cosine and word overlap with
the question, :mod:`spr.generate`) and recorded with its passage's fused rank. From those records:

- **selection**: token recall against the reference answer of the top sentences under several
  rules (hybrid score alone; with a prior for the passage's fused rank), answerable questions only;
- **abstention**: for a question-level confidence (the best sentence's score), every threshold's
  false abstention (share of answerable questions abstained on) and abstention on unanswerable
  ones; the threshold that meets "abstain on ≥ 75 % of unanswerable" with the least false
  abstention, and the one that keeps false abstention ≤ 10 %, per set and pooled.

Sets: ``squad2`` (the SQuAD 2.0 subset, 333 of 626 unanswerable) and the dev sets of
``bench/devset`` (never egd_regulations). KBs are cached like bench/eval_retrieval.py's.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.check_devset import DEV_SETS  # noqa: E402
from bench.eval_retrieval import load  # noqa: E402
from core.cache import user_cache_dir  # noqa: E402
from core.config import Config  # noqa: E402
from kgpipeline.pipeline import ingest_summary, reindex_summary  # noqa: E402
from spr import answerable  # noqa: E402
from spr.eval import metrics as m  # noqa: E402
from spr.eval.calibration import auc as roc_auc  # noqa: E402
from spr.eval.datasets import default_data_dir  # noqa: E402
from spr.eval.runner import prepare_kb  # noqa: E402
from spr.fuse import fuse  # noqa: E402
from spr.generate import candidates  # noqa: E402
from spr.lexical import lexical_scores  # noqa: E402
from spr.qa import KnowledgeBase  # noqa: E402
from spr.scoring import cosine_scores  # noqa: E402

PROBE = (
    "Question: {question}\n\nText:\n{text}\n\n"
    "Does the text state the answer to the question? Reply with yes or no."
)


def probe_text(pool, cos, lex, n: int = 3) -> str:
    """The ``n`` best sentences by the hybrid score, as the probe shows them."""
    ranked = sorted(range(len(pool)), key=lambda i: -(cos[i] + lex[i]))[:n]
    return "\n".join(f"- {' '.join(pool[i].text.split())}" for i in ranked)


def records(kb: KnowledgeBase, dataset, mode: str, k: int, probe: int = 0) -> list[dict]:
    """Per question: its label and every candidate sentence with its scores and passage rank;
    for the first ``probe`` questions also the [llm] model's P(yes) that the best sentences answer."""
    out = []
    for n, q in enumerate(dataset.questions):
        t0 = time.perf_counter()
        found = kb.retriever(mode).search(q.question, k)
        context = fuse(found.evidence, kb._budget(q.question), fact_share=kb.config.answer.fact_share)
        retrieved_ms = (time.perf_counter() - t0) * 1000
        pool = candidates(context)
        order = {p.cid: rank for rank, p in enumerate(context.passages)}
        t1 = time.perf_counter()
        texts = [c.text for c in pool]
        cos = cosine_scores(kb.embedder, q.question, texts)
        lex = lexical_scores(q.question, texts)
        score_ms = (time.perf_counter() - t1) * 1000
        sentences = [
            {
                "cos": round(c, 4),
                "lex": round(w, 4),
                "rank": order.get(cand.cid, -1),
                "fact": cand.is_fact,
                "recall": m.token_recall(cand.text, q.answers) if q.answerable else None,
                "text": cand.text,
                "cid": cand.cid,
            }
            for cand, c, w in zip(pool, cos, lex)
        ]
        row = {"id": q.id, "question": q.question, "answerable": q.answerable, "sentences": sentences,
               "passages": {cid: list(p.texts) for cid, p in answerable.passages(context, {}).items()}, "retrieve_ms": retrieved_ms, "score_ms": score_ms}
        if n < probe and pool:
            t2 = time.perf_counter()
            prompt = PROBE.format(question=q.question, text=probe_text(pool, cos, lex))
            row["p_yes"] = kb.llm.yes_probability(prompt)
            row["probe_ms"] = (time.perf_counter() - t2) * 1000
        out.append(row)
    return out


# --- selection rules: a sentence's score given its cosine, overlap and passage rank ----------------
RULES = {
    "hybrid": lambda s: (s["cos"] + s["lex"]) / 2,
    "hybrid, rank prior 0.05": lambda s: (s["cos"] + s["lex"]) / 2 - 0.05 * max(s["rank"], 0),
    "hybrid, rank prior 0.1": lambda s: (s["cos"] + s["lex"]) / 2 - 0.1 * max(s["rank"], 0),
    "cosine": lambda s: s["cos"],
    "overlap": lambda s: s["lex"],
}


def selection(rows: list[dict], picks: int) -> dict[str, float]:
    """Mean token recall of the ``picks`` best sentences (joined) per rule, answerable questions."""
    out = {}
    for name, rule in RULES.items():
        values = []
        for row in rows:
            if not row["answerable"]:
                continue
            ranked = sorted(row["sentences"], key=lambda s: -rule(s))[:picks]
            # token recall of the joined picks = best-covered share is not additive; use the max as a
            # lower bound and the union as the answer the reader gets
            values.append(max((s["recall"] or 0.0 for s in ranked), default=0.0))
        out[name] = round(sum(values) / len(values), 3) if values else None
    return out


def confidence(row: dict, key: str = "best") -> float:
    """The question-level confidence: the best sentence's hybrid score, or the probe's P(yes)."""
    if key == "p_yes":
        return row.get("p_yes", 0.0)
    return max((RULES["hybrid"](s) for s in row["sentences"]), default=0.0)


def sweep(rows: list[dict], key: str = "best") -> list[dict]:
    """False abstention and abstention on unanswerable for every threshold 0.00 … 1.00."""
    ans = [confidence(r, key) for r in rows if r["answerable"]]
    una = [confidence(r, key) for r in rows if not r["answerable"]]
    table = []
    for step in range(0, 101):
        t = step / 100
        table.append({
            "threshold": t,
            "false_abstention": round(sum(c < t for c in ans) / len(ans), 3) if ans else None,
            "abstain_unanswerable": round(sum(c < t for c in una) / len(una), 3) if una else None,
        })
    return table


def operating_points(table: list[dict]) -> dict[str, dict]:
    out = {}
    meets = [r for r in table if (r["abstain_unanswerable"] or 0) >= 0.75]
    if meets:
        out["abstain ≥ 0.75 of unanswerable"] = min(meets, key=lambda r: (r["false_abstention"] or 0, -r["threshold"]))
    keeps = [r for r in table if (r["false_abstention"] or 0) <= 0.10]
    if keeps:
        out["false abstention ≤ 0.10"] = max(keeps, key=lambda r: (r["abstain_unanswerable"] or 0, r["threshold"]))
    balanced = min(table, key=lambda r: (r["false_abstention"] or 0) + (1 - (r["abstain_unanswerable"] or 0)))
    out["least FA + missed abstentions"] = balanced
    return out


def auc(rows: list[dict], key: str = "best") -> float | None:
    """Probability that an answerable question's confidence beats an unanswerable one's."""
    return roc_auc((r["answerable"], confidence(r, key)) for r in rows)


def checked(rows: list[dict], min_score: float) -> dict:
    """The default abstention (no sentence at ``min_score``) with and without the answerability
    check (:mod:`spr.answerable`): false abstention, the false abstentions on questions whose
    evidence held the answer (a sentence with token recall ≥ 0.5 against the reference; the others
    could only quote a neighbour), abstention on unanswerable questions, and how often each of the
    check's reasons decided."""
    out: dict = {}
    reasons: dict[str, dict[str, int]] = {}
    for name, use_check in (("score only", False), ("score + check", True)):
        fa = ua = n_ans = n_una = fa_held = n_held = 0
        for row in rows:
            held = row["answerable"] and max((s["recall"] or 0.0 for s in row["sentences"]), default=0.0) >= 0.5
            kept = [s for s in row["sentences"] if RULES["hybrid"](s) >= min_score]
            abstain = not kept
            if not abstain and use_check:
                found = [  # as ExtractiveGenerator: the value may be in any sentence of a passage
                    answerable.Passage(tuple(texts), tuple(s["text"] for s in row["sentences"] if str(s["cid"]) == str(cid)))
                    for cid, texts in row["passages"].items()
                ]
                verdict = answerable.check(row["question"], found)
                abstain = not verdict.answerable
                if abstain:
                    key = "premise" if verdict.missing else f"no {verdict.asked}"
                    side = "answerable" if row["answerable"] else "unanswerable"
                    reasons.setdefault(key, {"answerable": 0, "unanswerable": 0})[side] += 1
            if row["answerable"]:
                n_ans += 1
                fa += abstain
                n_held += held
                fa_held += held and abstain
            else:
                n_una += 1
                ua += abstain
        out[name] = {
            "false_abstention": round(fa / n_ans, 3) if n_ans else None,
            "false_abstention_evidence_held": f"{fa_held}/{n_held}",
            "abstain_unanswerable": round(ua / n_una, 3) if n_una else None,
        }
    out["check abstained, by reason"] = reasons
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", action="append", required=True, help="squad2, policyqa, dev-eu, dev-necp, dev-de (repeatable)")
    ap.add_argument("--embed", default=Config().embed.model)
    ap.add_argument("--embed-dtype", default=Config().embed.dtype, choices=("float32", "bfloat16", "auto"),
                    help="[embed] dtype (float32 reuses the KBs built before bfloat16 was the default)")
    ap.add_argument("--mode", default=Config().answer.mode)
    ap.add_argument("--k", type=int, default=Config().answer.k)
    ap.add_argument("--limit", type=int, default=None, help="seeded sample of a public set's questions")
    ap.add_argument("--picks", type=int, default=Config().answer.max_sentences)
    ap.add_argument("--probe", type=int, default=0, help="also ask the [llm] model whether the best sentences answer, first N questions per set")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--dump", type=Path, default=None, help="write every record (questions, sentences, evidence) as JSON lines")
    ap.add_argument("--from-dump", type=Path, default=None, help="score the records of an earlier --dump (no KB, no retrieval)")
    ap.add_argument("--min-score", type=float, default=Config().answer.min_score)
    args = ap.parse_args()
    if args.from_dump:
        dumped: dict[str, list[dict]] = {}
        for line in args.from_dump.read_text().splitlines():
            row = json.loads(line)
            if row["set"] in args.set:
                dumped.setdefault(row["set"], []).append(row)
        for name, rows in dumped.items():
            print(name, json.dumps(checked(rows, args.min_score), ensure_ascii=False))
        return 0


    config = Config()
    config = config.model_copy(update={"embed": config.embed.model_copy(update={"model": args.embed, "dtype": args.embed_dtype})})
    cache = user_cache_dir() / f"retrieval-{Path(args.embed).name}"
    report: dict = {"mode": args.mode, "k": args.k, "embed": args.embed, "sets": {}}
    pooled: list[dict] = []
    for name in args.set:
        dataset = load(name, default_data_dir(), args.limit if name not in DEV_SETS else None)
        kb_config, note = prepare_kb(dataset, config, cache, ingest_summary, reindex=reindex_summary)
        print(name, note, flush=True)
        with KnowledgeBase.open(kb_config) as kb:
            rows = records(kb, dataset, args.mode, args.k, args.probe)
        if args.probe:  # the probe's own figures, on the probed questions only
            probed = [r for r in rows if "p_yes" in r]
            probe_report = {"questions": len(probed), "auc": auc(probed, "p_yes"), "operating_points": operating_points(sweep(probed, "p_yes")),
                            "probe_ms_p50": sorted(r["probe_ms"] for r in probed)[len(probed) // 2] if probed else None,
                            "auc_best_sentence_same_questions": auc(probed)}
            print("probe", json.dumps(probe_report, indent=1, ensure_ascii=False), flush=True)
        pooled += rows
        if args.dump:
            args.dump.parent.mkdir(parents=True, exist_ok=True)
            with args.dump.open("a") as out:
                out.writelines(json.dumps({"set": name, **r}, ensure_ascii=False) + "\n" for r in rows)
        table = sweep(rows)
        score_ms = sorted(r["score_ms"] for r in rows)
        report["sets"][name] = {
            "questions": len(rows),
            "unanswerable": sum(not r["answerable"] for r in rows),
            "selection_token_recall": selection(rows, args.picks),
            "auc": auc(rows),
            "answerability_check": checked(rows, args.min_score),
            "operating_points": operating_points(table),
            "sentence_scoring_ms_p50": round(score_ms[len(score_ms) // 2], 1) if score_ms else None,
            "sweep": table,
        }
        if args.probe:
            report["sets"][name]["llm_probe"] = probe_report
        summary = {k: v for k, v in report["sets"][name].items() if k != "sweep"}
        print(json.dumps(summary, indent=1, ensure_ascii=False), flush=True)
    report["pooled"] = {"auc": auc(pooled), "operating_points": operating_points(sweep(pooled)), "selection_token_recall": selection(pooled, args.picks)}
    print("pooled", json.dumps(report["pooled"], indent=1, ensure_ascii=False))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({**report, "records": None}, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
