"""Other ways for the model's check to read an answer, against the product's prompt (stops 59, 60).

``evidence``: an LLM answer's check asked over the reply's own prompt — its system prompt, the
numbered evidence and the question, with a yes/no line where the answer cue stands — so that the
reply, read next, shares all of it and reads only its last line. Scored beside the product's check
(:func:`spr.model_check.check_prompt` over the extractive quote) on the same questions, in the same
run, with each call's time and the reply's after it:

    .venv/bin/python bench/study_check_prompts.py evidence --set dev-eu --embed all-MiniLM-L6-v2 --json runs/ev-dev-eu.json
    .venv/bin/python bench/study_check_prompts.py evidence --set squad2 --limit 80 --embed all-MiniLM-L6-v2 --json runs/ev-squad2.json

``examples``: the product's prompt after six invented worked examples (three yes, three no: a
role swapped, a fact not stated, a detail changed), a fixed head llama.cpp keeps from one call to
the next. Scored over ``--model-check off`` runs of bench/eval_answers.py (as
bench/calibrate_model_check.py reads them; replies cached in the same SQLite file), then AUC and
replays at each threshold for the product's prompt and this one:

    .venv/bin/python bench/study_check_prompts.py examples runs/*.json --squad-sample 160

``extract`` (stop 60): not a yes/no question but the task itself — copy the answer from the text, or
reply "no answer" — read by the first token: 1 − P(no), the no-answer reply's first word. Same runs
and replays as ``examples`` (these calls are not cached):

    .venv/bin/python bench/study_check_prompts.py extract runs/squad2.json runs/dev-eu.json runs/probe-eu.json --squad-sample 80
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.cache import user_cache_dir  # noqa: E402
from core.config import Config, load_config  # noqa: E402
from core.llm import make_llm  # noqa: E402
from spr.eval.calibration import auc, checked, replay, score_rows  # noqa: E402
from spr.llm_answer import build_messages  # noqa: E402
from spr.model_check import PROMPT, check_prompt, reads  # noqa: E402

EVIDENCE_CHECK = (
    "Question: {question}\nDoes the evidence contain the answer to the question? If the question asks about something "
    "the evidence does not say, or its details differ from the evidence, answer no. Answer yes or no."
)

_BROADBAND = "The programme funds up to 60 % of the eligible costs of connecting households in areas without a 30 Mbit/s service."
_HARBOUR = "Operators of port reception facilities shall keep a record of every delivery of ship-generated waste for at least three years."
_HEATING = "Landlords must replace oil boilers older than 30 years by 1 January 2030."
EXAMPLES = (  # invented: no set's text or question
    (
        _HARBOUR,
        "Harbour Waste Ordinance Article 4",
        "How long must port reception facilities keep their delivery records?",
        "yes",
    ),
    (_HARBOUR, "Harbour Waste Ordinance Article 4", "How long must ships keep records of the waste they deliver?", "no"),
    (
        _BROADBAND,
        "Rural Broadband Programme Section 2",
        "What share of the eligible costs can the broadband programme cover?",
        "yes",
    ),
    (_BROADBAND, "Rural Broadband Programme Section 2", "When does the broadband programme end?", "no"),
    (
        _BROADBAND,
        "Rural Broadband Programme Section 2",
        "What share of the costs does the programme fund in areas without a 100 Mbit/s service?",
        "no",
    ),
    (_HEATING, "Clean Heating Act § 7", "By when do landlords have to replace old oil boilers?", "yes"),
)


EXTRACT = (  # in place of the product prompt's instruction and its last line
    "Answer the question from the text. Copy the answer from the text, as short as possible. If the text does not "
    "answer the question, or the question's details differ from the text, reply: no answer.\n"
)


def extract_prompt(question: str, quote: str, titles) -> str:
    """The product's prompt (:func:`check_prompt`: the same quote, cut and cleaned the same way)
    with the extraction task in place of the yes/no question."""
    head = PROMPT[: PROMPT.index("Text{source}")]
    return EXTRACT + check_prompt(question, quote, titles)[len(head) :].removesuffix("\nAnswer yes or no.")


def answer_share(llm, prompt: str) -> float:
    """1 − P(the reply's first token is "no"): how likely the model copies an answer rather than
    saying there is none. Read from the first token's distribution, as yes/no is (private API: a study)."""
    logprobs, _ = llm._first_token_logprobs(llm._request(prompt, None, 1, 0.0, None))
    return 1.0 - sum(math.exp(v) for k, v in logprobs.items() if k.strip().lower() == "no")


def evidence_messages(question: str, context) -> list[dict[str, str]]:
    """The reply's messages with the yes/no line in place of the answer cue (all before it shared)."""
    messages = build_messages(question, context)
    head, sep, _ = messages[1]["content"].rpartition("\nQuestion: ")
    assert sep, "the reply's prompt has no question line"
    messages[1] = {"role": "user", "content": f"{head}\n{EVIDENCE_CHECK.format(question=question)}"}
    return messages


def example_messages(question: str, quote: str, titles) -> list[dict[str, str]]:
    messages: list[dict[str, str]] = []
    for text, title, asked, reply in EXAMPLES:
        messages += [{"role": "user", "content": check_prompt(asked, text, [title])}, {"role": "assistant", "content": reply}]
    return messages + [{"role": "user", "content": check_prompt(question, quote, titles)}]


def study_evidence(args: argparse.Namespace) -> dict:
    from bench.eval_retrieval import load
    from kgpipeline.pipeline import ingest_summary, reindex_summary
    from spr.eval.datasets import default_data_dir
    from spr.eval.runner import prepare_kb
    from spr.qa import KnowledgeBase

    dataset = load(args.set, default_data_dir(), None)
    config = Config()
    config = config.model_copy(
        update={
            "embed": config.embed.model_copy(update={"model": args.embed}),
            "llm": config.llm.model_copy(update={"cache": False}),
        }
    )  # real calls: the times are read
    kb_config, _ = prepare_kb(
        dataset, config, user_cache_dir() / f"retrieval-{Path(args.embed).name}", ingest_summary, reindex=reindex_summary
    )
    questions = list(dataset.questions)
    if args.limit:
        random.Random(7).shuffle(questions)
    rows: dict[str, dict] = {}
    with KnowledgeBase.open(kb_config) as kb:
        llm = kb.llm
        llm.complete("Say OK.", max_tokens=1)
        for q in questions:
            if args.limit and len(rows) >= args.limit:
                break
            run = kb._prepare(q.question, None, "llm", None)  # the LLM answer's evidence, as ask() builds it
            if not run.checked or (run.verdict is not None and not run.verdict.answerable):
                continue  # the rules decline it: no model call either way
            quoted = kb._extractive(run).generate(run.question, run.context)
            if quoted.abstained or not reads(run.question, quoted.text):
                continue
            t0 = time.perf_counter()
            p_quote = llm.yes_probability(
                check_prompt(run.question, quoted.text, [c.title for c in quoted.citations]), max_tokens=1
            )
            t1 = time.perf_counter()
            p_evidence = llm.yes_probability(evidence_messages(run.question, run.context), max_tokens=1)
            t2 = time.perf_counter()
            llm.complete(build_messages(run.question, run.context), max_tokens=1)
            t3 = time.perf_counter()
            rows[q.id] = {
                "answerable": q.answerable,
                "p_quote": p_quote,
                "p_evidence": p_evidence,
                "s_quote": t1 - t0,
                "s_evidence": t2 - t1,
                "s_reply_after": t3 - t2,
            }
            print(
                q.id,
                "A" if q.answerable else "U",
                f"quote {p_quote:.2f} evidence {p_evidence:.2f}  {t1 - t0:.1f} s {t2 - t1:.1f} s {t3 - t2:.1f} s",
                flush=True,
            )
    pairs = lambda key: [(r["answerable"], r[key]) for r in rows.values()]  # noqa: E731
    median = lambda key: statistics.median(r[key] for r in rows.values()) if rows else None  # noqa: E731
    summary = {
        "set": args.set,
        "read": len(rows),
        "answerable": sum(r["answerable"] for r in rows.values()),
        "auc_quote": auc(pairs("p_quote")),
        "auc_evidence": auc(pairs("p_evidence")),
        "p50_s": {k: median(k) for k in ("s_quote", "s_evidence", "s_reply_after")},
    }
    print(json.dumps(summary, indent=1))
    return {"summary": summary, "rows": rows}


def study_replays(args: argparse.Namespace) -> dict:
    """``examples`` or ``extract`` (``args.study``): the product's P(yes) and the variant's score of
    every answer read, then AUC and replays of both."""
    config = load_config(args.config)
    llm = make_llm(config.llm.model_copy(update={"cache": True}), user_cache_dir() / "bench" / "model-check.sqlite")
    out: dict = {}
    variant = args.study
    if variant == "examples":
        score = lambda r, titles: llm.yes_probability(example_messages(r["question"], r["text"], titles), max_tokens=1)  # noqa: E731
    else:
        score = lambda r, titles: answer_share(llm, extract_prompt(r["question"], r["text"], titles))  # noqa: E731
    pooled: dict[str, list[tuple[bool, float]]] = {"product": [], variant: []}  # every set but SQuAD 2.0
    for path in args.runs:
        run = json.loads(Path(path).read_text())
        name, all_rows = run["set"], run["kinds"]["extractive"]["rows"]
        rows = [r for r in all_rows if checked(r)]
        if name == "squad2" and args.squad_sample:
            random.Random(7).shuffle(rows)
            rows = rows[: args.squad_sample]
            sample = {str(r["id"]) for r in rows}
            all_rows = [r for r in all_rows if str(r["id"]) in sample]  # replays over the sample's questions only
        scores = {"product": score_rows(llm, rows), variant: {}}
        for r in rows:
            titles = [c["title"] for c in r.get("citations") or ()]
            scores[variant][str(r["id"])] = score(r, titles)
        labels = {str(r["id"]): bool(r["answerable"]) for r in rows}
        result = {"read": len(rows)}
        for prompt, by_id in scores.items():
            result[f"auc_{prompt}"] = auc([(labels[i], p) for i, p in by_id.items()])
            pooled[prompt] += [(labels[i], p) for i, p in by_id.items()] if name != "squad2" else []
            result[f"replay_{prompt}"] = {str(t): asdict(replay(all_rows, by_id, t)) for t in args.thresholds}
        out[name] = result
        print(name, json.dumps({k: v for k, v in result.items() if k.startswith(("read", "auc"))}), flush=True)
    out["pooled"] = {f"auc_{prompt}": auc(pairs) for prompt, pairs in pooled.items()} | {"read": len(pooled["product"])}
    print("the other sets pooled", json.dumps(out["pooled"]))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="study", required=True)
    ev = sub.add_parser("evidence", help="the LLM answer's check over the reply's own prompt")
    ev.add_argument("--set", required=True)
    ev.add_argument("--embed", default=Config().embed.model)
    ev.add_argument("--limit", type=int, default=0, help="questions read (a seeded shuffle first)")
    ev.add_argument("--json", type=Path, default=None)
    for name, help_ in (
        ("examples", "the product's prompt after six worked examples"),
        ("extract", "the answer copied from the quote, or 'no answer'"),
    ):
        ex = sub.add_parser(name, help=help_)
        ex.add_argument("runs", nargs="+", type=Path, help="bench/eval_answers.py --model-check off --json outputs")
        ex.add_argument(
            "--config", type=Path, default=None, help="a policykb.toml whose [llm] reads (default: the embedded model)"
        )
        ex.add_argument("--squad-sample", type=int, default=160, help="SQuAD 2.0 answers read (a seeded sample; 0 = all)")
        ex.add_argument("--thresholds", type=float, nargs="+", default=[0.4, 0.5, 0.55, 0.6, 0.65, 0.7])
        ex.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    report = study_evidence(args) if args.study == "evidence" else study_replays(args)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
